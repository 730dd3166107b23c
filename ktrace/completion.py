"""Shell completion of the objects a command names, read from the database it would open
(--db typed before the name, else $KTRACE_DB, else the default file)."""

from __future__ import annotations

import os

import click
from click.shell_completion import CompletionItem

from ktrace.databases import DB_ENVVAR, DEFAULT_DB, open_for_analysis
from schemas.errors import KtraceError

#: enough to choose from; a shell lists them all at once
MAX_CANDIDATES = 200


def complete_targets(ctx: click.Context, param: click.Parameter,
                     incomplete: str) -> list[CompletionItem]:
    """Pod names (``web-<TAB>``), or ``KIND/NAME`` once a kind is typed (``deploy/<TAB>``)."""
    path = ctx.params.get("db_path") or os.environ.get(DB_ENVVAR) or DEFAULT_DB
    typed_kind, slash, prefix = incomplete.rpartition("/")
    from schemas.kinds import UnknownKind, kind_name
    try:
        kind = kind_name(typed_kind).kind if slash else "Pod"
    except UnknownKind:
        return []
    from replayer.analyses.names import object_names
    # completion prints nothing but candidates: a missing, locked or foreign file completes
    # nothing
    try:
        con = open_for_analysis(path, ctx.params.get("parquet_dir"), lock_wait_s=0)
        try:
            names = object_names(con, kind, prefix, MAX_CANDIDATES)
        finally:
            con.close()
    except (KtraceError, OSError):
        return []
    return [CompletionItem(f"{typed_kind}{slash}{name}") for name in names]
