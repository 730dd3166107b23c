"""ktrace query / timeline / explain / evidence / stuck / gaps / races / state: answers
from a database.

The analyses (DuckDB) are imported inside the commands that
run them, so that `--help` and the commands that need none of them start fast."""

from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable

import click

from ktrace import views
from ktrace.completion import complete_targets
from ktrace.databases import db_option, open_for_analysis, parquet_option, with_db
from ktrace.options import DurationType, duration_option, fetch_kafka_options
from ktrace.output import (Answer, Output, dynamic_view, emit, emit_document, output_option,
                          sections_output_options, write)
from ktrace.printing import print_sections
from ktrace.prose import record_text, stories_text
from ktrace.namespaces import resolve_namespace
from ktrace.scope import scope_options, target_scope_options
from ktrace.when import TIME_FORMS, moment
from replayer.analyses.query import DEFAULT_TIMEOUT_S
from replayer.analyses.races import DEFAULT_MARGIN_S as RACE_MARGIN_S
from replayer.analyses.stuck import DEFAULT_MARGIN_S, DEFAULT_THRESHOLD_S, PENDING, TERMINATING
from schemas.errors import KtraceError
from schemas.formats import rfc3339
from schemas.kinds import ObjectRef


@click.command(short_help="Run SQL against the database (read-only unless --write).")
@click.argument("sql")
@click.option("-p", "--param", "params", nargs=2, multiple=True, metavar="NAME VALUE",
              help="A named parameter, used as $NAME in the SQL.")
@duration_option("--timeout", default=DEFAULT_TIMEOUT_S, help="Stop the query after this long.")
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
    from replayer.analyses.query import QueryError, run_query
    text = sys.stdin.read() if sql == "-" else sql
    if not text.strip():
        raise click.UsageError("no SQL given (an empty argument or empty stdin)")
    if write and os.path.exists(db_path) and not parquet_dir:
        from replayer import db
        con = db.open_db(db_path)
    else:
        con = open_for_analysis(db_path, parquet_dir)
    try:
        result = run_query(con, text, dict(params), write=write, timeout_s=timeout)
    except QueryError as exc:
        lifted_by = {"read_only": "--write allows the rest", "timeout": "--timeout sets it"}
        raise KtraceError(f"{exc}; {lifted_by[exc.limit]}" if exc.limit else str(exc)) from exc
    finally:
        con.close()
    if result is not None:
        emit(Answer.of(dynamic_view("query", result[0]), result), output)


def about_one_target(func: Callable) -> Callable:
    """A command about one POD | KIND/NAME: the argument, -n/-A/--cluster, --db and -o. The
    command gets the target's namespace resolved when -n is not given (ktrace.namespaces)."""
    @functools.wraps(func)
    def resolved(target: str, namespace: str | None, all_namespaces: bool,
                 cluster: str | None, con: Any, output: str) -> Any:
        ref = ObjectRef.parse(target)
        namespace = resolve_namespace(con, ref.kind.kind, [ref.name], namespace, cluster,
                                      all_namespaces=all_namespaces)
        return func(target, namespace, cluster, con, output)

    return click.argument("target", metavar="POD | KIND/NAME", shell_complete=complete_targets)(
        target_scope_options(with_db(output_option(resolved))))


@click.command(short_help="A pod's (or a workload's pods') lifecycle, step by step.")
@about_one_target
def timeline(target: str, namespace: str | None, cluster: str | None, con, output: str) -> None:
    """A pod's lifecycle (or every pod of a workload): steps, times, deltas, components.
    POD is NAME, pod/NAME or po/NAME; KIND/NAME a workload: deploy/web, rs/…, sts/…, ds/…,
    job/…

    Examples:

    \b
      ktrace timeline web-67f56bfc69-nb8v8 --db demo.duckdb
      ktrace timeline po/web-67f56bfc69-nb8v8 --cluster prod
      ktrace timeline deploy/web -n shop -o wide"""
    from replayer.analyses.timeline import timeline as pod_timeline
    emit(Answer.of(views.TIMELINE, pod_timeline(con, target, namespace, cluster)), output)


