"""Loading a recording from the command line: the progress bar, the closing summary, the
checks that turn an empty window or damage into errors, and the one sequence ``demo`` and
``incident`` share (load a window into a database of their own, print every finding)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Iterator

import click

from ktrace.databases import echo_where, loading_database, open_for_analysis
from ktrace.output import Output
from ktrace.printing import print_sections, write_report_files
from ktrace.sources import require_topics
from ktrace.when import between, to_timestamp
from schemas.errors import KtraceError
from schemas.formats import rfc3339
from transports.window import Window

if TYPE_CHECKING:
    from replayer.loader import LoadStats
    from replayer.record_filter import RecordFilter
    from replayer.replay import Summary
    from transports.source import Source


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
             f"{s.filtered:,} filtered out, {plural(s.problem_count(), 'problem')}{damage})"]
    if s.problems["unreadable"]:
        lines.append(f"damage: {plural(s.problems['unreadable'], 'byte range')} could not be "
                     "read (table unreadable_ranges); `ktrace gaps` shows each as a damaged "
                     "unseen stretch")
    if summary.records:
        lines.append(f"database: {summary.records:,} records from {_utc(summary.first)} to "
                     f"{_utc(summary.last)}; {summary.gaps} unseen stretches")
        lines.append("kinds: " + ", ".join(f"{k} {n:,}" for k, n in summary.kinds))
    else:
        lines.append("database: no records")
    if summary.problems:
        lines.append("problems (see table load_problems): "
                     + ", ".join(f"{p} {n:,}" for p, n in summary.problems))
    for line in lines:
        click.echo(line, err=True)


def _utc(value: object) -> object:
    return rfc3339(value) if isinstance(value, datetime) else value


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def check_window(summary: Summary, window: Window) -> None:
    """A window that matched no record is an error, not an empty answer (the objects'
    versions before its start, loaded as the state there, are no record of it)."""
    none_inside = summary.records == 0 or (window.since_us is not None
                                           and summary.last < to_timestamp(window.since_us))
    if none_inside and window.bounded:
        raise KtraceError(f"no records {between(window)}: the window lies outside the "
                          "recording (`ktrace topics` shows when each topic was recorded)")


def check_strict(summary: Summary, strict: bool) -> None:
    """--strict: damage fails the command (after the summary, so the user sees what)."""
    damaged = summary.stats.problems["unreadable"]
    if strict and damaged:
        raise KtraceError(f"{plural(damaged, 'unreadable byte range')} in the source "
                          "(--strict)")


def load_and_find(src: Source, path: str, *, label: str, source_name: str, prefix: str,
                  rebuild: bool, keep: RecordFilter, window: Window = Window(), out: Output,
                  html_path: str | None) -> None:
    """``demo`` and ``incident``: load ``src`` (within the window) into the database at
    ``path`` — removed again when the load fails — print every finding, say where the
    database is, and draw the HTML report when asked."""
    from replayer.analyses.findings import findings
    from replayer.replay import replay
    scope = {"namespace": keep.namespace, "cluster": keep.cluster}
    with loading_database(path, rebuild=rebuild) as con:
        require_topics(src, prefix, source_name)
        with progress_bar(label) as update:
            summary = replay(src, con, source_name=source_name, prefix=prefix, keep=keep,
                             window=window, on_batch=update)
        check_window(summary, window)
        sections = findings(con, **scope)
    print_sections(sections, out)
    echo_where(path, label)
    if html_path:
        con = open_for_analysis(path)
        try:
            write_report_files(con, html=html_path, **scope)
        finally:
            con.close()
