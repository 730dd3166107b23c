"""ktrace report: the picture of an incident as one offline HTML file, or a Chrome/Perfetto
trace, from a database alone."""

from __future__ import annotations

from datetime import datetime

import click

from ktrace.commands.analyze import database_end, db_option
from ktrace.options import TIME_FORMS, html_option
from ktrace.scope import scope_options
from replayer.when import parse_when, to_timestamp


def _when(value: str | None, db_path: str) -> datetime | None:
    """--since/--until; ``end-…`` opens the database to find its end."""
    def end() -> int | None:
        from replayer import db
        con = db.open_readonly(db_path)
        try:
            return database_end(con)()
        finally:
            con.close()
    return to_timestamp(parse_when(value, end_us=end)) if value else None


@click.command()
@db_option
@click.option("--since", metavar="TIME", help=f"Window start: {TIME_FORMS} (default: the data's start).")
@click.option("--until", metavar="TIME", help="Window end (default: the data's end).")
@scope_options
@click.option("--pod", "targets", multiple=True, metavar="POD | KIND/NAME",
              help="Only these pods or workloads' pods (repeatable).")
@html_option
@click.option("--perfetto", "perfetto_path", type=click.Path(dir_okay=False, writable=True),
              help="Write a Chrome/Perfetto trace (JSON) here: one track per pod.")
def report(db_path: str, since: str | None, until: str | None, namespace: str | None,
           cluster: str | None, targets: tuple[str, ...], html_path: str | None,
           perfetto_path: str | None) -> None:
    """Draw an incident from the database: findings first, then one swimlane group per pod
    (API object, endpoint, containers) with race windows, finalizer holds, grace deadlines
    and the recording's unseen stretches, and the rollouts. --html writes one offline file;
    --perfetto writes a trace for ui.perfetto.dev or chrome://tracing.

    Examples:

    \b
      ktrace report --db demo.duckdb --html demo.html
      ktrace report --since end-5m --pod deploy/web --perfetto web.json"""
    if not html_path and not perfetto_path:
        raise click.UsageError("say where to write the report: --html FILE and/or --perfetto FILE")
    from replayer.report.files import write_reports  # DuckDB and jinja2: only when drawing
    sel = write_reports(db_path, html=html_path, perfetto=perfetto_path, since=_when(since, db_path),
                        until=_when(until, db_path), namespace=namespace, targets=targets,
                        cluster=cluster)
    for path in (html_path, perfetto_path):
        if path:
            click.echo(f"wrote {path} ({len(sel.uids)} pods)", err=True)
