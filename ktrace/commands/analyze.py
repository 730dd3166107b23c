"""ktrace query / timeline / stuck / gaps / races / state / incident: answers from a database.

The analyses (DuckDB, and for incident the sources) are imported inside the commands that
run them, so that `--help` and the commands that need none of them start fast."""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Callable

import click

from ktrace.commands.topics import open_source, require_topics
from ktrace.options import html_option, kafka_options
from ktrace import views
from ktrace.output import (Answer, Output, dump_document, dynamic_view, emit, emit_document,
                          emit_report, output_option, plain, report_output_options, rfc3339,
                          write)
from replayer.analyses.query import DEFAULT_TIMEOUT_S
from replayer.analyses.stuck import DEFAULT_MARGIN_S, DEFAULT_THRESHOLD_S, PENDING, TERMINATING
from replayer.when import parse_when, to_timestamp
from schemas.errors import KtraceError

if TYPE_CHECKING:
    from replayer.analyses.report import Section
    from replayer.replay import Summary
    from schemas.kafka_settings import KafkaSettings

DEFAULT_DB = "ktrace.duckdb"


def db_option(func: Callable) -> Callable:
    return click.option("--db", "db_path", default=DEFAULT_DB, show_default=True,
                        envvar="KTRACE_DB", type=click.Path(dir_okay=False),
                        help="The replay database (DuckDB file).")(func)


def namespace_option(func: Callable) -> Callable:
    return click.option("-n", "--namespace", help="Only this namespace.")(func)


def window(since: str | None, until: str | None) -> tuple[int | None, int | None]:
    """--since/--until as µs; a window that ends before it starts is a usage error."""
    since_us = parse_when(since) if since else None
    until_us = parse_when(until) if until else None
    if since_us is not None and until_us is not None and since_us > until_us:
        raise click.UsageError(f"--since {since} is after --until {until}")
    return since_us, until_us


def check_window(summary: Summary, since: str | None, until: str | None) -> None:
    """A window that matched no record is an error, not an empty answer."""
    if summary.records == 0 and (since or until):
        raise KtraceError(f"no records between {since or 'the start'} and {until or 'the end'}:"
                          " the window lies outside the recording (`ktrace topics` shows when "
                          "each topic was recorded)")


def refuse_existing(path: str, *, rebuild: bool) -> None:
    """Commands that make a new database leave an existing file untouched unless
    ``rebuild`` (and even then ``db.open_db`` starts over only a ktrace database)."""
    if os.path.exists(path) and not rebuild:
        raise KtraceError(f"{path} already exists; pass --rebuild to start it over, or choose "
                          "another --db")


def parquet_option(func: Callable) -> Callable:
    return click.option("--parquet", "parquet_dir", type=click.Path(file_okay=False),
                        help="Read a `ktrace export` Parquet directory in place instead of "
                             "--db.")(func)


def open_for_analysis(db_path: str, parquet_dir: str | None):  # -> DuckDBPyConnection
    if parquet_dir:
        from replayer.export import open_parquet
        return open_parquet(parquet_dir)
    from replayer import db
    return db.open_readonly(db_path)


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


def print_sections(sections: list[Section], out: Output) -> None:
    """A report's sections, each under the schema of the command that prints it alone."""
    emit_report([Answer.of(views.VIEWS[s.key], (s.columns, s.rows), title=s.title)
                 for s in sections], out)


def _at(value: str | None):
    return to_timestamp(parse_when(value)) if value else None


@click.command()
@click.argument("sql")
@click.option("-p", "--param", "params", nargs=2, multiple=True, metavar="NAME VALUE",
              help="A named parameter, used as $NAME in the SQL.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              default=DEFAULT_TIMEOUT_S, show_default=True, metavar="SECONDS",
              help="Stop the query after this long.")
@click.option("--write", is_flag=True,
              help="Allow statements that change the database or touch files (off by "
                   "default: queries are read-only).")
@db_option
@parquet_option
@output_option
def query(sql: str, params: tuple[tuple[str, str], ...], timeout: float, write: bool,
          db_path: str, parquet_dir: str | None, output: str) -> None:
    """Run SQL against the database ('-' reads it from stdin), e.g.
    ktrace query "SELECT * FROM pod_lifecycle WHERE pod = \\$pod" -p pod web-1"""
    from replayer import db
    from replayer.analyses.query import run_query
    text = sys.stdin.read() if sql == "-" else sql
    if not text.strip():
        raise click.UsageError("no SQL given (an empty argument or empty stdin)")
    if write and os.path.exists(db_path) and not parquet_dir:
        con = db.open_db(db_path)
    else:
        con = open_for_analysis(db_path, parquet_dir)
    try:
        result = run_query(con, text, dict(params), write=write, timeout_s=timeout)
    finally:
        con.close()
    if result is not None:
        emit(Answer(dynamic_view("query", result[0]), [dict(zip(result[0], r)) for r in result[1]]),
             output)


