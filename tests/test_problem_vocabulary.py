"""The problems `ktrace stuck` can print, read from the SQL that makes them (problems_at and
the models it unions), held equal to what `stuck`'s schema (ktrace/views.py, docs/cli.md)
and `explain`'s sentences name."""

from __future__ import annotations

import re
from pathlib import Path

from ktrace.views import STUCK
from replayer.analyses.explain import PROBLEM_STATES

SQL = Path(__file__).parent.parent / "replayer" / "sql"
#: a literal a value expression can yield: alone, or after THEN / ELSE
_YIELDED = re.compile(r"(?:^|\bTHEN|\bELSE)\s*'([a-z_]+)'")


def _code(model: str) -> str:
    """The model's SQL without its comments (a string may hold '--': none of these does)."""
    return re.sub(r"--[^\n]*", "", (SQL / f"{model}.sql").read_text(encoding="utf-8"))


def _expressions(code: str, alias: str) -> list[str]:
    """Each select-list expression named ``AS alias``: back from the alias to the comma or
    SELECT that opens it, parentheses balanced."""
    found = []
    for m in re.finditer(rf"\bAS {alias}\b", code):
        depth, i = 0, m.start() - 1
        while i >= 0:
            if code[i] == ")":
                depth += 1
            elif code[i] == "(":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (code[i] == "," or code[:i + 1].upper().endswith("SELECT")):
                break
            i -= 1
        found.append(code[i + 1:m.start()].strip())
    return found


def _yielded(expression: str) -> set[str]:
    return set(_YIELDED.findall(expression))


def _stuck_states(model: str) -> set[str]:
    """The states a findings model marks stuck: each SELECT's `AS state` paired with its
    `AS stuck` — none where stuck is false, none but the one it names where it is
    `state = '…'`."""
    code = _code(model)
    states, stucks = _expressions(code, "state"), _expressions(code, "stuck")
    assert len(states) == len(stucks), model
    found: set[str] = set()
    for state, stuck in zip(states, stucks):
        only = re.fullmatch(r"state = '([a-z_]+)'", stuck)
        found |= set() if stuck == "false" else {only.group(1)} if only else _yielded(state)
    return found


def sql_problems() -> set[str]:
    """Every problem problems_at can yield: its own and its unioned models' `AS problem`
    literals, and workload_problems_at's stuck findings (the state is the problem)."""
    assert "f.state AS problem" in _code("workload_problems_at")
    assert re.search(r"WHERE f\.stuck\s*$", _code("workload_problems_at"))
    problems = {p for model in ("problems_at", "not_running_at", "drain_blocked_at")
                for e in _expressions(_code(model), "problem") for p in _yielded(e)}
    return problems | {s for model in ("object_findings_at", "service_findings_at",
                                       "node_findings_at") for s in _stuck_states(model)}


def test_stuck_names_every_problem_the_sql_yields():
    [column] = [c for c in STUCK.columns if c.key == "problem"]
    listed = set(re.split(r", | or ", column.doc))
    assert listed == sql_problems()


def test_explain_words_every_problem():
    assert set(PROBLEM_STATES) == sql_problems()


def test_the_reading_sees_a_literal_a_case_and_a_stuck_flag():
    """The parser itself, on a SELECT of each form the models use."""
    code = ("SELECT a, CASE WHEN x IN ('A', 'B') THEN 'one' ELSE 'two' END AS state, f(b, c) "
            "AS stuck FROM t UNION ALL SELECT 'three' AS state, false AS stuck")
    assert _expressions(code, "state") == [
        "CASE WHEN x IN ('A', 'B') THEN 'one' ELSE 'two' END", "'three'"]
    assert _expressions(code, "stuck") == ["f(b, c)", "false"]
    assert _yielded(_expressions(code, "state")[0]) == {"one", "two"}
