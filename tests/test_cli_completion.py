"""Shell completion of object names from the database, asked as bash asks (zsh and fish
reach the same callback)."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import pytest


def complete(words: str, *, env: dict[str, str] | None = None) -> list[str]:
    """What `ktrace` offers for the last of ``words`` (click's completion protocol)."""
    environ = {k: v for k, v in os.environ.items() if k != "KTRACE_DB"} | {
        "_KTRACE_COMPLETE": "bash_complete", "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1)} | (env or {})
    out = subprocess.run([sys.executable, "-c", "from ktrace.entry import main; main()"],
                         env=environ, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and not out.stderr, out.stderr
    return [line.split(",", 1)[1] for line in out.stdout.splitlines() if line.startswith("plain,")]


def names(db: str, kind: str, prefix: str) -> list[str]:
    con = duckdb.connect(db, read_only=True)
    try:
        return [n for (n,) in con.execute(
            "SELECT DISTINCT name FROM raw_events WHERE kind = ? AND starts_with(name, ?) "
            "ORDER BY name", [kind, prefix]).fetchall()]
    finally:
        con.close()


def test_pod_names_complete_from_ktrace_db(demo_db: str):
    offered = complete("ktrace timeline w", env={"KTRACE_DB": demo_db})
    assert offered and offered == names(demo_db, "Pod", "w")


def test_kind_slash_name_completes_from_db_option(demo_db: str):
    offered = complete(f"ktrace explain --db {demo_db} deploy/")
    assert offered and offered == [f"deploy/{n}" for n in names(demo_db, "Deployment", "")]
    assert complete(f"ktrace timeline --db {demo_db} po/") == \
        [f"po/{n}" for n in names(demo_db, "Pod", "")]


@pytest.mark.parametrize("words", ["ktrace timeline --db /nonexistent.duckdb w",
                                   "ktrace timeline --db {db} nosuchkind/x"])
def test_nothing_to_complete_prints_nothing(words: str, demo_db: str):
    assert complete(words.format(db=demo_db)) == []
