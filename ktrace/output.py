"""One way to print rows: table, json or csv, chosen with -o."""

from __future__ import annotations

import csv
import sys
from typing import Any, Callable, Sequence

import click
import orjson

FORMATS = ("table", "json", "csv")


def output_option(func: Callable) -> Callable:
    """-o/--output table|json|csv, shared by every command that prints rows."""
    return click.option("-o", "--output", "output", type=click.Choice(FORMATS), default="table",
                        show_default=True, help="Output format.")(func)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, dict, tuple)):
        return orjson.dumps(value, default=str).decode()
    return str(value)


def print_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str,
               *, title: str | None = None) -> None:
    if fmt == "json":
        sys.stdout.write(orjson.dumps([dict(zip(columns, r)) for r in rows], default=str,
                                      option=orjson.OPT_INDENT_2).decode() + "\n")
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_cell(v) for v in r] for r in rows])
    else:
        _print_table(columns, rows, title)


def _print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None) -> None:
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()

    if title:
        click.echo(title)
    click.echo(line(list(columns)))
    for row in cells:
        click.echo(line(row))
    if not rows:
        click.echo("(no rows)")
