"""ktrace replay / import / demo: load recordings into a replay database and report.

The loader (DuckDB, Arrow) and rich are imported inside the commands that use them, so
that `--help` starts fast."""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from datetime import datetime
from importlib import resources
from typing import TYPE_CHECKING, Callable, Iterator

import click

from ktrace.commands.topics import open_source, require_topics
from ktrace.databases import demo_db_path, echo_where
from ktrace.options import TIME_FORMS, html_option, kafka_options, redaction_options
from ktrace.output import Output, report_output_options, rfc3339
from ktrace.commands.analyze import (check_window, db_option, namespace_option, print_sections,
                                     refuse_existing, source_end, window)
from schemas.errors import KtraceError

if TYPE_CHECKING:
    from replayer.loader import LoadStats
    from replayer.replay import Summary
    from transports.kafka.settings import KafkaSettings


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[LoadStats], None]]:
    """A live count on stderr while loading (silent when stderr is not a terminal)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    console = Console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console, transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task(label)

        def update(stats: LoadStats) -> None:
            bar.update(task, description=f"{label}: {stats.loaded:,} records loaded, "
                                         f"{stats.duplicates:,} duplicates, "
                                         f"{stats.problem_count():,} problems")
        yield update


def echo_summary(summary: Summary) -> None:
    """The load's outcome, on stderr: stdout is for answers."""
    s = summary.stats
    damage = f" ({s.unreadable_bytes:,} bytes unreadable)" if s.problems["unreadable"] else ""
    lines = [f"loaded {s.loaded:,} of {s.deliveries:,} records ({s.duplicates:,} duplicates, "
             f"{s.filtered:,} filtered out, {_plural(s.problem_count(), 'problem')}{damage})"]
    if s.problems["unreadable"]:
        lines.append(f"damage: {_plural(s.problems['unreadable'], 'byte range')} could not be "
                     "read (table unreadable_ranges); `ktrace gaps` shows each as a damaged "
                     "unseen stretch")
    lines.append(f"database: {summary.records:,} records from {_utc(summary.first)} to "
                 f"{_utc(summary.last)}; {summary.gaps} unseen stretches")
    lines.append("kinds: " + ", ".join(f"{k} {n:,}" for k, n in summary.kinds))
    if summary.problems:
        lines.append("problems (see table load_problems): "
                     + ", ".join(f"{p} {n:,}" for p, n in summary.problems))
    for line in lines:
        click.echo(line, err=True)


def _utc(value: object) -> object:
    return rfc3339(value) if isinstance(value, datetime) else value


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def check_strict(summary: Summary, strict: bool) -> None:
    """--strict: damage fails the command (after the summary, so the user sees what)."""
    damaged = summary.stats.problems["unreadable"]
    if strict and damaged:
        raise KtraceError(f"{_plural(damaged, 'unreadable byte range')} in the source "
                          "(--strict)")


@click.command()
@click.argument("source", required=False, type=click.Path(file_okay=False))
@kafka_options
@db_option
@namespace_option
@click.option("--cluster", help="Load only records of this cluster.")
@click.option("--since", metavar="TIME", help=f"Start at this time: {TIME_FORMS}.")
@click.option("--until", metavar="TIME", help="Stop at this time (the same forms).")
@click.option("--rebuild", is_flag=True, help="Start the database over.")
@click.option("--follow", is_flag=True, help="Keep loading new records until interrupted.")
@click.option("--strict", is_flag=True,
              help="Exit with status 1 when part of the source could not be read.")
@click.option("--store-objects", type=click.Choice(["none", "all"]), default="none",
              show_default=True,
              help="all: keep every object version's JSON in the database (self-contained, "
                   "slower, larger); none: fetch objects from the source when asked for.")
