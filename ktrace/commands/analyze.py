"""ktrace query / timeline / stuck / gaps / races / state / incident: answers from a database.

The analyses (DuckDB, and for incident the sources) are imported inside the commands that
run them, so that `--help` and the commands that need none of them start fast."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable

import click

from ktrace.commands.topics import open_source, require_topics
from ktrace.completion import complete_targets
from ktrace import views
from ktrace.databases import echo_where, incident_db_path
from ktrace.options import (TIME_FORMS, DurationType, fetch_kafka_options, html_option,
                            kafka_options)
from ktrace.output import (Answer, Output, dynamic_view, emit, emit_document, emit_report,
                          output_option, report_output_options, rfc3339, write)
from ktrace.prose import record_text, stories_text
from ktrace.scope import scope_options
from replayer.analyses.query import DEFAULT_TIMEOUT_S
from replayer.analyses.stuck import DEFAULT_MARGIN_S, DEFAULT_THRESHOLD_S, PENDING, TERMINATING
from replayer.when import parse_when, to_timestamp, to_us
from schemas.errors import KtraceError

if TYPE_CHECKING:
    from replayer.analyses.report import Section
    from replayer.replay import Summary
    from transports.source import Source
    from transports.kafka.settings import KafkaSettings

DEFAULT_DB = "ktrace.duckdb"


def db_option(func: Callable) -> Callable:
    return click.option("--db", "db_path", default=DEFAULT_DB, show_default=True,
                        envvar="KTRACE_DB", type=click.Path(dir_okay=False),
                        help="The replay database (DuckDB file).")(func)


def namespace_option(func: Callable) -> Callable:
    return click.option("-n", "--namespace", help="Only this namespace.")(func)


def window(since: str | None, until: str | None,
           end_us: Callable[[], int | None]) -> tuple[int | None, int | None]:
    """--since/--until as µs (``end_us``: the recording's end, for ``end-30m``); a window
    that ends before it starts is a usage error."""
    since_us = parse_when(since, end_us=end_us) if since else None
    until_us = parse_when(until, end_us=end_us) if until else None
    if since_us is not None and until_us is not None and since_us > until_us:
        raise click.UsageError(f"--since {utc(since_us)} is after --until {utc(until_us)}")
    return since_us, until_us


def source_end(src: Source, prefix: str) -> Callable[[], int | None]:
    """The last receive time of the source's topics, asked for only by ``end-…``."""
    def end() -> int | None:
        lasts = [s.last_received_us for s in src.summarize(src.topics(prefix))]
        return max((t for t in lasts if t is not None), default=None)
    return end


def database_end(con: Any) -> Callable[[], int | None]:
    """The database's last receive time, asked for only by ``end-…``."""
    def end() -> int | None:
        from replayer.analyses import data_end
        last = data_end(con)
        return None if last is None else to_us(last)
    return end


def utc(us: int) -> str:
    return rfc3339(to_timestamp(us))


def check_window(summary: Summary, since_us: int | None, until_us: int | None) -> None:
    """A window that matched no record is an error, not an empty answer."""
    if summary.records == 0 and (since_us is not None or until_us is not None):
        start = "the start" if since_us is None else utc(since_us)
        end = "the end" if until_us is None else utc(until_us)
        raise KtraceError(f"no records between {start} and {end}: the window lies outside "
                          "the recording (`ktrace topics` shows when each topic was recorded)")


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


def moment(value: str | None, con: Any) -> datetime | None:
    """--at as a database TIMESTAMP; ``end-…`` counts back from the database's end."""
    return to_timestamp(parse_when(value, end_us=database_end(con))) if value else None


@click.command()
@click.argument("sql")
@click.option("-p", "--param", "params", nargs=2, multiple=True, metavar="NAME VALUE",
              help="A named parameter, used as $NAME in the SQL.")
@click.option("--timeout", type=DurationType(), default=DEFAULT_TIMEOUT_S, show_default=True,
              help="Stop the query after this long.")
@click.option("--write", is_flag=True,
              help="Allow statements that change the database or touch files (off by "
                   "default: queries are read-only).")
@db_option
@parquet_option
@output_option
def query(sql: str, params: tuple[tuple[str, str], ...], timeout: float, write: bool,
          db_path: str, parquet_dir: str | None, output: str) -> None:
    """Run SQL against the database ('-' reads it from stdin); read-only unless --write.

    Examples:

    \b
      ktrace query "SELECT * FROM pod_lifecycle WHERE pod = \\$pod" -p pod web-1
      echo 'SELECT kind, count(*) FROM raw_events GROUP BY ALL' | ktrace query - -o csv"""
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
        emit(Answer.of(dynamic_view("query", result[0]), result), output)


@click.command()
@click.argument("target", metavar="POD | KIND/NAME", shell_complete=complete_targets)
@scope_options
@with_db
@output_option
def timeline(target: str, namespace: str | None, cluster: str | None, con, output: str) -> None:
    """A pod's lifecycle (or every pod of a workload): steps, times, deltas, components.
    POD is NAME, pod/NAME or po/NAME; KIND/NAME a workload: deploy/web, rs/…, sts/…, ds/…,
    job/…

    Examples:

    \b
      ktrace timeline web-857bb4bd9d-84bp4 --db demo.duckdb
      ktrace timeline po/web-857bb4bd9d-84bp4 --cluster prod
      ktrace timeline deploy/web -n shop -o wide"""
    from replayer.analyses.timeline import timeline as pod_timeline
    emit(Answer.of(views.TIMELINE, pod_timeline(con, target, namespace, cluster)), output)


@click.command()
@click.argument("target", metavar="POD | KIND/NAME", shell_complete=complete_targets)
@scope_options
@with_db
@output_option
def explain(target: str, namespace: str | None, cluster: str | None, con, output: str) -> None:
    """One object's whole story: its timeline and every finding about it, in plain
    sentences with evidence ids and what to do. KIND is any name kubectl takes: pod/po,
    deploy, rs, pvc, pv, ns, no, sts, ds, job… Any recorded object, finished or not: a
    failed Job's end (its reason, last failed pod, exit code and message), a claim's
    provisioning, a Deployment's conditions and Events — with its recorded pods' stories
    after a workload's own, and a pod's claims followed to their cause.

    Examples:

    \b
      ktrace explain held --db demo.duckdb
      ktrace explain deploy/web -n shop -o yaml
      ktrace explain job/migrate -o json"""
    from replayer.analyses.explain import explain as explain_object
    stories = explain_object(con, target, namespace, cluster)
    if output not in ("table", "wide"):
        emit_document([s.as_dict() for s in stories], output, "explain",
                      names=[f"{s.kind.lower()}/{s.name}" for s in stories])
        return
    write(stories_text(stories, Output(output)))


@click.command()
@click.argument("evidence_id", metavar="ID")
@click.option("--full", is_flag=True, help="Also print the object (redacted as stored; "
              "fetched from the source unless the database stores objects).")
@fetch_kafka_options
@with_db
@output_option
def evidence(evidence_id: str, full: bool, kafka, con, output: str) -> None:
    """The record behind an evidence id printed by another command (po:3f2a9c1d:42: the
    same in every database loaded from the recording), or an event_id from `ktrace query`:
    what it is, where it came from (topic/partition/offset), and the facts it holds. -o json
    includes the stored object.

    Examples:

    \b
      ktrace evidence po:3f2a9c1d:42 --db demo.duckdb
      ktrace evidence po:3f2a9c1d:42 -o json | jq .object.metadata"""
    from replayer.analyses.evidence import evidence as show_evidence
    record = show_evidence(con, evidence_id, full=full or output in ("json", "yaml"),
                           kafka=kafka)
    if output not in ("table", "wide"):
        emit_document(record, output, "evidence",
                      names=[f"{str(record['kind']).lower()}/{record['name']}"])
        return
    write(record_text(record, Output(output)))


@click.command()
@click.option("--at", metavar="TIME", help=f"Judge at this time: {TIME_FORMS} (default: the data's end).")
@click.option("--margin", type=DurationType(allow_zero=True), default=DEFAULT_MARGIN_S,
              show_default=True,
              help="Time past the deletion deadline before a deletion is stuck.")
@click.option("--threshold", type=DurationType(allow_zero=True), default=DEFAULT_THRESHOLD_S,
              show_default=True,
              help="Time not Running and Ready before a pod is stuck.")
@click.option("--pending", "only", flag_value=PENDING,
              help="Only what is not a stuck deletion: pods that do not run or get Ready, "
                   "workloads and volumes that cannot get on.")
@click.option("--terminating", "only", flag_value=TERMINATING,
              help="Only deletions that never finished.")
@scope_options
@with_db
@output_option
def stuck(at: str | None, margin: float, threshold: float, only: str | None,
          namespace: str | None, cluster: str | None, con, output: str) -> None:
    """What is stuck, with ranked causes and their evidence: deletions that never finished
    (Terminating), pods not Running and Ready past --threshold (Pending, not Ready),
    workloads that cannot make or roll out their pods (ReplicaSets, Deployments, Jobs,
    StatefulSets, DaemonSets) and claims and volumes that cannot get on. A finished object
    (a failed Job, a released volume) is never stuck: `ktrace explain` tells its end.

    Examples:

    \b
      ktrace stuck --db demo.duckdb
      ktrace stuck --pending --threshold 2m -n shop -o wide
      ktrace stuck --at end-10m -o json"""
    from replayer.analyses.stuck import stuck as find_stuck
    judged = find_stuck(con, at=moment(at, con), namespace=namespace, cluster=cluster, margin_s=margin,
                        threshold_s=threshold, only=only)
    if judged.clamped:
        click.echo(f"note: the data ends at {rfc3339(judged.at)}; judged as of then", err=True)
    emit(Answer.of(views.STUCK, judged.rows), output)


@click.command()
@click.option("--threshold", "thresholds", multiple=True, metavar="STEP=DURATION",
              help="Override a slow-step threshold, e.g. create_to_schedule=10 (seconds) "
                   "or stopped_to_deleted=2m.")
@scope_options
@with_db
@output_option
def gaps(thresholds: tuple[str, ...], namespace: str | None, cluster: str | None, con,
         output: str) -> None:
    """Slow lifecycle steps and stretches the recording did not see.

    Examples:

    \b
      ktrace gaps --db demo.duckdb
      ktrace gaps --threshold create_to_schedule=10s -o csv"""
    from replayer.analyses.gaps import gaps as find_gaps
    seconds = DurationType(allow_zero=True)
    parsed = {}
    for item in thresholds:
        name, _, value = item.partition("=")
        try:
            parsed[name] = seconds.convert(value, None, None)
        except click.BadParameter as exc:
            raise click.BadParameter(f"{item!r}: expected STEP=DURATION; {exc.message}",
                                     param_hint="--threshold") from None
    emit(Answer.of(views.GAPS, find_gaps(con, namespace=namespace, cluster=cluster,
                                         thresholds=parsed)), output)


@click.command()
@click.option("--margin", type=DurationType(allow_zero=True), default=1.0, show_default=True,
              help="Dataplane margin: containers stopping this soon after the endpoint went "
                   "off are flagged too.")
@scope_options
@with_db
@report_output_options
def races(margin: float, namespace: str | None, cluster: str | None, con, out: Output) -> None:
    """Terminating pods whose containers stopped before (or just after) their endpoint went
    off, the distribution with a suggested preStop delay, and capacity dips.

    Examples:

    \b
      ktrace races --db demo.duckdb
      ktrace races -n shop --margin 500ms -o json
      ktrace races -o csv --output-dir races/"""
    from replayer.analyses.races import capacity_dips, race_summary, races as find_races
    from replayer.analyses.report import Section
    scope = {"namespace": namespace, "cluster": cluster}
    print_sections([
        Section("races", "Terminating pods behind a Service",
                *find_races(con, **scope, margin_s=margin)),
        Section("race_summary", "Distribution and suggested preStop delay",
                *race_summary(con, **scope, margin_s=margin)),
        Section("capacity_dips", "Capacity dips", *capacity_dips(con, **scope)),
    ], out)


@click.command()
@click.option("--at", metavar="TIME", required=True, help=f"The moment: {TIME_FORMS}.")
@click.option("--kind", help="Only this kind, named as kubectl names it (pods, po, Pod…).")
@click.option("--full", is_flag=True,
              help="Add each object's JSON (fetched from the source unless stored).")
@scope_options
@fetch_kafka_options
@with_db
@output_option
def state(at: str, kind: str | None, full: bool, namespace: str | None, cluster: str | None,
          kafka, con, output: str) -> None:
    """Every object as it was at a moment (AGE: since its last record, at that moment).

    Examples:

    \b
      ktrace state --at 2026-11-30T07:12:00Z --db demo.duckdb
      ktrace state --at end-1m --kind pods -n shop --full -o json"""
    from replayer.analyses.state import state as state_at
    when = moment(at, con)
    emit(Answer.of(views.STATE_FULL if full else views.STATE,
                   state_at(con, when, namespace=namespace, cluster=cluster, kind=kind,
                            full=full, kafka=kafka),
                   now=when), output)


@click.command()
@click.argument("source", required=False, type=click.Path(file_okay=False))
@kafka_options
@click.option("--since", metavar="TIME", required=True, help=f"Window start: {TIME_FORMS}.")
@click.option("--until", metavar="TIME", help="Window end (default: now).")
@click.option("--db", "db_path", type=click.Path(dir_okay=False),
              help="Keep the window's database here, a new file (default: a new file named "
                   "after the window in the current directory).")
@click.option("--rebuild", is_flag=True, help="Start an existing --db over.")
@namespace_option
@click.option("--cluster", help="Load only this cluster's records.")
@report_output_options
@html_option
def incident(source: str | None, kafka: KafkaSettings | None, topic_prefix: str, since: str,
             until: str | None, db_path: str | None, rebuild: bool, namespace: str | None,
             cluster: str | None, out: Output, html_path: str | None) -> None:
    """Load one window of a recording into a new database and print every finding
    (--html also draws them into one offline file). Its evidence ids open with
    `ktrace evidence ID --db PATH` (PATH printed on stderr).

    Examples:

    \b
      ktrace incident ktrace-log --since 2h --until 1h30m
      ktrace incident ktrace-log --since end-30m --db last.duckdb --html last.html
      ktrace incident --kafka broker:9092 --since 2026-11-30T07:00:00Z -o csv --output-dir out/"""
    from replayer import db
    from replayer.analyses.report import findings
    from replayer.loader import RecordFilter
    from replayer.replay import replay as run_replay
    from replayer.report.files import write_reports
    if db_path:
        refuse_existing(db_path, rebuild=rebuild)
    src = open_source(source, kafka)
    since_us, until_us = window(since, until, source_end(src, topic_prefix))
    path = db_path or incident_db_path(since_us, until_us or time.time_ns() // 1000)
    created = not os.path.exists(path)
    con = db.open_db(path, rebuild=rebuild)
    try:
        require_topics(src, topic_prefix, source or "kafka")
        summary = run_replay(src, con, source_name=source or "kafka", prefix=topic_prefix,
                             keep=RecordFilter(namespace, cluster), since_us=since_us,
                             until_us=until_us)
        check_window(summary, since_us, until_us)
    except BaseException:
        con.close()
        if created:  # a window that failed leaves no file of its own behind
            for leftover in (path, path + ".wal"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(leftover)
        raise
    finally:
        src.close()
    try:
        print_sections(findings(con, namespace=namespace, cluster=cluster), out)
    finally:
        con.close()
    echo_where(path, "incident")
    if html_path:
        write_reports(path, html=html_path, namespace=namespace)
