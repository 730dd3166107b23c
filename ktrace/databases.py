"""Where ``demo`` and ``incident`` keep the database their evidence ids point into, so that
every id they print can be opened afterwards with ``ktrace evidence ID --db PATH``."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import click

DEMO_FILE = "demo.duckdb"


def demo_db_path() -> str:
    """The demo's own database: ``$XDG_CACHE_HOME/ktrace/demo.duckdb`` (~/.cache by default),
    rebuilt on every run — ktrace's file, never a user's."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(cache) / "ktrace"
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / DEMO_FILE)


def _stamp(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def incident_db_path(since_us: int, until_us: int, folder: str = "") -> str:
    """A new file named after the window (``incident-20261130T071100Z-20261130T071300Z``),
    with ``-2``, ``-3``… when that name is taken: an existing file is never overwritten."""
    base = os.path.join(folder, f"incident-{_stamp(since_us)}-{_stamp(until_us)}")
    path, n = f"{base}.duckdb", 1
    while os.path.exists(path):
        n += 1
        path = f"{base}-{n}.duckdb"
    return path


def echo_where(path: str, what: str) -> None:
    """Tell (on stderr) where the evidence lives and how to open it."""
    click.echo(f"{what} database: {path} — open an evidence id with "
               f"`ktrace evidence ID --db {path}`", err=True)
