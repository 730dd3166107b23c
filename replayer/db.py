"""The replay database: opening it safely and applying the schema and projections.

A ktrace database says so in ``ktrace_meta`` (application, schema version). Any other DuckDB
file — or a file that is not DuckDB at all — is refused rather than written into. Loaders
open it for writing (``open_db``), which creates or refreshes the schema (a new file starts
as a copy of the schema template, ``schema_template.py``); analyses open it
read-only (``open_readonly``), which writes nothing, so they work on a read-only file and
beside a follower that releases the file between catch-ups.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import time
from typing import Iterator

import duckdb

from replayer import projections, schema_template, typed
from schemas.errors import KtraceError

APPLICATION = "ktrace"
SQL_DIGEST_KEY = "sql_digest"
#: 2: typed tables derived in SQL from the object JSON (sql/typed/). 3: positions per
#: source (``sources``), objects fetched from the source unless stored. 4: object_versions
#: and endpoint_membership are tables maintained by each load, like the pod projections.
#: 5: unreadable_ranges name their source. 6: the typed tables hold messages trimmed
#: (clean_message) and the creators of objects first seen in a List (``creators``), which
#: records loaded before were never given.
SCHEMA_VERSION = 6
#: How long an analysis waits for a loader (``replay --follow``) to release the file, and a
#: loader for analyses to close it.
LOCK_WAIT_S = 30.0
#: How often an analysis waiting for the follower's turn to end looks again.
TURN_POLL_S = 0.01
#: How often a connection waiting for another process to release the file tries again (a
#: follower waiting for an analysis: part of its lag).
CONNECT_POLL_S = 0.02


class DatabaseError(KtraceError):
    """The database file cannot be used (another program's, too new, unreadable)."""


def open_db(path: str, *, rebuild: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed) a ktrace database for loading, and apply the schema and
    projections."""
    con = _connect_new(path)
    try:
        version = _check_ownership(con, path)
        if version is not None and version < SCHEMA_VERSION and not rebuild:
            raise DatabaseError(_older(path, version))
        if rebuild and version is not None:
            con.close()
            _remove(path)
            con = _connect_new(path)
            version = _check_ownership(con, path)
        if version is None or meta(con, SQL_DIGEST_KEY) != sql_digest():
            apply_sql(con)
        if not projections.current(con):  # a load was interrupted before its last step
            _refresh(con)
    except BaseException:
        con.close()
        raise
    return con


def open_readonly(path: str, *, lock_wait_s: float = LOCK_WAIT_S) -> duckdb.DuckDBPyConnection:
    """Open a ktrace database for analysis: read-only, nothing written. While a loader
    holds the file (a follower between catch-ups releases it), wait up to ``lock_wait_s``."""
    if not os.path.exists(path):
        raise DatabaseError(f"no database at {path}: load one with `ktrace replay` or "
                            "`ktrace import`")
    with _reader_turn(path, lock_wait_s):
        con = _connect(path, read_only=True, lock_wait_s=lock_wait_s)
    try:
        version = _check_ownership(con, path)
        if version is None:
            raise DatabaseError(f"{path} holds no ktrace data yet")
        if version < SCHEMA_VERSION:
            raise DatabaseError(_older(path, version))
        if meta(con, SQL_DIGEST_KEY) != sql_digest():
            raise DatabaseError(f"{path}'s projections were made by another ktrace: refresh "
                                f"them with `ktrace replay SOURCE --db {path}` (it loads only "
                                "what is new), or start over with --rebuild")
        if not projections.current(con):
            raise DatabaseError(f"{path}'s projections lag behind its records (a load was "
                                f"interrupted): run `ktrace replay SOURCE --db {path}` again")
    except BaseException:
        con.close()
        raise
    return con


@contextlib.contextmanager
def follower_turn(path: str) -> Iterator[None]:
    """The follower's turn at the file: analyses that have it open finish (the follower's
    connect waits for them), new ones wait until the turn ends — so a stream of analyses
    cannot keep a follower out, nor a follower an analysis longer than one catch-up.

    The turn is a ``flock`` on the database file itself (DuckDB's own lock is an ``fcntl``
    record lock, a separate lock on Linux): exclusive here, shared by an analysis only
    while it connects. Nothing to take before the file exists (no analysis can open it).
    The descriptor is closed only after the follower's connection: closing it drops the
    process's fcntl locks on the file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the turn


