"""The HTML file: the page model rendered by Jinja2 with autoescape on (object names,
messages and details are untrusted input), CSS and JS inlined from package data."""

from __future__ import annotations

from datetime import datetime
from importlib import resources
from typing import Any

import duckdb
import jinja2

from replayer.report import gather, layout
from replayer.report.gather import Incident
from replayer.report.scale import clock
from schemas.formats import rfc3339


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("replayer.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["clock"] = clock
    env.globals["asset"] = _asset
    return env


def _asset(name: str) -> str:
    """An inlined stylesheet or script (``|safe`` in the template: it is our own file)."""
    return (resources.files("replayer.report") / "templates" / name).read_text("utf-8")


def evidence_ids(page: dict[str, Any]) -> set[int]:
    ids = {e for kind in page["findings"] for f in kind["rows"] for e in f["evidence"]
           if e is not None}
    ids |= {e for event in page["header"]["unseen"] for e in event["evidence"] if e is not None}
    for group in page["groups"]:
        for rev in group["revisions"]:
            ids |= {m["ev"] for ln in rev["lanes"] for m in ln["marks"] if m["ev"] is not None}
    return ids


def _plain(value: Any) -> Any:
    """A value as the details panel shows it (times in UTC, ISO 8601)."""
    if isinstance(value, datetime):
        return rfc3339(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def render(con: duckdb.DuckDBPyConnection, inc: Incident, *,
           live: dict[str, Any] | None = None) -> str:
    """The page of ``inc``, with the evidence records its marks and findings name; ``live``
    (``ktrace serve``: the state and fragment URLs, poll interval and data version) makes
    the page refresh itself."""
    return _environment().get_template("report.html.j2").render(**_model(con, inc), live=live)


def render_fragment(con: duckdb.DuckDBPyConnection, inc: Incident) -> str:
    """What a live page swaps in when the data changed: the inside of its ``<main>``."""
    return _environment().get_template("page.html.j2").render(**_model(con, inc), live=True)


def _model(con: duckdb.DuckDBPyConnection, inc: Incident) -> dict[str, Any]:
    page = layout.page(inc)
    page["evidence"] = {str(k): {f: _plain(v) for f, v in record.items()}
                        for k, record in gather.evidence(con, evidence_ids(page)).items()}
    return page