@click.command()
@click.argument("target", metavar="POD | deploy/NAME")
@namespace_option
@with_db
@output_option
def timeline(target: str, namespace: str | None, con, output: str) -> None:
    """A pod's lifecycle (or every pod of a Deployment): steps, times, deltas, components."""
    from replayer.analyses.timeline import timeline as pod_timeline
    emit(Answer.of(views.TIMELINE, pod_timeline(con, target, namespace)), output)


@click.command()
@click.argument("target", metavar="POD | KIND/NAME")
@namespace_option
@with_db
@output_option
def explain(target: str, namespace: str | None, con, output: str) -> None:
    """One object's whole story: its timeline and every finding about it, in plain
    sentences with evidence ids and what to do. KIND is pod, deploy, rs, pvc, pv, ns,
    node, sts, ds or job (e.g. ktrace explain deploy/web)."""
    from replayer.analyses.explain import explain as explain_object
    stories = explain_object(con, target, namespace)
    if output not in ("table", "wide"):
        emit_document([s.as_dict() for s in stories], output, "explain",
                      names=[f"{s.kind.lower()}/{s.name}" for s in stories])
        return
    for story in stories:
        click.echo(f"{story.kind} {story.namespace + '/' if story.namespace else ''}"
                   f"{story.name} (uid {story.uid})")
        for step in story.timeline:
            mark = "~" if step["derived"] else " "
            click.echo(f"  {mark}{step['time']:%H:%M:%S.%f}Z  {step['step']:<20} "
                       f"{step['component'] or '':<26} {step['detail'] or ''}"
                       f"  [{step['evidence_event_id']}]")
        for finding in story.findings:
            ids = ", ".join(str(e) for e in finding.evidence)
            click.echo(f"  * {finding.sentence}" + (f" [evidence {ids}]" if ids else ""))
            if finding.advice:
                click.echo(f"    → {finding.advice}")
        click.echo()


@click.command()
@click.argument("event_id", type=int, metavar="ID")
@click.option("--full", is_flag=True, help="Also print the object (redacted as stored; "
              "fetched from the source unless the database stores objects).")
@with_db
@output_option
def evidence(event_id: int, full: bool, con, output: str) -> None:
    """The record behind an evidence id printed by another command: what it is, where it
    came from (topic/partition/offset), and the facts it holds. -o json includes the
    stored object."""
    from replayer.analyses.evidence import evidence as show_evidence
    record = show_evidence(con, event_id, full=full or output in ("json", "yaml"))
    if output not in ("table", "wide"):
        emit_document(record, output, "evidence",
                      names=[f"{str(record['kind']).lower()}/{record['name']}"])
        return
    facts, obj = record.pop("facts"), record.pop("object", None)
    for key, value in record.items():
        click.echo(f"{key + ':':<15} {'' if value is None else plain(value)}")
    for table, rows in facts.items():
        click.echo(f"\n{table}:")
        emit(Answer(dynamic_view(table, list(rows[0])), rows), "table")
    if obj is not None:
        click.echo("\nobject:")
        write(dump_document(obj, "json"))


@click.command()
@click.option("--at", help="Judge at this time (default: the end of the data).")
@click.option("--margin", type=click.FloatRange(min=0), default=DEFAULT_MARGIN_S,
              show_default=True, metavar="SECONDS",
              help="Time past the deletion deadline before a deletion is stuck.")
@click.option("--threshold", type=click.FloatRange(min=0), default=DEFAULT_THRESHOLD_S,
              show_default=True, metavar="SECONDS",
              help="Time not Running and Ready before a pod is stuck.")
@click.option("--pending", "only", flag_value="pending",
              help="Only pods that do not run or get Ready, and workloads that cannot make them.")
@click.option("--terminating", "only", flag_value="terminating",
              help="Only deletions that never finished.")
@namespace_option
@with_db
@output_option
def stuck(at: str | None, margin: float, threshold: float, only: str | None,
          namespace: str | None, con, output: str) -> None:
    """What is stuck, with ranked causes and their evidence: deletions that never finished
    (Terminating), pods not Running and Ready past --threshold (Pending, not Ready), and
    ReplicaSets/Deployments that cannot make or roll out their pods."""
    from replayer.analyses.stuck import stuck as find_stuck
    problems = {"pending": PENDING, "terminating": TERMINATING}.get(only, TERMINATING + PENDING)
    judged = find_stuck(con, at=_at(at), namespace=namespace, margin_s=margin,
                        threshold_s=threshold, problems=problems)
    if judged.clamped:
        click.echo(f"note: the data ends at {rfc3339(judged.at)}; judged as of then", err=True)
    emit(Answer.of(views.STUCK, judged.rows), output)


