"""ktrace replay / import / demo / incident: load recordings into a replay database.

The loader (DuckDB, Arrow) and rich are imported inside the commands that use them, so
that `--help` starts fast."""

from __future__ import annotations

import signal
import threading
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable

import click

from ktrace.databases import (db_option, demo_db_path, incident_db_path, loading_database,
                              new_db_options, rebuild_option, refuse_existing,
                              remember_database)
from ktrace.loading import (check_strict, check_window, echo_summary, load_and_find,
                            progress_bar)
from ktrace.options import (html_option, kafka_options, kinds_option, loaded_namespace_option,
                            namespace_option, redaction_options)
from ktrace.output import Output, sections_output_options
from ktrace.sources import open_source, require_topics, source_end
from ktrace.when import TIME_FORMS, parse_window
from schemas.errors import KtraceError

if TYPE_CHECKING:
    from replayer.loader import LoadStats
    from replayer.replay import Summary
    from transports.kafka.settings import KafkaSettings
    from transports.source import Source


@click.command(short_help="Load a recording into a database (resumes; --follow keeps up).")
@click.argument("source", required=False, type=click.Path(file_okay=False))
@kafka_options
@db_option
@loaded_namespace_option
@kinds_option
@click.option("--cluster", help="Load only records of this cluster.")
@click.option("--since", metavar="TIME", help=f"Start at this time: {TIME_FORMS}.")
@click.option("--until", metavar="TIME", help="Stop at this time (the same forms).")
@rebuild_option
@click.option("--follow", is_flag=True, help="Keep loading new records until interrupted.")
@click.option("--metrics-port", type=click.IntRange(0, 65535),
              help="With --follow: serve the findings as Prometheus metrics on this port "
                   "(/metrics; 0: a free one; docs/agents.md lists them).")
@click.option("--metrics-host", default="127.0.0.1", show_default=True,
              help="With --metrics-port: the address to listen on.")
@click.option("--metrics-every", type=click.FloatRange(0), metavar="SECONDS",
              help="With --metrics-port: refresh the findings at most this often while "
                   "records keep coming (each refresh runs the analyses between catch-ups; "
                   "default: a scrape interval, docs/agents.md).")
@click.option("--strict", is_flag=True,
              help="Exit with status 1 when part of the source could not be read.")
@click.option("--store-objects", type=click.Choice(["none", "all"]), default="none",
              show_default=True,
              help="all: keep every object version's JSON in the database (self-contained, "
                   "slower, larger); none: fetch objects from the source when asked for.")
def replay(source: str | None, kafka: KafkaSettings | None, topic_prefix: str, db_path: str,
           namespace: str | None, kinds: frozenset[str] | None, cluster: str | None,
           since: str | None, until: str | None, rebuild: bool, follow: bool,
           metrics_port: int | None, metrics_host: str, metrics_every: float | None,
           strict: bool, store_objects: str) -> None:
    """Load a recording — a local log directory SOURCE, or --kafka — into a DuckDB database.
    Re-running resumes where the last run stopped and never loads a record twice. The
    summary goes to stderr.

    Examples:

    \b
      ktrace replay ktrace-log --db k.duckdb
      ktrace replay --kafka broker:9092 --since 2h30m --db k.duckdb
      ktrace replay ktrace-log -n shop --kinds pods,nodes,events --db shop.duckdb
      ktrace replay ktrace-log --follow --db k.duckdb
      ktrace replay ktrace-log --follow --metrics-port 9464 --db k.duckdb"""
    from replayer.record_filter import RecordFilter
    from replayer.replay import replay as run_replay
    if metrics_port is not None and not follow:
        raise click.UsageError("--metrics-port serves a follower's findings: add --follow")
    if metrics_every is not None and metrics_port is None:
        raise click.UsageError("--metrics-every sets how often --metrics-port's findings are "
                               "refreshed: add --metrics-port")
    src = open_source(source, kafka)
    try:
        window = parse_window(since, until, source_end(src, topic_prefix))
        name = source or f"kafka {kafka.bootstrap}"
        load = dict(source_name=name, prefix=topic_prefix,
                    keep=RecordFilter(namespace, cluster, kinds), window=window,
                    store_objects=store_objects == "all")
        if follow:
            summary = follow_source(src, db_path, rebuild=rebuild,
                                    metrics=(metrics_host, metrics_port, metrics_every),
                                    **load)
            check_window(summary, window)
        else:
            with loading_database(db_path, rebuild=rebuild) as con:
                require_topics(src, topic_prefix, name)
                with progress_bar("replay") as update:
                    summary = run_replay(src, con, on_batch=update, **load)
                check_window(summary, window)
    finally:
        src.close()
    echo_summary(summary)
    if waiting := summary.stats.waiting:
        raise KtraceError(f"{len(waiting)} partition(s) stopped at a record whose writer schema "
                          f"could not be fetched, first {waiting[0]}; run replay again once it "
                          f"can be: it resumes there")
    check_strict(summary, strict)


