"""Printing results as kubectl does: ``-o table|wide|json|yaml|csv|name``.

Each command declares its rows once as a :class:`View` (ktrace/views.py): the snake_case keys
of its JSON rows — its schema, documented in docs/cli.md — and how each shows in a table.
``table`` fits the terminal (free text and names end in ``…``, codes and times are never
cut — a column is left out instead; seconds read ``2m03s``, times relative where kubectl
shows an age); ``wide`` adds columns and fits nothing; ``json``/``yaml`` carry
every key at full precision with RFC 3339 times in UTC (``…Z``); ``csv`` is one table, so an
answer in several sections writes one file per section into ``--output-dir``.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence
from uuid import UUID

import click
import orjson

from schemas.formats import clock, duration, rfc3339, rounded

FORMATS = ("table", "wide", "json", "yaml", "csv", "name")
TABLE_FORMATS = ("table", "wide")
#: a cell of `wide` (which does not fit the terminal) is cut here all the same: JSON lists
WIDE_CELL_MAX = 60
#: the narrowest a column shrinks to when a table must fit the terminal
MIN_WIDTH = 4
#: columns that cannot all keep this much of their width are left out of a fitted table
READABLE_WIDTH = 10
#: how a column's cells are shortened when a table must fit the terminal: ``prose`` (free
#: text: messages, reasons) is cut first, ``name`` next, ``whole`` never — a cut code, time or
#: evidence id reads as another or as nothing (``terminating`` as ``ter…``). Times, durations
#: and ages are ``whole``. Whether a column may be left out is its ``drop``.
FITS = ("prose", "name", "whole")
GUTTER = "  "
NONE = "<none>"

#: how a column's value reads in a table: ``auto`` by the value's type, ``seconds`` as a
#: duration, ``age`` as the time from the value to the view's moment, ``clock`` as a time of
#: day (the date in ``wide``)
KINDS = ("auto", "seconds", "age", "clock")
#: where a column shows: ``table`` in table and wide, ``wide`` in wide only, ``data`` only in
#: json/yaml/csv
SHOWS = ("table", "wide", "data")


@dataclass(frozen=True)
class Column:
    key: str
    doc: str
    kind: str = "auto"
    show: str = "table"
    header: str | None = None
    max_width: int | None = None
    #: one of FITS; None: ``whole`` for times, durations and ages, else ``name``
    fit: str | None = None
    #: when prose and names at READABLE_WIDTH still do not fit, the columns with a ``drop``
    #: are left out, 1 first; None: never left out (ids, durations: what the next step needs)
    drop: int | None = None
    #: the key of the row's flag that makes this value a lower bound: a table prints ≥ before it
    at_least: str | None = None
    #: the key of the row's time whose age a table prints after the value, as kubectl's
    #: RESTARTS does: ``3 (2m ago)``
    since: str | None = None

    def __post_init__(self) -> None:
        assert self.kind in KINDS and self.show in SHOWS and self.fit in (None, *FITS), self

    def gives_way(self, rows: Sequence[dict[str, Any]]) -> str:
        if self.fit:
            return self.fit
        timed = self.kind != "auto" or any(isinstance(r[self.key], datetime) for r in rows)
        return "whole" if timed else "name"

    @property
    def title(self) -> str:
        if self.header:
            return self.header
        key = self.key.removesuffix("_s") if self.kind == "seconds" else self.key
        return key.removesuffix("_event_id").upper().replace("_", " ")


@dataclass(frozen=True)
class View:
    """The rows of one answer: ``name`` is its key in a sectioned answer's JSON, ``names`` the keys
    ``-o name`` prints as ``kind/name`` (``kind`` fixed, or the row's ``kind`` key)."""

    name: str
    doc: str
    columns: tuple[Column, ...]
    names: tuple[str, ...] = ()
    kind: str | None = None

    @property
    def keys(self) -> list[str]:
        return [c.key for c in self.columns]

    def rows(self, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
        """The analysis' rows as dicts of this view's keys — which must be the analysis' own
        columns, so the documented schema cannot drift from the SQL."""
        if list(columns) != self.keys:
            raise RuntimeError(f"view {self.name!r} declares {self.keys}, the analysis "
                               f"returned {list(columns)}")
        return [dict(zip(columns, r)) for r in rows]


def dynamic_view(name: str, columns: Sequence[str]) -> View:
    """The view of a result whose columns only the user knows (``ktrace query``): a table
    too wide leaves out its last columns first, never the first."""
    return View(name, "the query's own columns",
                tuple(Column(c, "", drop=len(columns) - i if i else None)
                      for i, c in enumerate(columns)),
                names=tuple(columns[:1]))


@dataclass
class Answer:
    """One view's rows, the moment ages are measured from, and its title among sections."""

    view: View
    rows: list[dict[str, Any]]
    title: str = ""
    now: datetime | None = None

    @classmethod
    def of(cls, view: View, result: tuple[Sequence[str], Sequence[Sequence[Any]]],
           **kwargs: Any) -> "Answer":
        return cls(view, view.rows(*result), **kwargs)


@dataclass
class Output:
    """What ``-o`` (and ``--output-dir`` on answers in sections) asked for."""

    fmt: str
    output_dir: str | None = None
    width: int | None = field(default_factory=lambda: terminal_width())
    #: tables print their header line (``get --no-headers`` leaves it out)
    headers: bool = True


def terminal_width() -> int | None:
    """$COLUMNS, else the terminal's width; None (no limit) when stdout is not a terminal."""
    with_env = os.environ.get("COLUMNS", "").strip()
    if with_env.isdigit() and int(with_env) > 0:
        return int(with_env)
    if sys.stdout.isatty():
        try:
            return os.get_terminal_size(sys.stdout.fileno()).columns
        except OSError:
            return None
    return None


def output_option(func: Callable) -> Callable:
    """-o/--output, shared by every command that prints results; passes ``output``."""
    return click.option("-o", "--output", "output", type=click.Choice(FORMATS),
                        default="table", show_default=True,
                        help="table fits the terminal, wide adds columns, json/yaml carry "
                             "every key (docs/cli.md), csv one table, name kind/name per "
                             "line.")(func)


def sections_output_options(func: Callable) -> Callable:
    """-o plus --output-dir for commands that print several sections; passes ``out``
    (an :class:`Output`) and refuses csv without a directory before any work is done."""
    @functools.wraps(func)
    def wrapper(*args: Any, output: str, output_dir: str | None, **kwargs: Any) -> Any:
        if output == "csv" and not output_dir:
            raise click.UsageError("-o csv writes one file per section: give --output-dir DIR")
        return func(*args, out=Output(output, output_dir), **kwargs)

    wrapper = click.option("--output-dir", type=click.Path(file_okay=False),
                           help="With -o csv: write one SECTION.csv per section here.")(wrapper)
    return output_option(wrapper)


# ---- values --------------------------------------------------------------------------------

def plain(value: Any) -> Any:
    """``value`` as JSON/YAML/CSV carry it: times as RFC 3339 strings, numbers without
    binary noise (schemas.formats)."""
    if isinstance(value, datetime):
        return rfc3339(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, timedelta):
        return rounded(value.total_seconds())
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else rounded(float(value))
    if isinstance(value, float):
        return rounded(value)
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    return value


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _one_day(answer: Answer, column: Column) -> bool:
    """Whether a clock column's times all fall on one date: only then is the time of day
    enough (a story over days, or across midnight, prints its dates)."""
    days = {v.date() for row in answer.rows if isinstance(v := row[column.key], datetime)}
    return len(days) <= 1


def _ago(when: Any, now: datetime | None) -> str:
    return f" ({duration((now - when).total_seconds())} ago)" if (
        isinstance(when, datetime) and now is not None) else ""


def _cell(value: Any, column: Column, *, now: datetime | None, wide: bool,
          dated: bool = False) -> str:
    if value is None:
        return NONE
    if column.kind == "seconds" and isinstance(value, (int, float)):
        return duration(value)
    if column.kind == "age" and isinstance(value, datetime) and now is not None:
        return duration((now - value).total_seconds())
    if isinstance(value, datetime):
        if column.kind == "clock" and not wide:
            return rfc3339(value, 3) if dated else clock(value)
        return rfc3339(value, 6 if wide else 0)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (float, Decimal)):
        return _number(float(value))
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int)) for v in value):
        return ",".join(str(v) for v in value) or NONE  # as kubectl prints a list of names
    if isinstance(value, (list, tuple, dict)):
        return orjson.dumps(plain(value)).decode()
    return str(value)


