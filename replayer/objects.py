"""The full object of a record: stored in raw_events, or fetched from its source.

By default a load keeps each object only in its source (storing every version's JSON was
the load's largest cost, docs/performance.md); raw_events keeps where it is — the
``sources`` row's locator and the record's (topic, partition, offset): a local-log position
is a segment, a block and the record's index in it (a seek and one block decompressed),
a Kafka position a fetch by offset. ``--store-objects all`` (and every kubectl import)
stores them, for a database that must stand on its own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

import duckdb
import orjson

from schemas.errors import KtraceError, TransportError
from transports.kafka.settings import KafkaSettings
from transports.locator import open_source
from transports.source import Source


class ObjectUnavailable(KtraceError):
    """The object is not stored and its source cannot give it any more."""


def object_json(con: duckdb.DuckDBPyConnection, event_id: int,
                kafka: KafkaSettings | None = None) -> bytes | None:
    """The object JSON of record ``event_id`` (None for a record without one: a marker, an
    inferred deletion, an oversized object the recorder dropped)."""
    return objects_of(con, [event_id], kafka).get(event_id)


def parsed(text: bytes | None) -> object:
    """An object's JSON as Python values (None: a record without an object, e.g. a marker)."""
    return orjson.loads(text) if text else None


def objects_of(con: duckdb.DuckDBPyConnection, event_ids: list[int],
               kafka: KafkaSettings | None = None) -> dict[int, bytes | None]:
    """event_id → object JSON of each of ``event_ids``, each source opened once. ``kafka``:
    how to reach the Kafka a recording came from (TLS, SASL, the registry, and a bootstrap
    that replaces the recorded one, e.g. a port-forward); else its recorded bootstrap with
    default settings."""
    rows = con.execute(
        "SELECT r.event_id, r.object, r.object_size, s.locator, r.topic, r.\"partition\", "
        "  r.\"offset\" FROM raw_events r LEFT JOIN sources s USING (source_id) "
        "WHERE r.event_id IN (SELECT unnest(?::BIGINT[]))", [event_ids]).fetchall()
    found: dict[int, bytes | None] = {}
    #: (locator, topic, partition) → offset → the record's event_id: fetched together
    positions: dict[tuple[str, str, int], dict[int, int]] = defaultdict(dict)
    for event_id, stored, size, locator, topic, partition, offset in rows:
        if stored is not None:
            found[event_id] = stored.encode()
        elif size and locator is not None:
            positions[(locator, topic, partition)][offset] = event_id
        else:
            found[event_id] = None
    fetcher = Fetcher(kafka)
    try:
        for (locator, topic, partition), at in positions.items():
            objects = fetcher.fetch(locator, topic, partition,
                                    {offset: f"record {event_id}" for offset, event_id in at.items()})
            found.update((at[offset], obj) for offset, obj in objects.items())
    finally:
        fetcher.close()
    return found


class Fetcher:
    """Fetches objects by position, each source opened once (many records, one source)."""

    def __init__(self, kafka: KafkaSettings | None = None) -> None:
        self._kafka = kafka
        self._opened: dict[str, Source | ObjectUnavailable] = {}

    def fetch(self, locator: str, topic: str, partition: int,
              wanted: Mapping[int, str]) -> dict[int, bytes | None]:
        """The objects at ``wanted``'s offsets of one partition of ``locator``, read together;
        each offset maps to what the record is (as an error names it)."""
        source = self._open(locator)
        if isinstance(source, ObjectUnavailable):
            raise source
        records = source.records_at(topic, partition, sorted(wanted))
        for offset, what in wanted.items():
            if records.get(offset) is None:
                raise ObjectUnavailable(
                    f"the object of {what} is not in the database and its source "
                    f"{locator} no longer holds {topic}/{partition}@{offset} (retention, or "
                    f"files moved): {_STORE_HINT}")
        return {offset: records[offset].get("object") for offset in wanted}

    def close(self) -> None:
        for source in self._opened.values():
            if not isinstance(source, ObjectUnavailable):
                source.close()

    def _open(self, locator: str) -> Source | ObjectUnavailable:
        if locator not in self._opened:
            try:
                self._opened[locator] = open_source(locator, self._kafka)
            except TransportError as exc:
                self._opened[locator] = ObjectUnavailable(
                    f"objects of {locator} are not in the database and the source is "
                    f"unavailable ({exc}): {_STORE_HINT}")
        return self._opened[locator]


_STORE_HINT = ("replay it again with --store-objects all where it is still whole, to keep "
               "objects in the database")
