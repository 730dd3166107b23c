"""docs/architecture.md stays current: its command table names every command of the
``ktrace`` group, and every package path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

import click

from ktrace.cli import cli

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text()


def commands_listed(text: str) -> set[str]:
    """The commands the "Commands" table names: the first cell of each row."""
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([\w-]+)` \|", section, re.M))


def test_every_command_is_listed():
    with click.Context(cli) as ctx:
        commands = set(cli.list_commands(ctx))
    assert len(commands) > 10
    assert commands_listed(DOC) == commands


def test_the_check_sees_a_missing_command():
    table = "\n## Commands\n\n| command | what |\n|---|---|\n| `record` | r |\n| `replay` | p |\n"
    assert commands_listed(table + "\n## Next\n| `stuck` | s |\n") == {"record", "replay"}


def test_every_path_named_exists():
    named = set(re.findall(r"`((?:schemas|transports|recorder|replayer|ktrace|tests|compose)"
                           r"/[\w./-]*)`", DOC))
    assert len(named) > 10
    assert sorted(p for p in named if "<" not in p and not any(ROOT.glob(p.rstrip("/")))) == []