@contextlib.contextmanager
def _reader_turn(path: str, wait_s: float) -> Iterator[None]:
    """An analysis connects outside a follower's turn (``follower_turn``), waiting up to
    ``wait_s`` for one to end; it holds no turn once connected."""
    deadline = time.monotonic() + wait_s
    fd = _turn_fd(path)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise DatabaseError(f"{path} is held by a loader (replay --follow?) for more "
                                    f"than {wait_s:g} s") from None
            time.sleep(TURN_POLL_S)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


#: One descriptor per database file for the analyses' turns, kept open: closing any
#: descriptor of a file drops every fcntl lock the process holds on it — DuckDB's too,
#: while its connection reads on.
_turn_fds: dict[str, int] = {}


def _turn_fd(path: str) -> int:
    fd = _turn_fds.get(path)
    if fd is not None and os.fstat(fd).st_ino == os.stat(path).st_ino:
        return fd
    if fd is not None:  # the file was made again (--rebuild): the old one's is let go
        os.close(fd)
    _turn_fds[path] = fd = os.open(path, os.O_RDONLY)
    return fd


@functools.cache
def sql_digest() -> str:
    """What the packaged SQL says, as a digest: a database whose projections were made by
    the same SQL needs no re-apply (binding every view takes seconds)."""
    digest = hashlib.sha256()
    support = [(n, typed.read_sql(n)) for n in (typed.PARSE, projections.TOUCHED)]
    models = [(m.name, "\n".join(m.statements())) for m in projections.ordered_models()]
    for name, text in models + [(m.table, m.select) for m in typed.models()] + support:
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    return digest.hexdigest()


def apply_sql(con: duckdb.DuckDBPyConnection) -> None:
    """Make every model in dependency order (projections.py), the typed tables all at once
    where the first is due; the database is marked as ktrace's as soon as ``ktrace_meta``
    exists, so a failing projection cannot leave an unclaimed file behind."""
    typed_made = False
    for name in projections.order():
        model = projections.models().get(name)
        if model is None:  # a typed table
            typed_made = typed_made or _make_typed_tables(con)
            continue
        try:
            for statement in model.statements():
                con.execute(statement)
        except duckdb.Error as exc:
            raise DatabaseError(f"projection {name} failed: {exc}") from exc
        if name == "ktrace_meta":
            con.execute("INSERT OR REPLACE INTO ktrace_meta VALUES ('application', ?), "
                        "('schema_version', ?)", [APPLICATION, str(SCHEMA_VERSION)])
    set_meta(con, SQL_DIGEST_KEY, sql_digest())
    projections.rescope_all(con)  # the projection tables were made again, empty
    _refresh(con)


def _refresh(con: duckdb.DuckDBPyConnection) -> None:
    """``projections.refresh`` in a transaction of its own (no checkpoint inside it may move
    the rows it appends: sql/refreshed_from.sql)."""
    con.begin()
    try:
        projections.refresh(con)
        con.commit()
    except BaseException:
        con.rollback()
        raise


def _make_typed_tables(con: duckdb.DuckDBPyConnection) -> bool:
    stale = typed.create_tables(con)
    if stale:
        raise DatabaseError(f"its tables ({', '.join(stale)}) were made by another "
                            "ktrace: load it again with `ktrace replay … --rebuild` "
                            "(the recording is the source of truth)")
    return True


