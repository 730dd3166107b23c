"""Shell completion of the objects a command names, read from the database it would open
(--db typed before the name, else $KTRACE_DB, else the default file)."""

from __future__ import annotations

import os

import click
from click.shell_completion import CompletionItem

#: enough to choose from; a shell lists them all at once
MAX_CANDIDATES = 200


def complete_targets(ctx: click.Context, param: click.Parameter,
                     incomplete: str) -> list[CompletionItem]:
    """Pod names (``web-<TAB>``), or ``KIND/NAME`` once a kind is typed (``deploy/<TAB>``)."""
    path = ctx.params.get("db_path") or os.environ.get("KTRACE_DB")
    if not path or not os.path.isfile(path):
        return []
    typed_kind, slash, prefix = incomplete.rpartition("/")
    from schemas.kinds import UnknownKind, kind_name
    try:
        kind = kind_name(typed_kind).kind if slash else "Pod"
    except UnknownKind:
        return []
    import duckdb
    try:  # completion prints nothing but candidates: a locked or foreign file completes nothing
        con = duckdb.connect(path, read_only=True)
        try:
            names = con.execute(
                "SELECT DISTINCT name FROM raw_events WHERE kind = ? AND starts_with(name, ?) "
                "ORDER BY name LIMIT ?", [kind, prefix, MAX_CANDIDATES]).fetchall()
        finally:
            con.close()
    except (duckdb.Error, OSError):
        return []
    return [CompletionItem(f"{typed_kind}{slash}{name}") for (name,) in names]
