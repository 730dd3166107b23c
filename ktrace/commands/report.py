"""ktrace report: the picture of an incident as one offline HTML file, or a Chrome/Perfetto
trace, from a database alone."""

from __future__ import annotations

from typing import Any

import click

from ktrace.databases import db_option, open_for_analysis, parquet_option
from ktrace.options import html_option
from ktrace.printing import write_report_files
from ktrace.scope import scope_options
from ktrace.output import rfc3339
from ktrace.when import TIME_FORMS, between, database_end, parse_window, to_timestamp, to_us
from schemas.errors import KtraceError
from transports.window import Window


@click.command(short_help="Draw an incident as one offline HTML file or a Perfetto trace.")
@click.option("--since", metavar="TIME", help=f"Window start: {TIME_FORMS} (default: the data's start).")
@click.option("--until", metavar="TIME", help="Window end (default: the data's end).")
@scope_options
@click.option("--pod", "targets", multiple=True, metavar="POD | KIND/NAME",
              help="Only these pods or workloads' pods (repeatable).")
@html_option
@click.option("--perfetto", "perfetto_path", type=click.Path(dir_okay=False, writable=True),
              help="Write a Chrome/Perfetto trace (JSON) here: one track per pod.")
@db_option
@parquet_option
def report(since: str | None, until: str | None, namespace: str | None, cluster: str | None,
           targets: tuple[str, ...], html_path: str | None, perfetto_path: str | None,
           db_path: str, parquet_dir: str | None) -> None:
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
    con = open_for_analysis(db_path, parquet_dir)
    try:
        window = parse_window(since, until, database_end(con))
        check_recorded(con, window, cluster)
        start, end = (None if us is None else to_timestamp(us)
                      for us in (window.since_us, window.until_us))
        write_report_files(con, html=html_path, perfetto=perfetto_path, since=start, until=end,
                           namespace=namespace, cluster=cluster, targets=targets)
    finally:
        con.close()


def check_recorded(con: Any, window: Window, cluster: str | None) -> None:
    """A window outside the recording is an error (exit 1), not an empty picture."""
    from replayer.analyses.scope import recorded_span
    first, last = recorded_span(con, cluster)
    if first is None:
        raise KtraceError("the database holds no records"
                          + (f" of cluster {cluster}" if cluster else ""))
    if window.past_end(to_us(first)) or window.before_start(to_us(last)):
        raise KtraceError(f"no records {between(window)}: the database holds "
                          f"{rfc3339(first)} to {rfc3339(last)} (`ktrace info` shows it)")
