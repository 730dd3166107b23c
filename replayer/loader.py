"""Loads Deliveries into the replay database in batches, with the positions they came from.

Each batch's rows and the ``(topic, partition, offset)`` it reached are written in one DuckDB
transaction, so a killed load loses only its open batch and a re-run resumes exactly after
what was committed (the eventsourcing "tracking record" pattern). What cannot be loaded as it
came — byte ranges that could not be read (also kept in ``unreadable_ranges``, the source of
the ``damaged`` unseen stretches), decode errors, malformed JSON, duplicates, out-of-order versions — is counted and
written to ``load_problems``, never fatal and never a wrong row.

Reading, parsing and writing overlap: a reader thread decodes deliveries and takes them into
batches (Python, holding the GIL), a parser thread parses the next batch's objects on its
own cursor into a table of an in-memory database (DuckDB, which releases the GIL) while the
calling thread inserts the batch before it, so a load keeps two cores busy. Batches are
written one at a time, in the order they were taken.
"""

from __future__ import annotations

import queue
import threading
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Callable, Iterable

import duckdb
import pyarrow as pa

from replayer import db, projections, typed
from replayer.envelope import EnvelopeBatch
from transports.source import Delivery, DeliveryRun, PartitionKey
from schemas.codec import Record
from schemas.envelope import ROW_FIELDS, record_of
from schemas.errors import Unreadable
from schemas.records import MARKER_TYPES

OBJECT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED", "LISTED", "INFERRED_DELETED"})
#: Records of one object at one resourceVersion that hold the same version: a watch event
#: and a list (or relist) of another session that overlapped it (shards, a rolling update
#: of the recorder) are one version, loaded once — the first read wins.
SAME_VERSION = {"ADDED": "version", "MODIFIED": "version", "LISTED": "version"}


def version_class(event_type: str) -> str:
    """What a duplicate is judged by: (uid, resourceVersion, this)."""
    return SAME_VERSION.get(event_type, event_type)


_CLUSTER, _NAMESPACE, _TYPE, _KIND, _UID, _RV_TEXT, _RV = (ROW_FIELDS.index(f) for f in (
    "cluster", "namespace", "type", "kind", "uid", "resourceVersion", "resourceVersionNumber"))
#: Kinds the typed tables (sql/typed/) read; others are kept in raw_events only.
TYPED_KINDS = typed.kinds_named()


@dataclass
class LoadStats:
    deliveries: int = 0
    loaded: int = 0
    duplicates: int = 0
    problems: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)
    filtered: int = 0
    unreadable_bytes: int = 0
    #: ``topic/partition@offset: why`` of each record left for the next load to read again.
    waiting: list[str] = field(default_factory=list)

    def problem_count(self) -> int:
        return sum(self.problems.values())

    def copy(self) -> "LoadStats":
        return LoadStats(self.deliveries, self.loaded, self.duplicates, Counter(self.problems),
                         Counter(self.kinds), self.filtered, self.unreadable_bytes,
                         list(self.waiting))

    def add(self, other: "LoadStats") -> None:
        """Add another load's counts (a follower's catch-ups, each its own load)."""
        self.deliveries += other.deliveries
        self.loaded += other.loaded
        self.duplicates += other.duplicates
        self.filtered += other.filtered
        self.waiting += other.waiting
        self.problems.update(other.problems)
        self.kinds.update(other.kinds)


@dataclass(frozen=True)
class RecordFilter:
    """Which records a load keeps (the rest still advance the positions)."""

    namespace: str | None = None
    cluster: str | None = None

    def keeps(self, record: Record) -> bool:
        return self.keeps_values(record["cluster"], record.get("namespace"))

    def keeps_values(self, cluster: str, namespace: str | None) -> bool:
        if self.cluster is not None and cluster != self.cluster:
            return False
        return self.namespace is None or namespace is None or namespace == self.namespace

    def keeps_all(self) -> bool:
        return self.namespace is None and self.cluster is None

    def describe(self) -> str:
        return f"namespace={self.namespace or '*'} cluster={self.cluster or '*'}"