@click.command()
@click.option("--threshold", "thresholds", multiple=True, metavar="STEP=SECONDS",
              help="Override a slow-step threshold, e.g. create_to_schedule=10.")
@namespace_option
@with_db
@output_option
def gaps(thresholds: tuple[str, ...], namespace: str | None, con, output: str) -> None:
    """Slow lifecycle steps and stretches the recording did not see."""
    from replayer.analyses.gaps import gaps as find_gaps
    parsed = {}
    for item in thresholds:
        name, sep, value = item.partition("=")
        try:
            parsed[name] = float(value)
        except ValueError:
            raise click.BadParameter(f"{item!r}: expected STEP=SECONDS", param_hint="--threshold")
        if parsed[name] < 0:
            raise click.BadParameter(f"{item!r}: a threshold cannot be negative",
                                     param_hint="--threshold")
    emit(Answer.of(views.GAPS, find_gaps(con, namespace=namespace, thresholds=parsed)), output)


@click.command()
@click.option("--margin", type=click.FloatRange(min=0), default=1.0, show_default=True,
              metavar="SECONDS",
              help="Dataplane margin: containers stopping this soon after the endpoint went "
                   "off are flagged too.")
@namespace_option
@with_db
@report_output_options
def races(margin: float, namespace: str | None, con, out: Output) -> None:
    """Terminating pods whose containers stopped before (or just after) their endpoint went
    off, the distribution with a suggested preStop delay, and capacity dips."""
    from replayer.analyses.races import capacity_dips, race_summary, races as find_races
    from replayer.analyses.report import Section
    print_sections([
        Section("races", "Terminating pods behind a Service",
                *find_races(con, namespace=namespace, margin_s=margin)),
        Section("race_summary", "Distribution and suggested preStop delay",
                *race_summary(con, namespace=namespace, margin_s=margin)),
        Section("capacity_dips", "Capacity dips", *capacity_dips(con, namespace=namespace)),
    ], out)


@click.command()
@click.option("--at", required=True, help="The moment (RFC 3339, or a duration before now).")
@click.option("--kind", help="Only this kind (e.g. Pod).")
@click.option("--full", is_flag=True,
              help="Add each object's JSON (fetched from the source unless stored).")
@namespace_option
@with_db
@output_option
def state(at: str, kind: str | None, full: bool, namespace: str | None, con,
          output: str) -> None:
    """Every object as it was at a moment."""
    from replayer.analyses.state import state as state_at
    moment = _at(at)
    emit(Answer.of(views.STATE_FULL if full else views.STATE,
                   state_at(con, moment, namespace=namespace, kind=kind, full=full),
                   now=moment), output)


@click.command()
@click.argument("source", required=False, type=click.Path(file_okay=False))
@kafka_options
@click.option("--since", required=True, help="Window start (RFC 3339 or a duration: 2h).")
@click.option("--until", help="Window end (default: now).")
@click.option("--db", "db_path", type=click.Path(dir_okay=False),
              help="Keep the window's database here, a new file (default: a temporary file).")
@click.option("--rebuild", is_flag=True, help="Start an existing --db over.")
@namespace_option
@report_output_options
@html_option
def incident(source: str | None, kafka: KafkaSettings | None, topic_prefix: str, since: str,
             until: str | None, db_path: str | None, rebuild: bool, namespace: str | None,
             out: Output, html_path: str | None) -> None:
    """Load one window of a recording into a fresh database and print every finding
    (--html also draws them into one offline file)."""
    from replayer import db
    from replayer.analyses.report import findings
    from replayer.loader import RecordFilter
    from replayer.replay import replay as run_replay
    from replayer.report.files import write_reports
    since_us, until_us = window(since, until)
    if db_path:
        refuse_existing(db_path, rebuild=rebuild)
    src = open_source(source, kafka)
    with tempfile.TemporaryDirectory(prefix="ktrace-incident-") as tmp:
        path = db_path or os.path.join(tmp, "incident.duckdb")
        con = db.open_db(path, rebuild=rebuild)
        try:
            require_topics(src, topic_prefix, source or "kafka")
            summary = run_replay(src, con, source_name=source or "kafka", prefix=topic_prefix,
                                 keep=RecordFilter(namespace, None), since_us=since_us,
                                 until_us=until_us)
            check_window(summary, since, until)
            print_sections(findings(con, namespace=namespace), out)
        finally:
            con.close()
            src.close()
        if html_path:
            write_reports(path, html=html_path, namespace=namespace)
