"""ktrace report: the picture of an incident as one offline HTML file, or a Chrome/Perfetto
trace, from a database alone."""

from __future__ import annotations

import click
import duckdb
import orjson

from replayer import db
from replayer.report import collect, gather
from replayer.report.html import render
from replayer.report.perfetto import trace
from replayer.when import parse_when, to_timestamp


def html_option(func):
    return click.option("--html", "html_path", type=click.Path(dir_okay=False, writable=True),
                        help="Also write the incident report here: one self-contained, "
                             "offline HTML file.")(func)


def write_html(con: duckdb.DuckDBPyConnection, path: str, *, namespace: str | None = None,
               since: str | None = None, until: str | None = None,
               targets: tuple[str, ...] = ()) -> None:
    sel = _selection(con, namespace, since, until, targets)
    with open(path, "w", encoding="utf-8") as out:
        out.write(render(con, sel))
    click.echo(f"report: {path} ({len(sel.uids)} pods)", err=True)


def write_html_of(db_path: str, path: str, *, namespace: str | None = None) -> None:
    """The report of a database just loaded (demo, incident): reopened read-only, as
    every analysis reads it."""
    con = db.open_readonly(db_path)
    try:
        write_html(con, path, namespace=namespace)
    finally:
        con.close()


def _selection(con, namespace, since, until, targets) -> gather.Selection:
    when = lambda v: to_timestamp(parse_when(v)) if v else None  # noqa: E731
    return gather.select(con, since=when(since), until=when(until), namespace=namespace,
                         targets=targets)


@click.command()
@click.option("--db", "db_path", default="ktrace.duckdb", show_default=True, envvar="KTRACE_DB",
              type=click.Path(dir_okay=False), help="The replay database (DuckDB file).")
@click.option("--since", help="Window start (RFC 3339 or a duration: 2h; default: the data's start).")
@click.option("--until", help="Window end (default: the data's end).")
@click.option("-n", "--namespace", help="Only this namespace.")
@click.option("--pod", "targets", multiple=True, metavar="POD | deploy/NAME",
              help="Only these pods or Deployments' pods (repeatable).")
@html_option
@click.option("--perfetto", "perfetto_path", type=click.Path(dir_okay=False, writable=True),
              help="Write a Chrome/Perfetto trace (JSON) here: one track per pod.")
def report(db_path: str, since: str | None, until: str | None, namespace: str | None,
           targets: tuple[str, ...], html_path: str | None, perfetto_path: str | None) -> None:
    """Draw an incident from the database: findings first, then one swimlane group per pod
    (API object, endpoint, containers) with race windows, finalizer holds, grace deadlines
    and the recording's unseen stretches, and the rollouts. --html writes one offline file;
    --perfetto writes a trace for ui.perfetto.dev or chrome://tracing."""
    if not html_path and not perfetto_path:
        raise click.UsageError("say where to write the report: --html FILE and/or --perfetto FILE")
    con = db.open_readonly(db_path)
    try:
        if html_path:
            write_html(con, html_path, namespace=namespace, since=since, until=until,
                       targets=targets)
        if perfetto_path:
            sel = _selection(con, namespace, since, until, targets)
            with open(perfetto_path, "wb") as out:
                out.write(orjson.dumps(trace(collect(con, sel))))
            click.echo(f"trace: {perfetto_path} ({len(sel.uids)} pods)", err=True)
    finally:
        con.close()