class SourceMismatch(db.DatabaseError):
    """A source resumed with another filter or object mode than it was first loaded with."""


def register_source(con: duckdb.DuckDBPyConnection, locator: str, keep: RecordFilter,
                    store_objects: bool) -> int:
    """The source_id of ``locator``, added on its first load; a resumed load must keep the
    filter and object mode it started with, or the database would have holes."""
    row = con.execute("SELECT source_id, load_filter, store_objects FROM sources "
                      "WHERE locator = ?", [locator]).fetchone()
    if row is None:
        source_id = _scalar(con, "SELECT coalesce(max(source_id), 0) + 1 FROM sources")
        con.execute("INSERT INTO sources VALUES (?, ?, ?, ?)",
                    [source_id, locator, keep.describe(), store_objects])
        return source_id
    source_id, previous, stored = row
    if previous != keep.describe():
        raise SourceMismatch(f"{locator} was loaded with {previous} into this database; load "
                             "it with the same -n/--cluster, or start over with --rebuild")
    if stored != store_objects:
        raise SourceMismatch(
            f"{locator} was loaded with --store-objects {store_mode(stored)}; load it with "
            "the same, or start over with --rebuild")
    return source_id


def store_mode(store_objects: bool) -> str:
    return "all" if store_objects else "none"


#: Records per batch: each batch's statements cost ~50 ms whatever its size (planning over
#: object_shape(), the touched-pods scope), 10,000 halve that per record of 5,000; the
#: batches in flight (taken, parsed, written) bound the memory held.
BATCH_SIZE = 10_000
#: Batches the reader may take ahead of the one being parsed, and parsed ahead of the one
#: being written.
READ_AHEAD = 1
PARSE_AHEAD = 1
_END = object()


class StoredVersions:
    """The versions the database holds of a run's objects, read by one query when the
    first is asked about, with the batches in flight at that moment (a query per record
    scanned raw_events each time: hours for a recording that repeats another's versions)."""

    def __init__(self, lookup: duckdb.DuckDBPyConnection, in_flight: deque[set[tuple]],
                 uids: list[str]) -> None:
        self._lookup, self._in_flight, self._uids = lookup, in_flight, uids
        self._keys: set[tuple] | None = None
        self._flying: list[set[tuple]] = []

    def holds(self, key: tuple) -> bool:
        if self._keys is None:
            # the batches in flight before the read: one committed meanwhile is in either
            self._flying = list(self._in_flight)
            self._keys = {(uid, rv, version_class(t)) for uid, rv, t in self._lookup.execute(
                "SELECT uid, resource_version, type FROM raw_events "
                "WHERE uid IN (SELECT unnest(?::VARCHAR[]))", [sorted(set(self._uids))]
            ).fetchall()}
        return key in self._keys or any(key in keys for keys in self._flying)


@dataclass
class TakenBatch:
    """One batch as the reader hands it to the writer: its rows, what could not be loaded,
    and the positions and counts it reaches."""

    envelope: pa.Table | None
    problem_rows: list[tuple]
    duplicate_seqs: list[tuple[str, str, int]]
    unreadable_rows: list[tuple]
    positions: dict[PartitionKey, int]
    stats: LoadStats  # the load's, as of this batch
    full: bool
    kinds: frozenset[str]  # of its records
    parsed: str | None = None  # the table its objects are parsed into (by the parser)