def meta(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    row = con.execute("SELECT value FROM ktrace_meta WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


def set_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    con.execute("INSERT OR REPLACE INTO ktrace_meta VALUES (?, ?)", [key, value])


#: DuckDB caches up to 80% of RAM by default; a long replay then grows without bound. Above
#: this it spills to disk instead. KTRACE_DB_MEMORY_LIMIT overrides it.
DEFAULT_MEMORY_LIMIT = "1GB"
#: Checkpoint rarely: each commit is already durable in the WAL, and a checkpoint per load
#: batch would rewrite the tables' newest row groups again and again.
CHECKPOINT_THRESHOLD = "256MB"


@contextlib.contextmanager
def checkpointing_commit(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Let the commit inside checkpoint at once: a large transaction then goes to the file
    in the checkpoint alone (DuckDB skips its WAL write), not into the WAL and again at the
    next checkpoint — for the last commit of a load, which closing checkpoints anyway."""
    con.execute("SET checkpoint_threshold = '0B'")
    try:
        yield
    finally:
        con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_THRESHOLD}'")


def _connect_new(path: str) -> duckdb.DuckDBPyConnection:
    """Connect for loading; a new file starts as a copy of the schema template
    (``schema_template.py``), checked to be what its name says — else discarded, and the
    file starts empty (the caller makes the schema)."""
    if os.path.exists(path):
        return _connect(path)
    name = _template_name()
    if not schema_template.copy_to(path, name, _make_template):
        return _connect(path)
    con = None
    try:
        con = _connect(path)
        made_by = [meta(con, k) for k in ("application", "schema_version", SQL_DIGEST_KEY)]
    except (duckdb.Error, DatabaseError):
        made_by = []
    if made_by == [APPLICATION, str(SCHEMA_VERSION), sql_digest()]:
        return con
    if con is not None:
        con.close()
    _remove(path)
    schema_template.discard(name)
    return _connect(path)


def _template_name() -> str:
    """What shapes a new database: the schema version, the SQL, the envelope's columns the
    typed tables are made from, their compressions, and DuckDB's version (its file format)."""
    return schema_template.key(str(SCHEMA_VERSION), sql_digest(), typed.shape(),
                               duckdb.__version__)


def _make_template(path: str) -> None:
    con = _connect(path)
    try:
        apply_sql(con)
    finally:
        con.close()


def _connect(path: str, *, read_only: bool = False,
             lock_wait_s: float = LOCK_WAIT_S) -> duckdb.DuckDBPyConnection:
    """Connect, waiting up to ``lock_wait_s`` while another process holds the file (DuckDB
    lets one writer or any number of readers in at a time)."""
    deadline = time.monotonic() + lock_wait_s
    while True:
        try:
            return _connect_once(path, read_only)
        except DatabaseError as exc:
            if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                raise
            time.sleep(CONNECT_POLL_S)


def _connect_once(path: str, read_only: bool) -> duckdb.DuckDBPyConnection:
    config = {
        "checkpoint_threshold": CHECKPOINT_THRESHOLD,
        "memory_limit": os.environ.get("KTRACE_DB_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT),
    }
    try:
        return duckdb.connect(path, read_only=read_only, config=config)
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0]
        raise DatabaseError(f"cannot open {path} as a DuckDB database: {first}") from exc


def _older(path: str, version: int) -> str:
    return (f"{path} was made by an older ktrace (schema version {version}, this one writes "
            f"{SCHEMA_VERSION}): load it again with `ktrace replay … --rebuild` (the "
            "recording is the source of truth)")


def _check_ownership(con: duckdb.DuckDBPyConnection, path: str) -> int | None:
    """The schema version of a ktrace database, None for an empty file; refuses others."""
    tables = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    if not tables:
        return None
    if "ktrace_meta" not in tables or meta(con, "application") != APPLICATION:
        raise DatabaseError(f"{path} is not a ktrace database (it holds other tables: "
                            f"{', '.join(sorted(tables)[:5])}); refusing to write into it")
    version = int(meta(con, "schema_version") or 0)
    if version > SCHEMA_VERSION:
        raise DatabaseError(f"{path} has schema version {version}; this ktrace reads up to "
                            f"{SCHEMA_VERSION}: upgrade ktrace")
    return version


def _remove(path: str) -> None:
    for name in (path, path + ".wal"):
        if os.path.exists(name):
            os.remove(name)