def follow_source(src: Source, db_path: str, *, rebuild: bool,
                  metrics: tuple[str, int | None, float | None], **load: Any) -> Summary:
    """--follow: catch up, then keep loading until a signal; a follower may start before
    the recorder made its first topic. ``metrics``: where to serve its findings and how
    often to refresh them (host, port, seconds; port None: nowhere)."""
    from replayer import db
    from replayer.replay import follow
    if rebuild:
        db.open_db(db_path, rebuild=True).close()
    remember_database(db_path)
    with progress_bar("replay") as update:
        return follow(src, db_path, stop=stop_on_signals(), on_batch=update,
                      on_caught_up=echo_catch_up(metrics_on(db_path, *metrics)), **load)


def stop_on_signals() -> threading.Event:
    """Ctrl-C or SIGTERM ends a --follow between two catch-ups, never inside a batch."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    return stop


def metrics_on(db_path: str, host: str, port: int | None,
               every_s: float | None) -> Callable[[int], None] | None:
    """--metrics-port: serve the follower's findings; what hears each catch-up's count."""
    if port is None:
        return None
    from replayer.follower_metrics import FollowerMetrics
    metrics = FollowerMetrics(db_path, **({} if every_s is None else {"every_s": every_s}))
    try:
        _, bound = metrics.serve(port, host)
    except OSError as exc:
        raise KtraceError(f"--metrics-port {port}: cannot listen on {host}: "
                          f"{exc.strerror or exc}") from exc
    click.echo(f"metrics: http://{host}:{bound}/metrics", err=True)
    return metrics.caught_up


def echo_catch_up(metrics: Callable[[int], None] | None = None
                  ) -> Callable[[LoadStats], None]:
    """One line on stderr each time a --follow catch-up loaded something new (after the
    metrics, when served, were refreshed from it)."""
    last = -1

    def echo(stats: LoadStats) -> None:
        nonlocal last
        if metrics is not None:
            metrics(stats.loaded)
        if stats.loaded != last:
            last = stats.loaded
            click.echo(f"caught up: {stats.loaded} records loaded", err=True)

    return echo


@click.command("import", short_help="Load kubectl get/--watch JSON captures into a database.")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@db_option
@namespace_option
@click.option("--cluster", default="imported", show_default=True,
              help="Cluster name stored in the imported records.")
@rebuild_option
@redaction_options
def import_(files: tuple[str, ...], db_path: str, namespace: str | None, cluster: str,
            rebuild: bool, redact: tuple[str, ...], no_redact: bool) -> None:
    """Load captures of `kubectl get KIND --watch --output-watch-events -o json` or
    `kubectl get KIND -o json` (one file per kind). Times are derived from the objects (1 s
    precision) and marked derived. Objects are redacted as `record` redacts them; Secrets
    are refused.

    Examples:

    \b
      kubectl get pods -A --watch --output-watch-events -o json > pods.json
      ktrace import pods.json events.json --db k.duckdb"""
    from replayer.record_filter import RecordFilter
    from replayer.replay import import_captures
    from schemas.redaction import Redactor
    redactor = Redactor(redact, enabled=not no_redact)
    with loading_database(db_path, rebuild=rebuild) as con, progress_bar("import") as update:
        summary = import_captures(list(files), con, cluster=cluster, redactor=redactor,
                                  keep=RecordFilter(namespace, None), on_batch=update)
    echo_summary(summary)


def demo_recording() -> str:
    folder = resources.files("replayer") / "demo" / "recording"
    if not folder.is_dir():
        raise KtraceError("this ktrace has no demo recording packaged (replayer/demo/recording)")
    return str(folder)


@click.command(short_help="Replay the packaged recording and print what ktrace finds.")
@new_db_options("the demo's own, $XDG_CACHE_HOME/ktrace/demo.duckdb, rebuilt on every run")
@sections_output_options
@html_option
def demo(db_path: str | None, rebuild: bool, out: Output, html_path: str | None) -> None:
    """Replay the packaged recording of a real control plane — a rollout whose old pods
    stopped before their endpoints turned not-ready, and pods held in Terminating — and
    print what ktrace finds. Its evidence ids open with `ktrace evidence ID --db PATH`
    (PATH printed on stderr).

    Examples:

    \b
      ktrace demo
      ktrace demo --db demo.duckdb --html demo.html
      ktrace demo -o csv --output-dir demo-csv/"""
    from replayer.record_filter import RecordFilter
    from transports.locallog.source import LocalLogSource
    if db_path:
        refuse_existing(db_path, rebuild=rebuild)
    source = LocalLogSource(demo_recording())
    try:
        load_and_find(source, db_path or demo_db_path(), label="demo", source_name="demo",
                      prefix="ktrace", rebuild=rebuild or not db_path, keep=RecordFilter(),
                      out=out, html_path=html_path)
    finally:
        source.close()


@click.command(short_help="Load one time window into a new database, print every finding.")
@click.argument("source", required=False, type=click.Path(file_okay=False))
@kafka_options
@click.option("--since", metavar="TIME", required=True, help=f"Window start: {TIME_FORMS}.")
@click.option("--until", metavar="TIME", help="Window end (default: now).")
@new_db_options("a file named after the window in the current directory")
@loaded_namespace_option
@kinds_option
@click.option("--cluster", help="Load only this cluster's records.")
@sections_output_options
@html_option
def incident(source: str | None, kafka: KafkaSettings | None, topic_prefix: str, since: str,
             until: str | None, db_path: str | None, rebuild: bool, namespace: str | None,
             kinds: frozenset[str] | None, cluster: str | None, out: Output,
             html_path: str | None) -> None:
    """Load one window of a recording into a new database and print every finding
    (--html also draws them into one offline file). Its evidence ids open with
    `ktrace evidence ID --db PATH` (PATH printed on stderr).

    Examples:

    \b
      ktrace incident ktrace-log --since 2h --until 1h30m
      ktrace incident ktrace-log --since end-30m --db last.duckdb --html last.html
      ktrace incident --kafka broker:9092 --since 2026-11-30T07:00:00Z -o csv --output-dir out/"""
    from replayer.record_filter import RecordFilter
    if db_path:
        refuse_existing(db_path, rebuild=rebuild)
    src = open_source(source, kafka)
    try:
        window = parse_window(since, until, source_end(src, topic_prefix))
        path = db_path or incident_db_path(window)
        load_and_find(src, path, label="incident", source_name=source or "kafka",
                      prefix=topic_prefix, rebuild=rebuild,
                      keep=RecordFilter(namespace, cluster, kinds),
                      window=window, out=out, html_path=html_path)
    finally:
        src.close()
