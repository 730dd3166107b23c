"""A new database starts as a copy of a template: an empty database with the schema, the
projections' tables, views and macros, made once and kept in the user's cache
(``$XDG_CACHE_HOME/ktrace/schema-templates/``). Making them costs ~0.6 CPU-s (DuckDB
parsing and binding some 90 macros and views); a copy costs milliseconds — the floor of
every small load (a window, a namespace, ``incident``).

A template is named by everything that shapes the file (``key``): a ktrace whose schema,
SQL or DuckDB differ uses a template of its own, never another's; the newest few are kept
(``KEEP``). A template is written aside and renamed into place, and so is each copy: a
crash leaves neither half-made. When the cache cannot be written, or a copy fails, the
caller makes the schema in place, as without a template.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

FOLDER = "schema-templates"
#: Templates kept, the newest made: other ktrace or DuckDB versions in use beside this one
#: keep theirs, and the folder does not grow with every upgrade (~5 MB each).
KEEP = 4


def key(*inputs: str) -> str:
    """The template's name: a digest of what shapes the file (the schema version, the SQL's
    digest, the DuckDB version, …)."""
    digest = hashlib.sha256()
    for value in inputs:
        digest.update(value.encode() + b"\0")
    return digest.hexdigest()[:32]


def folder() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "ktrace" / FOLDER


def copy_to(path: str, name: str, make: Callable[[str], None]) -> bool:
    """Place a copy of template ``name`` at ``path`` (which does not exist), the template
    first made with ``make(file)`` where missing. False, with nothing at ``path``, when no
    template can be had (the cache is not writable): the caller makes the schema itself."""
    template = folder() / f"{name}.duckdb"
    try:
        if not template.exists():
            _make(template, make)
        _copy_aside(template, Path(path))
    except OSError:
        return False
    return True


def discard(name: str) -> None:
    """Remove template ``name`` (a copy of it was not what its name says): the next new
    database makes it again."""
    with contextlib.suppress(FileNotFoundError):
        (folder() / f"{name}.duckdb").unlink()


def _make(template: Path, make: Callable[[str], None]) -> None:
    template.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=template.parent) as aside:
        made = os.path.join(aside, "template.duckdb")
        make(made)
        os.replace(made, template)  # another process making the same one at once: either wins
    for older in sorted(template.parent.glob("*.duckdb"), key=_made_at, reverse=True)[KEEP:]:
        with contextlib.suppress(FileNotFoundError):  # a copy of it under way just fails
            older.unlink()


def _made_at(template: Path) -> float:
    try:
        return template.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def _copy_aside(template: Path, path: Path) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}.copying")
    try:
        shutil.copyfile(template, partial)
        os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()

