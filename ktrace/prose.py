"""How the two document answers read in a terminal: ``explain``'s stories (a fitted table
of steps, then the findings wrapped to the width) and ``evidence``'s record."""

from __future__ import annotations

import textwrap
from typing import Any

from ktrace import views
import orjson

from ktrace.output import Answer, Output, clip, dump_document, plain, table_text

INDENT = "  "


def stories_text(stories: list[Any], out: Output) -> str:
    """``explain``'s stories (replayer.analyses.explain.Story) for a person."""
    width = None if out.fmt == "wide" else out.width
    steps_out = Output(out.fmt, width=width - len(INDENT) if width else None)
    parts = []
    for story in stories:
        where = f"{story.namespace}/" if story.namespace else ""
        lines = [f"{story.kind} {where}{story.name} (uid {story.uid})"]
        lines += [INDENT + line for line in
                  table_text(Answer(views.STORY_STEPS, story.timeline), steps_out).splitlines()]
        for finding in story.findings:
            ids = ", ".join(str(e) for e in finding.evidence)
            lines += _wrapped(finding.sentence + (f" [evidence {ids}]" if ids else ""),
                              width, "  * ", "    ")
            if finding.advice:
                lines += _wrapped(finding.advice, width, "    → ", "      ")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def record_text(record: dict[str, Any], out: Output) -> str:
    """``evidence``'s record: its fields, the typed tables' rows, and the object if asked."""
    width = None if out.fmt == "wide" else out.width
    lines = _fields({k: v for k, v in record.items() if k not in ("facts", "object")}, width)
    for table, rows in record["facts"].items():
        lines += ["", f"{table}:"]
        for row in rows:  # one field a line, as kubectl describe: the tables are wide
            shown = _fields({k: v for k, v in row.items() if v is not None},
                            width - len(INDENT) if width else None)
            lines += [("- " if i == 0 else INDENT) + line for i, line in enumerate(shown)]
    if record.get("object") is not None:
        lines += ["", "object:", dump_document(record["object"], "json").rstrip()]
    return "\n".join(lines) + "\n"


def _fields(fields: dict[str, Any], width: int | None) -> list[str]:
    return [_fit(f"{key + ':':<17} {_value(value)}", width) for key, value in fields.items()]


def _value(value: Any) -> str:
    value = plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return orjson.dumps(value).decode() if isinstance(value, (list, dict)) else str(value)


def _wrapped(text: str, width: int | None, first: str, rest: str) -> list[str]:
    if not width:
        return [first + text]
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False) or [first]


def _fit(line: str, width: int | None) -> str:
    return clip(line, width) if width else line
