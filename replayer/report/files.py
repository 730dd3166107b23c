"""Writing the report's files from a database the caller opened (read-only, like every
analysis)."""

from __future__ import annotations

from datetime import datetime

import duckdb
import orjson

from replayer.report import collect, gather
from replayer.report.html import render
from replayer.report.perfetto import trace


def write_reports(con: duckdb.DuckDBPyConnection, *, html: str | None = None,
                  perfetto: str | None = None, since: datetime | None = None, until: datetime | None = None,
                  namespace: str | None = None, targets: tuple[str, ...] = (),
                  cluster: str | None = None) -> gather.Selection:
    """Write the HTML report and/or the Chrome trace of the selected pods and window."""
    sel = gather.select(con, since=since, until=until, namespace=namespace, targets=targets,
                        cluster=cluster)
    if html:
        text = render(con, collect(con, sel))
        with open(html, "w", encoding="utf-8") as out:
            out.write(text)
    if perfetto:
        events = trace(gather.pods(con, sel), gather.steps(con, sel))
        with open(perfetto, "wb") as out:
            out.write(orjson.dumps(events))
    return sel
