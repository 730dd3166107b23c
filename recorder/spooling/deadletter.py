"""Records the destination will never accept: kept in a dead-letter file, replaced by a marker.

A record Kafka rejects for a reason retrying cannot change (too large for the topic's
``max.message.bytes``, a topic the recorder may not write, an invalid record) would otherwise
be retried forever and block everything behind it. It goes instead to ``dead-letter.jsonl``
beside the spool — one JSON line with its topic, reason, identity and the whole record in
the spool's framing (base64), already redacted — and a GAP marker with cause
``dead_lettered`` and the record's own seq takes its place in the topic, so a replay shows a
``dead_lettered`` unseen stretch rather than a sequence hole, and recording continues.
"""

from __future__ import annotations

import base64
import logging
import os
from typing import Callable

import orjson

from schemas import codec
from schemas.codec import Record
from schemas.records import marker_record
from transports.sink import Rejection

log = logging.getLogger(__name__)

FILE_NAME = "dead-letter.jsonl"
CAUSE = "dead_lettered"


class DeadLetters:
    """Appends rejected records to ``<directory>/dead-letter.jsonl`` (fsynced)."""

    def __init__(self, directory: str, *, on_dead_letter: Callable[[str], None] = lambda t: None
                 ) -> None:
        self.path = os.path.join(directory, FILE_NAME)
        self._on_dead_letter = on_dead_letter

    def keep(self, rejection: Rejection) -> Record:
        """Store the rejected record; returns the marker to send in its place."""
        record = rejection.record
        line = orjson.dumps({
            "topic": rejection.topic, "reason": rejection.reason,
            "session": record["session"], "seq": record["seq"], "type": record["type"],
            "kind": record.get("kind"), "namespace": record.get("namespace"),
            "name": record.get("name"), "uid": record.get("uid"),
            "resourceVersion": record.get("resourceVersion"),
            "record": base64.b64encode(codec.frame(codec.encode(record))).decode(),
        }) + b"\n"
        with open(self.path, "ab") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        log.warning("%s: %s %s/%s seq %d rejected (%s); kept in %s, a dead_lettered marker "
                    "takes its place", rejection.topic, record.get("kind"),
                    record.get("namespace") or "", record.get("name"), record["seq"],
                    rejection.reason, self.path)
        self._on_dead_letter(rejection.topic)
        return placeholder(rejection, self.path)


def placeholder(rejection: Rejection, path: str) -> Record:
    """The GAP marker that stands for a dead-lettered record: same session, topic and seq."""
    r = rejection.record
    what = f"{r.get('kind')} {r.get('namespace') or ''}/{r.get('name')} {r['type']}"
    return marker_record(
        cluster=r["cluster"], session=r["session"], seq=r["seq"], event_type="GAP",
        resource=r["resource"], api_version=r["apiVersion"], kind=r["kind"],
        received_at=r["receivedAt"], marker={
            "cause": CAUSE,
            "detail": f"{what} (resourceVersion {r.get('resourceVersion')}) rejected by the "
                      f"destination: {rejection.reason}; the record is in {path}",
            "fromResourceVersion": r.get("resourceVersion"),
            "toResourceVersion": r.get("resourceVersion"),
            "fromTime": r["receivedAt"], "toTime": r["receivedAt"]})
