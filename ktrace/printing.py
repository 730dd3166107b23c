"""What several commands print alike: an answer in sections (each under the schema of the
command that prints it alone), and the report's files with a line naming each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ktrace import views
from ktrace.output import Answer, Output, emit_sections

if TYPE_CHECKING:
    from replayer.analyses.findings import Section


def print_sections(sections: list[Section], out: Output) -> None:
    emit_sections([Answer.of(views.VIEWS[s.key], (s.columns, s.rows), title=s.title)
                 for s in sections], out)


def write_report_files(con: Any, *, html: str | None = None, perfetto: str | None = None,
                       **selection: Any) -> None:
    """The HTML report and/or the Perfetto trace of ``con``'s data (``selection``: the
    window, namespace, cluster, pods), and on stderr which file holds how many pods."""
    from replayer.report.files import write_reports  # jinja2: only when drawing
    chosen = write_reports(con, html=html, perfetto=perfetto, **selection)
    for path in (html, perfetto):
        if path:
            click.echo(f"wrote {path} ({len(chosen.uids)} pods)", err=True)
