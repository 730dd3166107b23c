"""Where records go: one topic per resource kind, keyed by object uid.

Keying by uid keeps one object's history in one partition, hence in order. Events are keyed
by the uid of the object they are about, so a pod's Events sit beside nothing else but stay
ordered among themselves. Markers are keyed by session so they stay in order too.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:  # the CLI reads DEFAULT_PREFIX without loading the Avro codec
    from schemas.codec import Record

DEFAULT_PREFIX = "ktrace"
_LEGAL = re.compile(r"[^a-zA-Z0-9._-]")


def topic_for(prefix: str, resource: str) -> str:
    """``<prefix>.<resource>``, e.g. ``ktrace.pods``; resource is the plural API resource."""
    return f"{prefix}.{_LEGAL.sub('-', resource)}"


def resource_of(prefix: str, topic: str) -> str | None:
    """The resource a topic holds, or None when the topic is not one of this prefix's."""
    head = f"{prefix}."
    return topic[len(head):] if topic.startswith(head) else None


class _Reference(msgspec.Struct):
    uid: str | None = None


class _EventAbout(msgspec.Struct):
    """What a core/v1 or events.k8s.io/v1 Event is about."""
    regarding: _Reference | None = None
    involvedObject: _Reference | None = None


_EVENT_ABOUT = msgspec.json.Decoder(_EventAbout)


def regarding_uid(object_json: bytes) -> str | None:
    try:
        about = _EVENT_ABOUT.decode(object_json)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    for ref in (about.regarding, about.involvedObject):
        if ref is not None and ref.uid:
            return ref.uid
    return None


def key_for(record: Record) -> bytes:
    facts = record.get("facts")
    if isinstance(facts, tuple) and facts[0] == "io.ktrace.EventFacts" and facts[1].get("regardingUid"):
        return facts[1]["regardingUid"].encode()
    if facts is None:
        return object_key(record.get("kind"), record.get("object"), record.get("uid"),
                          record["session"])
    return (record.get("uid") or record["session"]).encode()


#: The resource whose records are keyed by another object's uid (an Event's, by what it is
#: about); every other topic's object records are keyed by their own uid.
KEYED_BY_ANOTHER = "events"


def keyed_by_own_uid(topic: str) -> bool:
    """Whether every object record of ``topic`` (``<prefix>.<resource>``) is keyed by its
    own uid, so that a topic's last message of a key is its object's last record."""
    return topic.rsplit(".", 1)[-1] != KEYED_BY_ANOTHER


def object_key(kind: str | None, object_json: bytes | None, uid: str | None,
               session: str) -> bytes:
    """The key of a record without typed facts: an Event's (``KEYED_BY_ANOTHER``) by what
    it is about."""
    if kind == "Event" and object_json:
        if about := regarding_uid(object_json):
            return about.encode()
    return (uid or session).encode()