class Loader:
    """One load run from one source into an open database; create it, then call ``load``.
    ``locator`` names the source (see the ``sources`` table; default: ``source``);
    ``store_objects`` keeps every object's JSON in raw_events, else it is fetched from the
    source when asked for (replayer/objects.py)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, source: str, *,
                 locator: str | None = None, keep: RecordFilter = RecordFilter(),
                 store_objects: bool = False, batch_size: int = BATCH_SIZE) -> None:
        self.con, self.keep, self.batch_size = con, keep, batch_size
        self.store_objects = store_objects
        self.stats = LoadStats()
        self.source_id = register_source(con, locator or source, keep, store_objects)
        self.positions: dict[PartitionKey, int] = dict(
            ((t, p), o) for t, p, o in con.execute(
                "SELECT topic, \"partition\", \"offset\" FROM load_positions "
                "WHERE source_id = ?", [self.source_id]).fetchall())
        self.next_id = _scalar(con, "SELECT coalesce(max(event_id), 0) + 1 FROM raw_events")
        self.load_id = _scalar(con, "SELECT coalesce(max(load_id), 0) + 1 FROM loads")
        self.latest = _latest_versions(con)
        #: The keys of the batches handed to the writer and not yet committed.
        self.in_flight: deque[set[tuple]] = deque()
        self.malformed = 0  # counted by the writer, added to the stats when a load ends
        #: the stored versions of the run being taken (None outside a run)
        self.stored: StoredVersions | None = None
        self.markers_seen = {tuple(r) for r in con.execute(
            "SELECT r.session, r.resource, r.seq, r.type FROM markers "
            "JOIN raw_events r USING (event_id)").fetchall()}
        con.execute("INSERT INTO loads VALUES (?, ?, now()::TIMESTAMP, NULL, 0, 0, 0, 0)",
                    [self.load_id, source])
        self._reset_batch()

    def load(self, deliveries: Iterable[Delivery | DeliveryRun], *,
             on_batch: Callable[[LoadStats], None] | None = None) -> LoadStats:
        """Load ``deliveries`` in batches; everything taken is committed when it returns."""
        taken_q: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
        parsed_q: queue.Queue = queue.Queue(maxsize=PARSE_AHEAD)
        stop = threading.Event()
        typed.attach_stage(self.con)
        self.con.execute("SET VARIABLE ktrace_store_objects = ?", [self.store_objects])
        #: The reader's and the parser's own connections (one thread at a time uses one).
        self.lookup, parser_con = self.con.cursor(), self.con.cursor()
        threads = [
            threading.Thread(target=self._read, args=(deliveries, taken_q, stop),
                             name="ktrace-load-reader", daemon=True),
            threading.Thread(target=self._parse, args=(parser_con, taken_q, parsed_q, stop),
                             name="ktrace-load-parser", daemon=True)]
        for thread in threads:
            thread.start()
        try:
            while (taken := parsed_q.get()) is not _END:
                if isinstance(taken, BaseException):
                    raise taken
                self._write(taken)
                if on_batch and taken.full:
                    on_batch(taken.stats)
        finally:
            stop.set()
            leftovers = []
            for thread in threads:  # one blocked on a full queue sees stop
                while thread.is_alive():
                    leftovers += _drain(taken_q, parsed_q)
            for leftover in leftovers + _drain(taken_q, parsed_q):
                if isinstance(leftover, TakenBatch) and leftover.parsed:
                    self.con.execute(f"DROP TABLE IF EXISTS {leftover.parsed}")
            self.lookup.close()
            parser_con.close()
        if self.malformed:
            self.stats.problems["malformed_json"] = self.malformed
        self.project()
        if on_batch:
            on_batch(self.stats)
        return self.stats

    def finish(self) -> None:
        self.con.execute("UPDATE loads SET finished_at = now()::TIMESTAMP WHERE load_id = ?",
                         [self.load_id])

    def project(self) -> None:
        """Bring the materialized projections up to what is loaded, in one transaction (an
        interruption before it is caught up by the next open)."""
        if projections.current(self.con):
            return
        with db.checkpointing_commit(self.con):  # the refresh rewrites whole tables
            self.con.begin()
            try:
                projections.refresh(self.con)
                self.con.commit()
            except BaseException:
                self.con.rollback()
                raise

    # --- the reader thread -------------------------------------------------------------------

    def _read(self, deliveries: Iterable[Delivery | DeliveryRun], taken_q: queue.Queue,
              stop: threading.Event) -> None:
        try:
            for delivery in deliveries:
                if stop.is_set():
                    return
                if isinstance(delivery, DeliveryRun):
                    self._take_run(delivery)
                else:
                    self._take(delivery)
                if len(self.batch) >= self.batch_size and not _hand_over(
                        taken_q, self._detach(True), stop):
                    return
            if self._dirty and not _hand_over(taken_q, self._detach(False), stop):
                return
            _hand_over(taken_q, _END, stop)
        except BaseException as exc:  # the writer raises it, after the batches before it
            _hand_over(taken_q, exc, stop)

    # --- the parser thread -------------------------------------------------------------------

    def _parse(self, con: duckdb.DuckDBPyConnection, taken_q: queue.Queue,
               parsed_q: queue.Queue, stop: threading.Event) -> None:
        """Parse each taken batch's objects into a table of its own, in order; the reader's
        end or error is passed on as it came."""
        parsed = 0
        while not stop.is_set():
            try:
                taken = taken_q.get(timeout=0.1)
            except queue.Empty:
                continue
            if isinstance(taken, TakenBatch) and taken.envelope is not None:
                parsed += 1
                try:
                    table = f"{typed.STAGE}.parsed_{parsed}"
                    typed.parse_batch(con, taken.envelope, table)
                    taken.parsed = table
                except BaseException as exc:
                    taken = exc
            if not _hand_over(parsed_q, taken, stop) or not isinstance(taken, TakenBatch):
                return

    def _detach(self, full: bool) -> TakenBatch:
        """The open batch as the writer takes it; a new one is opened."""
        for kind, count in self.unknown_kinds.items():
            self.stats.problems["unknown_kind"] += count
            self.problem_rows.append((self.load_id, None, None, None, "unknown_kind",
                                      f"{kind}: {count} records loaded without typed facts"))
        taken = TakenBatch(self.batch.table() if len(self.batch) else None, self.problem_rows,
                           self.duplicate_seqs, self.unreadable_rows, dict(self.positions),
                           self.stats.copy(), full, frozenset(self.batch.kinds))
        self.in_flight.append(self.batch_keys)
        self._reset_batch()
        return taken

    # --- the writer (the calling thread) -------------------------------------------------------

    def _write(self, taken: TakenBatch) -> None:
        """Write one parsed batch, its problems and positions in one transaction."""
        try:
            if taken.parsed is not None:
                typed.use_batch(self.con, taken.envelope, taken.parsed)
            self.con.begin()
            try:
                if taken.parsed is not None:
                    self._insert_batch(taken)
                self._write_positions_and_problems(taken)
                self.con.commit()
            except BaseException:
                self.con.rollback()
                raise
        finally:
            if taken.parsed is not None:
                typed.release_batch(self.con, taken.parsed)
            self.in_flight.popleft()  # committed (its keys are in raw_events) or abandoned

    # --- one delivery ---------------------------------------------------------------------

    def _take(self, d: Delivery) -> None:
        key = (d.topic, d.partition)
        last = self.positions.get(key)
        if last is not None and d.offset <= last:
            self._problem(d, "out_of_order_offset", f"offset {d.offset} after {last}")
            return
        if getattr(d.error, "retryable", False):  # e.g. the schema registry was down
            self.stats.deliveries += 1
            self.stats.waiting.append(f"{d.where()}: {d.error}")
            self._problem(d, getattr(d.error, "problem", "decode_error"), str(d.error))
            return  # the position stays before it: the next load reads it again
        self.positions[key] = d.offset
        self._dirty = True
        self.stats.deliveries += 1
        if d.error is not None or d.record is None:
            if isinstance(d.error, Unreadable):
                self._unreadable(d, d.error)
            self._problem(d, getattr(d.error, "problem", "decode_error"),
                          str(d.error or "no record"))
        elif not self.keep.keeps(d.record):
            self.stats.filtered += 1
        else:
            self._take_record(d, d.record)

    def _take_run(self, run: DeliveryRun) -> None:
        """A run of envelope rows, taken as ``_take`` takes each record, in bulk: only a
        row with something to report becomes a Delivery."""
        key = (run.topic, run.partition)
        last = self.positions.get(key)
        if last is not None and run.offsets[0] <= last:
            for delivery in run.deliveries():  # out of order: as each record says
                self._take(delivery)
            return
        self.positions[key] = run.offsets[-1]
        self._dirty = True
        self.stats.deliveries += len(run.rows)
        keep_all, kinds = self.keep.keeps_all(), self.stats.kinds
        self.stored = StoredVersions(self.lookup, self.in_flight,
                                     [row[_UID] for row in run.rows if row[_UID]])
        kept: list[int] = []  # the rows taken since the last flush
        for i, row in enumerate(run.rows):
            if not (keep_all or self.keep.keeps_values(row[_CLUSTER], row[_NAMESPACE])):
                self.stats.filtered += 1
                continue
            rtype, kind, uid = row[_TYPE], row[_KIND], row[_UID]
            if rtype not in OBJECT_TYPES or not uid:  # a marker or no uid: as a Record
                self._flush_rows(run, kept)  # the rows before it go first
                kept = []
                record = record_of(row, run.data_of(i))
                self._take_record(Delivery(run.topic, run.partition, run.offsets[i], record),
                                  record)
                continue
            verdict = self._version_problem(uid, row[_RV], row[_RV_TEXT], kind, rtype)
            if verdict is not None and not self._report_version(Delivery(
                    run.topic, run.partition, run.offsets[i], record_of(row, run.data_of(i))),
                    *verdict):
                continue
            if kind not in TYPED_KINDS:
                self.unknown_kinds[kind or "(none)"] += 1
            kinds[kind or rtype] += 1
            kept.append(i)
        self._flush_rows(run, kept)
        self.stored = None

    def _flush_rows(self, run: DeliveryRun, kept: list[int]) -> None:
        """Add the rows ``kept`` of ``run`` (indices, in order) to the batch."""
        if not kept:
            return
        if len(kept) == len(run.rows):  # the whole run: most runs
            offsets, rows, data = run.offsets, run.rows, run.data
        else:
            offsets, rows = [run.offsets[i] for i in kept], [run.rows[i] for i in kept]
            data = [run.data[i] for i in kept] if isinstance(run.data, list) else run.data
        self.batch.add_rows(self.next_id, run.topic, run.partition, offsets, rows, data)
        self.next_id += len(rows)
        self.stats.loaded += len(rows)

    def _take_record(self, d: Delivery, r: Record) -> None:
        rtype = r.get("type")
        if rtype in MARKER_TYPES:
            key = (r["session"], r["resource"], r["seq"], rtype)
            if key in self.markers_seen:
                self._duplicate(d, f"marker {rtype} seq {r['seq']}")
                return
            self.markers_seen.add(key)
        elif rtype in OBJECT_TYPES:
            if not r.get("uid"):
                self._problem(d, "missing_uid", f"{rtype} {r.get('kind')} without uid")
                return
            if not self._check_version(d, r, rtype):
                return
            if r.get("kind") not in TYPED_KINDS:
                self.unknown_kinds[r.get("kind") or "(none)"] += 1
        else:
            self._problem(d, "unknown_type", f"event type {rtype!r}")
            return
        self._add(d, r)

    def _check_version(self, d: Delivery, r: Record, rtype: str) -> bool:
        """False (and counted) for a duplicate; counts, but keeps, an out-of-order version."""
        verdict = self._version_problem(r["uid"], r.get("resourceVersionNumber"),
                                        r.get("resourceVersion"), r.get("kind"), rtype)
        return verdict is None or self._report_version(d, *verdict)

    def _report_version(self, d: Delivery, problem: str, detail: str) -> bool:
        """Report a version's problem; whether the record is still loaded."""
        if problem == "duplicate":
            self._duplicate(d, detail)
            return False
        self._problem(d, problem, detail)
        return True

    def _version_problem(self, uid: str, rv: int | None, rv_text: str | None,
                         kind: str | None, rtype: str) -> tuple[str, str] | None:
        """What is wrong with this version of ``uid`` (``duplicate``: not loaded;
        ``out_of_order``: loaded), None for nothing; a version loaded is remembered."""
        latest_rv, types = self.latest.get(uid, (None, set()))
        version = version_class(rtype) if rv_text else rtype  # no resourceVersion: no version
        older = rv is not None and latest_rv is not None and rv < latest_rv
        unordered = rv is None and bool(rv_text)  # not a number: only equality, receive order
        if (older or unordered) and self._seen_before(uid, rv_text, version):
            return "duplicate", f"{kind} {uid} rv {rv_text} {rtype}"
        verdict = None
        if older:
            verdict = "out_of_order", f"{kind} {uid} rv {rv_text} after {latest_rv}"
        elif unordered:
            pass
        elif rv_text and rv == latest_rv and version in types:
            # (a pasted capture without resourceVersion has no version to repeat: each of
            # its rows is a new state, as a watch row is)
            return "duplicate", f"{kind} {uid} rv {rv_text} {rtype}"
        elif latest_rv is None or rv > latest_rv:
            self.latest[uid] = (rv, {version})
        else:
            types.add(version)
        self.batch_keys.add((uid, rv_text, version))  # older versions are checked against these
        return verdict

    def _seen_before(self, uid: str, rv_text: str | None, version: str) -> bool:
        key = (uid, rv_text, version)
        if key in self.batch_keys:
            return True
        if self.stored is not None:  # in a run: its objects' stored versions, read once
            return self.stored.holds(key)
        # The batches not yet committed first, then the database: a batch leaves in_flight
        # only once committed, so no version falls between the two looks.
        if any(key in keys for keys in list(self.in_flight)):
            return True
        same = [t for t in OBJECT_TYPES if version_class(t) == version]
        return self.lookup.execute(
            "SELECT count(*) FROM raw_events WHERE uid = ? AND resource_version = ? "
            "AND list_contains(?, type)", [uid, rv_text, same]).fetchone()[0] > 0

    def _add(self, d: Delivery, r: Record) -> None:
        self.batch.add(self.next_id, d.topic, d.partition, d.offset, r)
        self.next_id += 1
        self.stats.loaded += 1
        self.stats.kinds[r.get("kind") or r.get("type")] += 1

    def _unreadable(self, d: Delivery, damage: Unreadable) -> None:
        if damage.problem == "unreadable":  # not retention's removals
            self.stats.unreadable_bytes += damage.nbytes or 0
        self.unreadable_rows.append((self.load_id, self.source_id, d.topic, d.partition,
                                     d.offset, damage.end_offset, damage.nbytes, damage.cause))

    def _duplicate(self, d: Delivery, detail: str) -> None:
        self.stats.duplicates += 1
        r = d.record or {}
        if r.get("session") is not None and r.get("seq") is not None:
            self.duplicate_seqs.append((r["session"], d.topic, r["seq"]))
        self._problem(d, "duplicate", detail, counted=False)

    def _problem(self, d: Delivery, problem: str, detail: str, *, counted: bool = True) -> None:
        if counted:
            self.stats.problems[problem] += 1
        self.problem_rows.append((self.load_id, d.topic, d.partition, d.offset, problem, detail))
        self._dirty = True

    # --- writing ----------------------------------------------------------------------------

    def _insert_batch(self, taken: TakenBatch) -> None:
        typed.insert_batch(self.con, taken.kinds)
        self._report_bad_json(taken)

    def _report_bad_json(self, taken: TakenBatch) -> None:
        bad = self.con.execute(
            "SELECT b.topic, b.\"partition\", b.\"offset\", b.kind, b.uid FROM batch b "
            "ANTI JOIN parsed p USING (event_id) WHERE b.object IS NOT NULL").fetchall()
        for topic, partition, offset, kind, uid in bad:
            self.malformed += 1
            taken.problem_rows.append((self.load_id, topic, partition, offset, "malformed_json",
                                       f"{kind} {uid}: object is not valid JSON (stored as NULL)"))

    def _write_positions_and_problems(self, taken: TakenBatch) -> None:
        if taken.positions:
            flat = [v for (t, p), o in taken.positions.items()
                    for v in (self.source_id, t, p, o)]
            self.con.execute("INSERT OR REPLACE INTO load_positions VALUES "
                             + ", ".join(["(?, ?, ?, ?)"] * len(taken.positions)), flat)
        _insert_rows(self.con, "load_problems", taken.problem_rows)
        _insert_rows(self.con, "duplicate_sequence", taken.duplicate_seqs)
        _insert_rows(self.con, "unreadable_ranges", taken.unreadable_rows)
        s = taken.stats
        self.con.execute(
            "UPDATE loads SET deliveries = ?, loaded = ?, duplicates = ?, problems = ? "
            "WHERE load_id = ?",
            [s.deliveries, s.loaded, s.duplicates, s.problem_count() + self.malformed,
             self.load_id])

    def _reset_batch(self) -> None:
        self._dirty = False
        self.batch = EnvelopeBatch(self.source_id)
        self.batch_keys: set[tuple] = set()
        self.problem_rows: list[tuple] = []
        self.duplicate_seqs: list[tuple[str, str, int]] = []
        self.unreadable_rows: list[tuple] = []
        self.unknown_kinds: Counter = Counter()