def replay(source: str | None, kafka: KafkaSettings | None, topic_prefix: str, db_path: str,
           namespace: str | None, cluster: str | None, since: str | None, until: str | None,
           rebuild: bool, follow: bool, strict: bool, store_objects: str) -> None:
    """Load a recording — a local log directory SOURCE, or --kafka — into a DuckDB database.
    Re-running resumes where the last run stopped and never loads a record twice. The
    summary goes to stderr.

    Examples:

    \b
      ktrace replay ktrace-log --db k.duckdb
      ktrace replay --kafka broker:9092 --since 2h30m --db k.duckdb
      ktrace replay ktrace-log --follow --db k.duckdb"""
    from replayer import db
    from replayer.loader import RecordFilter
    from replayer.replay import follow as run_follow, replay as run_replay
    src = open_source(source, kafka)
    since_us, until_us = window(since, until, source_end(src, topic_prefix))
    name = source or f"kafka {kafka.bootstrap}"
    keep = RecordFilter(namespace, cluster)
    try:
        if not follow:  # a follower may start before the recorder made its first topic
            require_topics(src, topic_prefix, name)
        with progress_bar("replay") as update:
            if follow:
                if rebuild:
                    db.open_db(db_path, rebuild=True).close()
                summary = run_follow(src, db_path, source_name=name, prefix=topic_prefix,
                                     keep=keep, since_us=since_us, until_us=until_us,
                                     store_objects=store_objects == "all",
                                     stop=stop_on_signals(), on_batch=update,
                                     on_caught_up=report_catch_up())
            else:
                con = db.open_db(db_path, rebuild=rebuild)
                try:
                    summary = run_replay(src, con, source_name=name, prefix=topic_prefix,
                                         keep=keep, since_us=since_us, until_us=until_us,
                                         store_objects=store_objects == "all",
                                         on_batch=update)
                finally:
                    con.close()
    finally:
        src.close()
    check_window(summary, since_us, until_us)
    echo_summary(summary)
    if waiting := summary.stats.waiting:
        raise KtraceError(f"{len(waiting)} partition(s) stopped at a record whose writer schema "
                          f"could not be fetched, first {waiting[0]}; run replay again once it "
                          f"can be: it resumes there")
    check_strict(summary, strict)


def stop_on_signals() -> threading.Event:
    """Ctrl-C or SIGTERM ends a --follow between two catch-ups, never inside a batch."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    return stop


def report_catch_up() -> Callable[[LoadStats], None]:
    """One line on stderr each time a --follow catch-up loaded something new."""
    last = -1

    def report(stats: LoadStats) -> None:
        nonlocal last
        if stats.loaded != last:
            last = stats.loaded
            click.echo(f"caught up: {stats.loaded} records loaded", err=True)

    return report


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@db_option
@namespace_option
@click.option("--cluster", default="imported", show_default=True,
              help="Cluster name stored in the imported records.")
@click.option("--rebuild", is_flag=True, help="Start the database over.")
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
    from replayer import db
    from replayer.loader import RecordFilter
    from replayer.replay import import_captures
    from schemas.redaction import Redactor
    redactor = Redactor(redact, enabled=not no_redact)
    con = db.open_db(db_path, rebuild=rebuild)
    try:
        with progress_bar("import") as update:
            summary = import_captures(list(files), con, cluster=cluster, redactor=redactor,
                                      keep=RecordFilter(namespace, None), on_batch=update)
    finally:
        con.close()
    echo_summary(summary)


def demo_recording() -> str:
    folder = resources.files("replayer") / "demo" / "recording"
    if not folder.is_dir():
        raise KtraceError("this ktrace has no demo recording packaged (replayer/demo/recording)")
    return str(folder)


@click.command()
@click.option("--db", "db_path", type=click.Path(dir_okay=False),
              help="Keep the demo database here, a new file (default: the demo's own, "
                   "$XDG_CACHE_HOME/ktrace/demo.duckdb, rebuilt on every run).")
@click.option("--rebuild", is_flag=True, help="Start an existing --db over.")
@report_output_options
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
    from replayer import db
    from replayer.analyses.report import findings
    from replayer.replay import replay as run_replay
    from replayer.report.files import write_reports
    from transports.locallog.source import LocalLogSource
    if db_path:
        refuse_existing(db_path, rebuild=rebuild)
    path = db_path or demo_db_path()
    con = db.open_db(path, rebuild=rebuild or not db_path)
    try:
        with progress_bar("demo") as update:
            run_replay(LocalLogSource(demo_recording()), con, source_name="demo",
                       prefix="ktrace", on_batch=update)
        print_sections(findings(con), out)
    finally:
        con.close()
    echo_where(path, "demo")
    if html_path:
        write_reports(path, html=html_path)
