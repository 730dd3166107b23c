"""ktrace info: what a database holds."""

from __future__ import annotations

import click

from ktrace.databases import with_db
from ktrace.output import Output, sections_output_options
from ktrace.printing import print_sections


@click.command(short_help="What a database holds: windows, sessions, kinds, unseen stretches.")
@click.option("--cluster", help="Only this cluster (default: every cluster in the database).")
@with_db
@sections_output_options
def info(cluster: str | None, con, out: Output) -> None:
    """What the database holds: each cluster's recorded window, the recorder sessions, the
    kinds with their records and objects (and how many exist at the end), and the stretches
    the recording did not see.

    Examples:

    \b
      ktrace info --db incident.duckdb
      ktrace info --cluster prod -o json"""
    from replayer.analyses.info import info as database_info
    print_sections(database_info(con, cluster=cluster), out)