@click.command(short_help="One object's whole story, in sentences with evidence.")
@about_one_target
def explain(target: str, namespace: str | None, cluster: str | None, con, output: str) -> None:
    """One object's whole story: its timeline and every finding about it, in plain
    sentences with evidence ids and what to do. KIND is any name kubectl takes: pod/po,
    deploy, rs, pvc, pv, ns, no, sts, ds, job… Any recorded object, finished or not: a
    failed Job's end (its reason, last failed pod, exit code and message), a claim's
    provisioning, a Deployment's conditions and Events, a Service without a ready endpoint,
    a drain a budget held and then let pass — with its recorded pods' stories after a
    workload's own, and a pod's claims followed to their cause.

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


@click.command(short_help="The record behind an evidence id.")
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
    includes the stored object. An id opens with its kind's kubectl short name (po, pvc,
    ns…), or its resource where kubectl has none (jobs, leases, volumeattachments); any
    kubectl spelling of the kind is taken.

    Examples:

    \b
      ktrace evidence po:83a33959:96 --db demo.duckdb
      ktrace evidence po:3f2a9c1d:42 -o json | jq .object.metadata"""
    from replayer.analyses.evidence import evidence as show_evidence
    record = show_evidence(con, evidence_id, full=full or output in ("json", "yaml"),
                           kafka=kafka)
    if output not in ("table", "wide"):
        emit_document(record, output, "evidence",
                      names=[f"{str(record['kind']).lower()}/{record['name']}"])
        return
    write(record_text(record, Output(output)))


@click.command(short_help="What is stuck, with ranked causes and evidence.")
@click.option("--at", metavar="TIME", help=f"Judge at this time: {TIME_FORMS} (default: the data's end).")
@duration_option("--margin", default=DEFAULT_MARGIN_S, allow_zero=True,
                 help="Time past the deletion deadline before a deletion is stuck.")
@duration_option("--threshold", default=DEFAULT_THRESHOLD_S, allow_zero=True,
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
    StatefulSets, DaemonSets), claims and volumes that cannot get on, Services without a
    ready endpoint and drains a PodDisruptionBudget holds. A finished object
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


@click.command(short_help="Slow lifecycle steps and stretches the recording did not see.")
@click.option("--threshold", "thresholds", multiple=True, metavar="STEP=DURATION",
              help="Override a slow-step threshold, e.g. create_to_schedule=10 (seconds) "
                   "or stopped_to_deleted=2m.")
@click.option("--since", metavar="TIME",
              help=f"Only gaps that ended then or later, or are still open: {TIME_FORMS}.")
@scope_options
@with_db
@output_option
def gaps(thresholds: tuple[str, ...], since: str | None, namespace: str | None,
         cluster: str | None, con, output: str) -> None:
    """Slow lifecycle steps and stretches the recording did not see.

    With --since, a slow step is kept when its late step happened then or later, an unseen
    stretch when the recording saw again then or later; a stretch nothing ended (a lost
    recorder session, damage to the end) ends at the data's end and is always kept.

    Examples:

    \b
      ktrace gaps --db demo.duckdb
      ktrace gaps --threshold create_to_schedule=10s -o csv
      ktrace gaps --since end-1h"""
    from replayer.analyses.gaps import gaps as find_gaps, whole_second_notes
    seconds = DurationType(allow_zero=True)
    parsed = {}
    for item in thresholds:
        name, _, value = item.partition("=")
        try:
            parsed[name] = seconds.convert(value, None, None)
        except click.BadParameter as exc:
            raise click.BadParameter(f"{item!r}: expected STEP=DURATION; {exc.message}",
                                     param_hint="--threshold") from None
    rows = find_gaps(con, namespace=namespace, cluster=cluster, thresholds=parsed,
                     since=moment(since, con))
    for note in whole_second_notes(parsed):
        click.echo(f"note: {note}", err=True)
    emit(Answer.of(views.GAPS, rows), output)


@click.command(short_help="Pods whose containers stopped before their endpoint went off.")
@duration_option("--margin", default=RACE_MARGIN_S, allow_zero=True,
                 help="Dataplane margin: containers stopping this soon after the endpoint went "
                   "off are flagged too.")
@click.option("--since", metavar="TIME",
              help=f"Only pods whose deletion was requested from then on (and dips that "
                   f"ended then or later): {TIME_FORMS}.")
@scope_options
@with_db
@sections_output_options
def races(margin: float, since: str | None, namespace: str | None, cluster: str | None, con,
          out: Output) -> None:
    """Terminating pods whose containers stopped before (or just after) their endpoint went
    off, the distribution with a suggested preStop delay, and capacity dips.

    Examples:

    \b
      ktrace races --db demo.duckdb
      ktrace races -n shop --margin 500ms -o json
      ktrace races --since end-10m
      ktrace races -o csv --output-dir races/"""
    from replayer.analyses.findings import race_sections
    print_sections(race_sections(con, namespace=namespace, cluster=cluster, margin_s=margin,
                                 since=moment(since, con)), out)


@click.command(short_help="Every object as it was at a moment.")
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
      ktrace state --at 2026-12-07T14:36:00Z --db demo.duckdb
      ktrace state --at end-1m --kind pods -n shop --full -o json"""
    from replayer.analyses.state import state as state_at
    when = moment(at, con)
    emit(Answer.of(views.STATE_FULL if full else views.STATE,
                   state_at(con, when, namespace=namespace, cluster=cluster, kind=kind,
                            full=full, kafka=kafka),
                   now=when), output)
