"""The names of recorded objects of one kind, for shell completion."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb


def object_names(con: duckdb.DuckDBPyConnection, kind: str, prefix: str,
                 limit: int) -> list[str]:
    """Up to ``limit`` names of ``kind`` that start with ``prefix``, in order."""
    return [name for (name,) in con.execute(
        "SELECT DISTINCT name FROM raw_events WHERE kind = ? AND starts_with(name, ?) "
        "ORDER BY name LIMIT ?", [kind, prefix, limit]).fetchall()]
