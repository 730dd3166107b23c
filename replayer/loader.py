"""Loads Deliveries into the replay database in batches, with the positions they came from.

Each batch's rows and the ``(topic, partition, offset)`` it reached are written in one DuckDB
transaction, so a killed load loses only its open batch and a re-run resumes exactly after
what was committed (the eventsourcing "tracking record" pattern). What cannot be loaded as it
came — byte ranges that could not be read (also kept in ``unreadable_ranges``, the source of
the ``damaged`` unseen stretches), decode errors, malformed JSON, duplicates
(``replayer/dedup.py``), out-of-order versions — is counted and written to
``load_problems``, never fatal and never a wrong row.

Records are taken one way: as runs of envelopes (``DeliveryRun``); a lone record is a run
of one. Reading, parsing and writing overlap on three threads (``replayer/pipeline.py``).
"""

from __future__ import annotations

import itertools
import threading
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

import duckdb
import pyarrow as pa

from replayer import db, projections, typed
from replayer.dedup import Seen
from replayer.envelope import EnvelopeBatch
from replayer.pipeline import Pipeline
from replayer.record_filter import RecordFilter
from schemas.envelope import Envelope
from schemas.errors import Unreadable
from schemas.records import MARKER_TYPES, OBJECT_TYPES
from transports.source import Delivery, DeliveryRun, PartitionKey, Passed

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
        self.seen = Seen(con)
        self.scope = keep.scope(con)
        self.malformed = 0  # counted by the writer, added to the stats when a load ends
        con.execute("INSERT INTO loads VALUES (?, ?, now()::TIMESTAMP, NULL, 0, 0, 0, 0)",
                    [self.load_id, source])
        self._reset_batch()

    def reattach(self, con: duckdb.DuckDBPyConnection) -> bool:
        """Go on loading into ``con``, the same database opened again (a follower releases
        the file between catch-ups), keeping the positions, ids and versions seen instead of
        reading them again from the whole history; False when another load wrote meanwhile
        (then a new Loader must read them)."""
        if _scalar(con, "SELECT coalesce(max(event_id), 0) FROM raw_events") != self.next_id - 1:
            return False
        self.con = con
        return True

    def load(self, deliveries: Iterable[Delivery | DeliveryRun | Passed], *,
             on_batch: Callable[[LoadStats], None] | None = None) -> LoadStats:
        """Load ``deliveries`` in batches; everything taken is committed when it returns."""
        typed.attach_stage(self.con)
        self.con.execute("SET VARIABLE ktrace_store_objects = ?", [self.store_objects])
        #: The reader's and the parser's own connections (one thread at a time uses one).
        self.lookup, parser_con = self.con.cursor(), self.con.cursor()
        parsed = itertools.count(1)

        def parse(taken: TakenBatch) -> None:
            if taken.envelope is not None:
                table = f"{typed.STAGE}.parsed_{next(parsed)}"
                typed.parse_batch(parser_con, taken.envelope, table)
                taken.parsed = table

        def write(taken: TakenBatch) -> None:
            self._write(taken)
            if on_batch and taken.full:
                on_batch(taken.stats)

        try:
            Pipeline(lambda stop: self._batches(deliveries, stop), parse, write,
                     self._discard).run()
        finally:
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

    # --- taking deliveries into batches (the reader thread) ----------------------------------

    def _batches(self, deliveries: Iterable[Delivery | DeliveryRun | Passed],
                 stop: threading.Event) -> Iterator[TakenBatch]:
        for delivery in deliveries:
            if stop.is_set():
                return
            if isinstance(delivery, DeliveryRun):
                self._take_run(delivery)
            elif isinstance(delivery, Passed):
                self._take_passed(delivery)
            elif delivery.error is None and delivery.record is not None:
                self._take_run(DeliveryRun.of(delivery))  # a lone record: a run of one
            else:
                self._take_failure(delivery)
            if len(self.batch) >= self.batch_size:
                yield self._detach(True)
        if self._dirty:
            yield self._detach(False)

    def _take_run(self, run: DeliveryRun) -> None:
        """Records that follow one another in a partition, each filtered, judged (markers
        and versions seen before, objects without a uid, unknown types) and the rest added
        to the batch in order."""
        stale = self._stale(run.topic, run.partition, run.offsets)
        if stale == len(run.offsets):
            return
        self.positions[(run.topic, run.partition)] = run.offsets[-1]
        self._dirty = True
        self.stats.deliveries += len(run.offsets) - stale
        envelopes = run.envelopes[stale:] if stale else run.envelopes
        stored = self.seen.stored(self.lookup, envelopes)
        keep_all, kinds = self.keep.keeps_all(), self.stats.kinds
        kept: list[int] = []
        for i in range(stale, len(run.offsets)):
            e = run.envelopes[i]
            if not (keep_all or self.scope.keeps(e, run.data_of(i))):
                self.stats.filtered += 1
                continue
            if e.type in OBJECT_TYPES and e.uid:  # most records: judged here, inline
                verdict = self.seen.version_problem(e, stored)
                if verdict is not None and not self._reported(
                        e, run.topic, run.partition, run.offsets[i], *verdict):
                    continue
                if e.kind not in TYPED_KINDS:
                    self.unknown_kinds[e.kind or "(none)"] += 1
            elif not self._admits(e, run.topic, run.partition, run.offsets[i]):
                continue
            kinds[e.kind or e.type] += 1
            kept.append(i)
        self._add(run, kept)

    def _take_passed(self, passed: Passed) -> None:
        """Records the source passed by for the filter, undecoded: filtered out, and the
        position moves past them."""
        key = (passed.topic, passed.partition)
        last = self.positions.get(key)
        if last is not None and passed.through <= last:
            return
        self.positions[key] = passed.through
        self._dirty = True
        self.stats.deliveries += passed.count
        self.stats.filtered += passed.count

    def _stale(self, topic: str, partition: int, offsets: list[int]) -> int:
        """How many of ``offsets`` (ascending) are at or before the partition's position:
        each is reported, none taken."""
        last = self.positions.get((topic, partition))
        stale = 0 if last is None else bisect_right(offsets, last)
        for offset in offsets[:stale]:
            self._problem(topic, partition, offset, "out_of_order_offset",
                          f"offset {offset} after {last}")
        return stale

    def _admits(self, e: Envelope, topic: str, partition: int, offset: int) -> bool:
        """Whether the record of ``e`` — a marker, or anything but an object with a uid —
        is loaded; what keeps it out is reported."""
        if e.type in MARKER_TYPES:
            if self.seen.marker_again(e):
                self._duplicate(e, topic, partition, offset, f"marker {e.type} seq {e.seq}")
                return False
            return True
        if e.type in OBJECT_TYPES:
            self._problem(topic, partition, offset, "missing_uid",
                          f"{e.type} {e.kind} without uid")
        else:
            self._problem(topic, partition, offset, "unknown_type", f"event type {e.type!r}")
        return False

    def _reported(self, e: Envelope, topic: str, partition: int, offset: int, problem: str,
                  detail: str) -> bool:
        """Report a version's problem; whether the record is still loaded."""
        if problem == "duplicate":
            self._duplicate(e, topic, partition, offset, detail)
            return False
        self._problem(topic, partition, offset, problem, detail)
        return True

    def _add(self, run: DeliveryRun, kept: list[int]) -> None:
        """Add the records ``kept`` of ``run`` (indices, in order) to the batch."""
        if not kept:
            return
        if len(kept) == len(run.offsets):  # the whole run: most runs
            offsets, envelopes, data, markers = run.offsets, run.envelopes, run.data, run.markers
        else:
            offsets = [run.offsets[i] for i in kept]
            envelopes = [run.envelopes[i] for i in kept]
            data = [run.data[i] for i in kept] if isinstance(run.data, list) else run.data
            markers = {j: run.markers[i] for j, i in enumerate(kept) if i in run.markers}
        self.batch.add_run(self.next_id, run.topic, run.partition, offsets, envelopes, data,
                           markers)
        self.next_id += len(kept)
        self.stats.loaded += len(kept)

    def _take_failure(self, d: Delivery) -> None:
        """A delivery without a record: why is reported; a retryable one (e.g. the schema
        registry was down) keeps the position before it, so the next load reads it again."""
        if self._stale(d.topic, d.partition, [d.offset]):
            return
        self.stats.deliveries += 1
        problem = getattr(d.error, "problem", "decode_error")
        if getattr(d.error, "retryable", False):
            self.stats.waiting.append(f"{d.where()}: {d.error}")
            self._problem(d.topic, d.partition, d.offset, problem, str(d.error))
            return
        self.positions[(d.topic, d.partition)] = d.offset
        self._dirty = True
        if isinstance(d.error, Unreadable):
            self._unreadable(d, d.error)
        self._problem(d.topic, d.partition, d.offset, problem, str(d.error or "no record"))

    def _unreadable(self, d: Delivery, damage: Unreadable) -> None:
        if damage.problem == "unreadable":  # not retention's removals
            self.stats.unreadable_bytes += damage.nbytes or 0
        self.unreadable_rows.append((self.load_id, self.source_id, d.topic, d.partition,
                                     d.offset, damage.end_offset, damage.nbytes, damage.cause))

    def _duplicate(self, e: Envelope, topic: str, partition: int, offset: int,
                   detail: str) -> None:
        self.stats.duplicates += 1
        self.duplicate_seqs.append((e.session, topic, e.seq))
        self._problem(topic, partition, offset, "duplicate", detail, counted=False)

    def _problem(self, topic: str, partition: int, offset: int, problem: str, detail: str,
                 *, counted: bool = True) -> None:
        if counted:
            self.stats.problems[problem] += 1
        self.problem_rows.append((self.load_id, topic, partition, offset, problem, detail))
        self._dirty = True

    def _detach(self, full: bool) -> TakenBatch:
        """The open batch as the writer takes it; a new one is opened."""
        for kind, count in self.unknown_kinds.items():
            self.stats.problems["unknown_kind"] += count
            self.problem_rows.append((self.load_id, None, None, None, "unknown_kind",
                                      f"{kind}: {count} records loaded without typed facts"))
        taken = TakenBatch(self.batch.table() if len(self.batch) else None, self.problem_rows,
                           self.duplicate_seqs, self.unreadable_rows, dict(self.positions),
                           self.stats.copy(), full, frozenset(self.batch.kinds))
        self.seen.hand_over()
        self._reset_batch()
        return taken

    def _reset_batch(self) -> None:
        self._dirty = False
        self.batch = EnvelopeBatch(self.source_id)
        self.problem_rows: list[tuple] = []
        self.duplicate_seqs: list[tuple[str, str, int]] = []
        self.unreadable_rows: list[tuple] = []
        self.unknown_kinds: Counter = Counter()

    # --- writing (the calling thread) ---------------------------------------------------------

    def _write(self, taken: TakenBatch) -> None:
        """Write one parsed batch, its problems and positions in one transaction."""
        try:
            if taken.parsed is not None:
                typed.use_batch(self.con, taken.envelope, taken.parsed)
            self.con.begin()
            try:
                if taken.parsed is not None:
                    typed.insert_batch(self.con, taken.kinds)
                    self._report_bad_json(taken)
                self._write_positions_and_problems(taken)
                self.con.commit()
            except BaseException:
                self.con.rollback()
                raise
        finally:
            if taken.parsed is not None:
                typed.release_batch(self.con, taken.parsed)
            self.seen.committed()  # committed (its keys are in raw_events) or abandoned

    def _discard(self, taken: TakenBatch) -> None:
        """A batch parsed but never written: its parsed table goes."""
        if taken.parsed:
            self.con.execute(f"DROP TABLE IF EXISTS {taken.parsed}")

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


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    return con.execute(sql).fetchone()[0]
