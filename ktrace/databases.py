"""The database a command reads or makes: the --db option (with ``KTRACE_DB`` and the last
database a command made, offered in its help and in the error when a file is missing),
opening it for analysis, and making a new one that a failed load does not leave behind."""

from __future__ import annotations

import contextlib
import functools
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import click

from schemas.errors import KtraceError
from transports.window import Window

#: an open DuckDB connection (the CLI never imports DuckDB itself: the replayer does)
Connection = Any

DEFAULT_DB = "ktrace.duckdb"
DB_ENVVAR = "KTRACE_DB"
DEMO_FILE = "demo.duckdb"
#: the path of the last database a command made, one line, under $XDG_STATE_HOME/ktrace/
LAST_DATABASE_FILE = "last-database"


# ---- the last database a command made ------------------------------------------------------

def _state_file() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                             "state")
    return Path(state) / "ktrace" / LAST_DATABASE_FILE


def remember_database(path: str) -> None:
    """Note ``path`` as the last database a command made (replay, import, demo, incident).
    A hint only: a state directory that cannot be written costs the hint, not the command."""
    state = _state_file()
    with contextlib.suppress(OSError):
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text(os.path.abspath(path) + "\n", encoding="utf-8")


def last_database() -> str | None:
    """The last database a command made, while it still exists."""
    try:
        path = _state_file().read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return path if path and os.path.isfile(path) else None


# ---- --db and --parquet --------------------------------------------------------------------

class DatabaseOption(click.Option):
    """--db, whose help shows the value in effect now (``KTRACE_DB`` or the default) and
    the last database a command made."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        record = super().get_help_record(ctx)
        if record is None:
            return None
        set_to = os.environ.get(DB_ENVVAR)
        now = (f"now {set_to} from ${DB_ENVVAR}" if set_to
               else f"default: {DEFAULT_DB}, or ${DB_ENVVAR}")
        last = last_database()
        offered = last and last != os.path.abspath(set_to or DEFAULT_DB)
        made = f"; last made: {last}" if offered else ""
        return record[0], f"{record[1]}  [{now}{made}]"


def db_option(func: Callable) -> Callable:
    """--db PATH (``db_path``) of a command that reads or loads a database."""
    return click.option("--db", "db_path", cls=DatabaseOption, default=DEFAULT_DB,
                        envvar=DB_ENVVAR, metavar="PATH", type=click.Path(dir_okay=False),
                        help="The replay database (DuckDB file).")(func)


def rebuild_option(func: Callable) -> Callable:
    """--rebuild of a command that loads a database (passes ``rebuild``)."""
    return click.option("--rebuild", is_flag=True,
                        help="Start an existing database over (a ktrace database "
                             "only).")(func)


def new_db_options(default: str) -> Callable[[Callable], Callable]:
    """--db and --rebuild of a command that makes a database of its own (demo, incident):
    a new file, ``default`` when not given."""
    def decorate(func: Callable) -> Callable:
        return click.option("--db", "db_path", type=click.Path(dir_okay=False),
                            help=f"Keep the database here, a new file (default: {default}).")(
            rebuild_option(func))
    return decorate


def parquet_option(func: Callable) -> Callable:
    return click.option("--parquet", "parquet_dir", type=click.Path(file_okay=False),
                        help="Read a `ktrace export` Parquet directory in place instead of "
                             "--db.")(func)


def missing_database(path: str) -> KtraceError:
    """No file at ``path``: say how a database is named and made, and offer the last one."""
    message = (f"no database at {path} (named by --db or ${DB_ENVVAR}): load one with "
               "`ktrace replay` or `ktrace import`")
    last = last_database()
    if last and last != os.path.abspath(path):
        message += f", or open the last one made: --db {last}"
    return KtraceError(message)


def open_for_analysis(db_path: str, parquet_dir: str | None = None,
                      **readonly: Any) -> Connection:
    """The database (or an exported Parquet directory) opened read-only, as every analysis
    reads it (``readonly``: ``db.open_readonly``'s options)."""
    if parquet_dir:
        from replayer.export import open_parquet
        return open_parquet(parquet_dir)
    if not os.path.exists(db_path):
        raise missing_database(db_path)
    from replayer import db
    return db.open_readonly(db_path, **readonly)


def with_db(func: Callable) -> Callable:
    """Opens --db read-only (or --parquet DIR) for the command as ``con`` and closes it
    afterwards."""
    @functools.wraps(func)
    def wrapper(*args: Any, db_path: str, parquet_dir: str | None, **kwargs: Any) -> Any:
        con = open_for_analysis(db_path, parquet_dir)
        try:
            return func(*args, con=con, **kwargs)
        finally:
            con.close()
    return db_option(parquet_option(wrapper))


# ---- making a database ---------------------------------------------------------------------

def refuse_existing(path: str, *, rebuild: bool) -> None:
    """Commands that make a new database leave an existing file untouched unless
    ``rebuild`` (and even then ``db.open_db`` starts over only a ktrace database)."""
    if os.path.exists(path) and not rebuild:
        raise KtraceError(f"{path} already exists; pass --rebuild to start it over, or choose "
                          "another --db")


@contextlib.contextmanager
def loading_database(path: str, *, rebuild: bool = False) -> Iterator[Connection]:
    """The database at ``path`` opened for loading. When the load fails, a file this run
    made (new, or started over by ``rebuild``) is removed: it holds nothing anyone
    recorded. When it succeeds, ``path`` is remembered as the last database made."""
    from replayer import db
    existed = os.path.exists(path)
    try:
        con = db.open_db(path, rebuild=rebuild)
    except BaseException:
        if not existed:
            _remove_database_file(path)
        raise
    try:
        try:
            yield con
        finally:
            con.close()
    except BaseException:
        if rebuild or not existed:
            _remove_database_file(path)
        raise
    remember_database(path)


def _remove_database_file(path: str) -> None:
    for leftover in (path, path + ".wal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(leftover)


def demo_db_path() -> str:
    """The demo's own database: ``$XDG_CACHE_HOME/ktrace/demo.duckdb`` (~/.cache by default),
    rebuilt on every run — ktrace's file, never a user's."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(cache) / "ktrace"
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / DEMO_FILE)


def _stamp(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def incident_db_path(window: Window, folder: str = "") -> str:
    """A new file named after ``window`` (``incident-20261130T071100Z-20261130T071300Z``;
    without an end, now), with ``-2``, ``-3``… when that name is taken: an existing file
    is never overwritten."""
    assert window.since_us is not None, "an incident's window has a start (--since)"
    until_us = time.time_ns() // 1000 if window.until_us is None else window.until_us
    base = os.path.join(folder, f"incident-{_stamp(window.since_us)}-{_stamp(until_us)}")
    path, n = f"{base}.duckdb", 1
    while os.path.exists(path):
        n += 1
        path = f"{base}-{n}.duckdb"
    return path


def echo_where(path: str, what: str) -> None:
    """Tell (on stderr) where the evidence lives and how to open it: with --db, or with
    $KTRACE_DB for every command that follows."""
    click.echo(f"{what} database: {path} — open an evidence id with "
               f"`ktrace evidence ID --db {path}`, or `export {DB_ENVVAR}={path}` first",
               err=True)