def _insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple]) -> None:
    """``rows`` appended to ``table`` (its columns in order) by one statement: executemany
    runs one INSERT per row, ~2 ms each — minutes for the duplicates of a recorder that
    listed everything again."""
    if not rows:
        return
    columns = [pa.array(column) for column in zip(*rows)]
    con.register("ktrace_rows", pa.Table.from_arrays(
        columns, names=[f"c{i}" for i in range(len(columns))]))
    try:
        con.execute(f"INSERT INTO {table} SELECT * FROM ktrace_rows")
    finally:
        con.unregister("ktrace_rows")


def _hand_over(q: queue.Queue, item: object, stop: threading.Event) -> bool:
    """Put ``item`` on ``q`` once it has room; False when the load stopped first."""
    while not stop.is_set():
        try:
            q.put(item, timeout=0.1)
            return True
        except queue.Full:
            pass
    return False


def _drain(*queues: queue.Queue) -> list[object]:
    """What ``queues`` hold, taken off them (a thread blocked on one then sees stop)."""
    items = []
    for q in queues:
        try:
            while True:
                items.append(q.get(timeout=0.02))
        except queue.Empty:
            pass
    return items


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    return con.execute(sql).fetchone()[0]


def _latest_versions(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[int | None, set[str]]]:
    """uid → (highest resourceVersion loaded, the event types loaded at it)."""
    rows = con.execute(
        "SELECT uid, rv, list(DISTINCT type) FROM ("
        "  SELECT uid, rv, type, max(rv) OVER (PARTITION BY uid) AS top FROM raw_events"
        "  WHERE uid IS NOT NULL) WHERE rv = top OR top IS NULL GROUP BY uid, rv").fetchall()
    return {uid: (rv, {version_class(t) for t in types}) for uid, rv, types in rows}