# ---- printing ------------------------------------------------------------------------------

def emit(answer: Answer, out: Output | str) -> None:
    """Print one answer to stdout in the format asked for."""
    emit_sections([answer], out, single=True)


def emit_sections(answers: Sequence[Answer], out: Output | str, *, single: bool = False) -> None:
    """Print several answers (an answer's sections): one JSON/YAML object keyed by view name,
    the tables one after another under their titles, or one CSV file per section."""
    out = out if isinstance(out, Output) else Output(out)
    if out.fmt in ("json", "yaml"):
        doc: Any = (_plain_rows(answers[0]) if single else
                    {a.view.name: _plain_rows(a) for a in answers})
        write(dump_document(doc, out.fmt))
    elif out.fmt == "csv":
        if single:
            write(_csv(answers[0]))
        else:
            _write_csv_files(answers, out.output_dir)
    elif out.fmt == "name":
        write("".join(f"{n}\n" for n in _names(answers)))
    elif single:
        if not answers[0].rows:
            click.echo("No rows found.", err=True)
            return
        write(table_text(answers[0], out))
    else:
        write("\n".join(f"== {a.title or a.view.name}\n"
                         + (table_text(a, out, section=a.title or a.view.name) if a.rows
                            else "(none)\n") for a in answers))


def emit_document(doc: Any, fmt: str, command: str, *, names: Sequence[str]) -> None:
    """A nested answer (``explain``, ``evidence``): json/yaml whole, ``name`` its objects;
    it has no one table for csv."""
    if fmt == "csv":
        raise click.UsageError(f"{command} prints a document, not a table: use -o json or yaml")
    write(dump_document(doc, fmt) if fmt in ("json", "yaml") else "".join(f"{n}\n" for n in names))


