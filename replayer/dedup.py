"""What a load has already seen: the versions of each object and the recorder's markers, so
a record read twice (a re-run, an overlapping shard, a list that repeats a watch event) is
loaded once and the second read is reported as a duplicate.

The versions live in three places while a load runs: the database (committed batches), the
batches handed to the writer and not yet committed (``in_flight``), and the batch being
taken. A batch's keys leave ``in_flight`` only once committed, so no version falls between
two looks.
"""

from __future__ import annotations

from collections import deque

import duckdb

from schemas.envelope import Envelope

#: Records of one object at one resourceVersion that hold the same version: a watch event
#: and a list (or relist) of another session that overlapped it (shards, a rolling update
#: of the recorder) are one version, loaded once — the first read wins.
SAME_VERSION = {"ADDED": "version", "MODIFIED": "version", "LISTED": "version"}

VersionKey = tuple[str, str | None, str]  # uid, resourceVersion, version_class


def version_class(event_type: str) -> str:
    """What a duplicate is judged by: (uid, resourceVersion, this)."""
    return SAME_VERSION.get(event_type, event_type)


class StoredVersions:
    """The versions the database holds of a run's objects, read by one query when the
    first is asked about, with the batches in flight at that moment (a query per record
    scanned raw_events each time: hours for a recording that repeats another's versions)."""

    def __init__(self, lookup: duckdb.DuckDBPyConnection, in_flight: deque[set[VersionKey]],
                 uids: list[str]) -> None:
        self._lookup, self._in_flight, self._uids = lookup, in_flight, uids
        self._keys: set[VersionKey] | None = None
        self._flying: list[set[VersionKey]] = []

    def holds(self, key: VersionKey) -> bool:
        if self._keys is None:
            # the batches in flight before the read: one committed meanwhile is in either
            self._flying = list(self._in_flight)
            self._keys = {(uid, rv, version_class(t)) for uid, rv, t in self._lookup.execute(
                "SELECT uid, resource_version, type FROM raw_events "
                "WHERE uid IN (SELECT unnest(?::VARCHAR[]))", [sorted(set(self._uids))]
            ).fetchall()}
        return key in self._keys or any(key in keys for keys in self._flying)


class Seen:
    """The versions and markers a load has seen, from the database it loads into on."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        #: uid → (highest resourceVersion loaded, the version classes loaded at it)
        self.latest = _latest_versions(con)
        self.markers = {tuple(r) for r in con.execute(
            "SELECT r.session, r.resource, r.seq, r.type FROM markers "
            "JOIN raw_events r USING (event_id)").fetchall()}
        #: The keys of the batches handed to the writer and not yet committed.
        self.in_flight: deque[set[VersionKey]] = deque()
        #: The keys of the batch being taken.
        self.batch: set[VersionKey] = set()

    def stored(self, lookup: duckdb.DuckDBPyConnection,
               envelopes: list[Envelope]) -> StoredVersions:
        """The stored versions of these envelopes' objects, read when first asked."""
        return StoredVersions(lookup, self.in_flight, [e.uid for e in envelopes if e.uid])

    def marker_again(self, e: Envelope) -> bool:
        """Whether this marker was seen before (else it is remembered)."""
        key = (e.session, e.resource, e.seq, e.type)
        if key in self.markers:
            return True
        self.markers.add(key)
        return False

    def version_problem(self, e: Envelope, stored: StoredVersions) -> tuple[str, str] | None:
        """What is wrong with this version of its object (``duplicate``: not loaded;
        ``out_of_order``: loaded), None for nothing; a version loaded is remembered."""
        uid, rv, rv_text, rtype = e.uid, e.resource_version_number, e.resource_version, e.type
        latest_rv, types = self.latest.get(uid, (None, set()))
        version = version_class(rtype) if rv_text else rtype  # no resourceVersion: no version
        older = rv is not None and latest_rv is not None and rv < latest_rv
        unordered = rv is None and bool(rv_text)  # not a number: only equality, receive order
        key = (uid, rv_text, version)
        if (older or unordered) and (key in self.batch or stored.holds(key)):
            return "duplicate", f"{e.kind} {uid} rv {rv_text} {rtype}"
        verdict = None
        if older:
            verdict = "out_of_order", f"{e.kind} {uid} rv {rv_text} after {latest_rv}"
        elif unordered:
            pass
        elif rv_text and rv == latest_rv and version in types:
            # (a pasted capture without resourceVersion has no version to repeat: each of
            # its rows is a new state, as a watch row is)
            return "duplicate", f"{e.kind} {uid} rv {rv_text} {rtype}"
        elif latest_rv is None or rv > latest_rv:  # type: ignore[operator]
            self.latest[uid] = (rv, {version})
        else:
            types.add(version)
        self.batch.add(key)  # older versions are checked against these
        return verdict

    def hand_over(self) -> None:
        """The batch being taken goes to the writer: its keys are in flight."""
        self.in_flight.append(self.batch)
        self.batch = set()

    def committed(self) -> None:
        """The oldest batch in flight is committed (its keys are in raw_events) or
        abandoned."""
        self.in_flight.popleft()


def _latest_versions(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[int | None, set[str]]]:
    """uid → (highest resourceVersion loaded, the event types loaded at it)."""
    rows = con.execute(
        "SELECT uid, rv, list(DISTINCT type) FROM ("
        "  SELECT uid, rv, type, max(rv) OVER (PARTITION BY uid) AS top FROM raw_events"
        "  WHERE uid IS NOT NULL) WHERE rv = top OR top IS NULL GROUP BY uid, rv").fetchall()
    return {uid: (rv, {version_class(t) for t in types}) for uid, rv, types in rows}
