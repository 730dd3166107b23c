"""docs/causes.md — every reason string Kubernetes writes and the ktrace cause that reads
it — held equal to the SQL's cause vocabulary, to the tests, and to the Kubernetes source.

``untested`` rows (handled by the SQL, in no test's data) are allowed and counted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from replayer import db, projections
from tests.k8s_source import MODCACHE, source_file

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "causes.md"
HEADER = "| Reason | Source | Meaning | ktrace cause | Test |"
#: Source cells that are not a file of kubernetes/kubernetes
NOT_A_FILE = {"runtime", "ktrace"}
TEST_REF = re.compile(r"tests/(test_\w+\.py)::(\w+)")


@dataclass(frozen=True)
class Row:
    reason: str
    source: str
    causes: tuple[str, ...]  # empty when unhandled
    tests: tuple[tuple[str, str], ...]  # (file, function)
    untested: bool
    cells: tuple[str, ...]


def catalogue() -> list[Row]:
    """The rows of every table under HEADER."""
    rows, in_table = [], False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line == HEADER:
            in_table = True
        elif in_table and line.startswith("|") and not line.startswith("|---"):
            rows.append(_row(line))
        elif not line.startswith("|"):
            in_table = False
    return rows


def _row(line: str) -> Row:
    cells = tuple(c.strip() for c in line.strip("|").split(" | "))
    assert len(cells) == 5, line
    reason, source, _, cause, test = cells
    return Row(reason=_code(reason), source=source,
               causes=() if cause.startswith("unhandled:") else tuple(
                   re.findall(r"`([a-z_]+)`", cause)),
               tests=tuple(TEST_REF.findall(test)),
               untested=test.startswith("untested"), cells=cells)


def _code(cell: str) -> str:
    match = re.fullmatch(r"`([^`]+)`", cell)
    assert match, f"a Reason cell is one code span: {cell!r}"
    return match[1]


def sql_vocabulary(tmp_path: Path) -> set[str]:
    """The causes the SQL can name: the seed tables of an empty database, and the causes
    any model names in its SQL (the analyses' rows exist only over data)."""
    con = db.open_db(str(tmp_path / "empty.duckdb"))
    try:
        seeded = {r[0] for r in con.execute(
            "SELECT cause FROM cause_scores UNION SELECT cause FROM cause_advice").fetchall()}
    finally:
        con.close()
    named = {c for m in projections.models().values()
             for c in re.findall(r"'([a-z_]+)' AS cause\b", m.body)}
    return seeded | named


NOT_WRITTEN_HEADING = "## Strings Kubernetes does not write into objects"
NOT_WRITTEN_ITEM = re.compile(r"^- `([^`]+)` — ((?:pkg|staging)/[\w./-]+\.go):", re.M)


def not_written() -> list[tuple[str, str]]:
    """(string, source file) of the list of strings no component writes into an object."""
    text = DOC.read_text(encoding="utf-8")
    assert NOT_WRITTEN_HEADING in text
    return NOT_WRITTEN_ITEM.findall(text.split(NOT_WRITTEN_HEADING, 1)[1])

@pytest.fixture(scope="module")
def rows() -> list[Row]:
    return catalogue()


def test_every_row_is_well_formed(rows: list[Row]):
    assert len(rows) > 200
    for row in rows:
        assert row.source in NOT_A_FILE or re.fullmatch(
            r"(pkg|plugin|staging/src/k8s\.io/[a-z-]+)/[\w./-]+\.go", row.source), row.cells
        if row.causes:
            assert row.tests or row.untested, (
                f"a handled row names its test or 'untested': {row.cells}")
        else:
            assert row.cells[3].startswith("unhandled: ") and row.cells[4] == "—", row.cells


def test_every_cause_in_the_catalogue_is_in_the_sql(rows: list[Row], tmp_path: Path):
    vocabulary = sql_vocabulary(tmp_path)
    unknown = {(c, r.reason) for r in rows for c in r.causes if c not in vocabulary}
    assert unknown == set()


def test_every_sql_cause_is_in_the_catalogue(rows: list[Row], tmp_path: Path):
    named = {c for r in rows for c in r.causes}
    assert sql_vocabulary(tmp_path) - named == set()


def test_every_named_test_exists(rows: list[Row]):
    missing = set()
    for row in rows:
        for file, function in row.tests:
            path = ROOT / "tests" / file
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            if not re.search(rf"^def {function}\(", text, re.M):
                missing.add(f"{file}::{function}")
    assert missing == set()
    untested = [f"{r.reason} ({r.causes[0]})" for r in rows if r.untested]
    print(f"\n{len(untested)} handled rows no test shows yet: " + ", ".join(untested))


#: Go's comments and string literals, in the order a lexer meets them (a quote inside a
#: comment, a // inside a string, are not what they seem)
GO_TOKENS = re.compile(r"//[^\n]*|/\*.*?\*/|`[^`]*`|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'",
                       re.S)


def go_strings(path: Path) -> list[str]:
    """The string literals of a Go file (a reason in a comment or an identifier is not
    one Kubernetes writes)."""
    return [m[0][1:-1] for m in GO_TOKENS.finditer(path.read_text(encoding="utf-8"))
            if m[0][0] in "`\""]


def module_of(source: str) -> str:
    return source_file(source).relative_to(MODCACHE / "k8s.io").parts[0]


MODULES = sorted({module_of(r.source) for r in catalogue() if r.source not in NOT_A_FILE})


@pytest.mark.parametrize("module", MODULES)
def test_every_reason_is_a_string_in_the_kubernetes_source(rows: list[Row], module: str):
    if not (MODCACHE / "k8s.io" / module).is_dir():
        pytest.skip(f"the Go module cache has no k8s.io/{module} under {MODCACHE}: "
                    "compose/k8s/build.sh fills it")
    mine = [r for r in rows if r.source not in NOT_A_FILE and module_of(r.source) == module]
    files = {r.source: source_file(r.source) for r in mine}
    assert [s for s, p in files.items() if not p.exists()] == []
    strings = {s: go_strings(p) for s, p in files.items()}
    assert [(r.reason, r.source) for r in mine
            if not any(r.reason in s for s in strings[r.source])] == []


def test_strings_kubernetes_does_not_write_are_out_of_the_tables(rows: list[Row]):
    """A string no component writes cannot be in a recording: no row (and no rule) reads it."""
    listed = not_written()
    assert len(listed) >= 5
    assert {s for s, _ in listed} & {r.reason for r in rows} == set()
    present = [(s, src) for s, src in listed if (MODCACHE / "k8s.io" / module_of(src)).is_dir()]
    if not present:
        pytest.skip(f"the Go module cache has no Kubernetes source under {MODCACHE}")
    assert [(s, src) for s, src in present if not any(s in g for g in go_strings(source_file(src)))] == []