def dump_document(doc: Any, fmt: str) -> str:
    """``doc`` (already plain, or made so) as indented JSON or block YAML."""
    doc = plain(doc)
    if fmt == "yaml":
        import yaml  # only when asked for: a tenth of a second to import
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"


def write(text: str) -> None:
    """All of an answer at once; a reader that went away (``| head``) ends the command
    quietly (ktrace.cli turns the BrokenPipeError into exit 0)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def _plain_rows(answer: Answer) -> list[dict[str, Any]]:
    return [{k: plain(v) for k, v in row.items()} for row in answer.rows]


def _csv_cell(value: Any) -> Any:
    value = plain(value)
    if isinstance(value, (list, dict)):
        return orjson.dumps(value).decode()
    return "" if value is None else value


def _csv(answer: Answer) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(answer.view.keys)
    writer.writerows([[_csv_cell(row[k]) for k in answer.view.keys] for row in answer.rows])
    return buffer.getvalue()


def _write_csv_files(answers: Sequence[Answer], directory: str | None) -> None:
    assert directory, "sections_output_options refuses csv without --output-dir"
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    for answer in answers:
        path = folder / f"{answer.view.name}.csv"
        path.write_text(_csv(answer), encoding="utf-8")
        click.echo(f"wrote {path} ({len(answer.rows)} rows)", err=True)


def _names(answers: Sequence[Answer]) -> list[str]:
    seen: dict[str, None] = {}
    for answer in answers:
        view = answer.view
        if not view.names:
            continue
        for row in answer.rows:
            kind = view.kind or str(row.get("kind") or "").lower()
            name = "/".join(str(row[k]) for k in view.names if row.get(k) is not None)
            if name:
                seen.setdefault(f"{kind}/{name}" if kind else name, None)
    return list(seen)


def table_text(answer: Answer, out: Output, *, section: str | None = None) -> str:
    """The answer as a table; ``section`` names it in the note on columns left out (an
    answer's notes reach stderr before its sections do)."""
    wide = out.fmt == "wide"
    columns = [c for c in answer.view.columns if c.show == "table" or (wide and c.show == "wide")]
    dated = {c.key for c in columns if c.kind == "clock" and not _one_day(answer, c)}
    cells = [[("≥" if c.at_least and row[c.at_least] else "")
              + _cell(row[c.key], c, now=answer.now, wide=wide, dated=c.key in dated)
              + _ago(row.get(c.since) if c.since else None, answer.now)
              for c in columns] for row in answer.rows]
    caps = [c.max_width or (WIDE_CELL_MAX if wide else None) for c in columns]
    widths = [min(max([len(c.title)] + [len(r[i]) for r in cells]), caps[i] or 10**6)
              for i, c in enumerate(columns)]
    ways = [c.gives_way(answer.rows) for c in columns]
    if not wide and out.width:
        shown = _columns_shown(columns, ways, widths, out.width)
        if len(shown) < len(columns):
            left = [columns[i].title for i in range(len(columns)) if i not in shown]
            where = f" of {section}" if section else ""
            click.echo(f"note: {', '.join(left)} left out{where} to fit {out.width} columns: "
                       f"-o wide or -o json shows every column", err=True)
            columns, ways = [columns[i] for i in shown], [ways[i] for i in shown]
            widths, cells = [widths[i] for i in shown], [[r[i] for i in shown] for r in cells]
        widths = fit(widths, ways,
                     out.width - len(GUTTER) * (len(widths) - 1))
    lines = ([[c.title for c in columns]] if out.headers else []) + cells
    return "".join(GUTTER.join(clip(v, w, middle=way == "name").ljust(w)
                               for v, w, way in zip(line, widths, ways)).rstrip()
                   + "\n" for line in lines)


def fit(widths: list[int], gives_way: list[str], room: int) -> list[int]:
    """Shrink the widest prose columns to READABLE_WIDTH, then the widest names, then both
    to MIN_WIDTH, one character at a time, until the columns fit ``room``; ``whole``
    columns keep their width."""
    widths = list(widths)
    for floor, classes in ((READABLE_WIDTH, ("prose",)), (READABLE_WIDTH, ("name",)),
                           (MIN_WIDTH, ("prose", "name"))):
        candidates = [i for i, g in enumerate(gives_way) if g in classes]
        while sum(widths) > room and candidates:
            widest = max(candidates, key=lambda i: widths[i])
            if widths[widest] <= floor:
                break
            widths[widest] -= 1
    return widths


def _columns_shown(columns: Sequence[Column], ways: list[str], widths: list[int],
                   width: int) -> list[int]:
    """The indexes of the columns a table ``width`` characters wide keeps: while they do not
    fit with prose and names at READABLE_WIDTH and the rest whole, the columns that may be
    dropped are left out, in their declared order. The others stay even when the table is
    then wider than the terminal: they are what the next command needs."""
    floors = [w if way == "whole" else min(w, READABLE_WIDTH) for way, w in zip(ways, widths)]
    shown = list(range(len(columns)))
    droppable = sorted((c.drop, i) for i, c in enumerate(columns) if c.drop is not None)
    while droppable and sum(floors[i] for i in shown) + len(GUTTER) * (len(shown) - 1) > width:
        shown.remove(droppable.pop(0)[1])
    return shown


def clip(text: str, width: int, *, middle: bool = False) -> str:
    """``text`` cut to ``width`` with ``…``: at the end (prose), or in the ``middle`` for a
    name — generated names differ in their last characters (web-857bb4bd9d-84bp4)."""
    text = text.replace("\n", " ")
    if len(text) <= width:
        return text
    if middle and width >= 5:
        tail = (width - 1) // 2
        return text[:width - 1 - tail] + "…" + text[-tail:]
    return text[:width - 1] + "…"
