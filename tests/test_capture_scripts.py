"""Every script that makes committed test or bench data says how to run it in one form —
``.venv/bin/python PATH`` (``-m MODULE`` for bench's, run as a package like the rest of
bench/), from the repository root with README's venv — and that form gets past its imports
(a script run by path has its own folder, not the root, on sys.path)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.relative_to(ROOT).as_posix()
                 for p in [*ROOT.glob("tests/data/**/capture*.py"), *ROOT.glob("bench/capture*.py")])
INSTRUCTION = re.compile(r"^    (\S+) (-m )?(\S+)", re.M)


def instructions(script: str) -> list[tuple[str, str]]:
    """(interpreter, what it runs) of each run line of the script's docstring."""
    text = (ROOT / script).read_text(encoding="utf-8")
    docstring = text.split('"""', 2)[1]
    return [(python, f"-m {target}" if module else target)
            for python, module, target in INSTRUCTION.findall(docstring) if "python" in python]


def own_form(script: str) -> str:
    if script.startswith("bench/"):
        return "-m " + script.removesuffix(".py").replace("/", ".")
    return script


def test_there_are_capture_scripts() -> None:
    assert "tests/data/controlplane/capture.py" in SCRIPTS and "bench/capture.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_capture_script_names_itself_with_the_projects_venv(script: str) -> None:
    found = instructions(script)
    assert found, f"{script}: no run instruction in its docstring"
    assert set(found) == {(".venv/bin/python", own_form(script))}


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_instruction_gets_past_the_imports(script: str) -> None:
    """The script's top level, run as its instruction runs it (not as __main__: that would
    start a control plane)."""
    if script.startswith("bench/"):
        code = f"import {own_form(script)[3:]}"
    else:
        code = (f"import runpy, sys; sys.path[0] = {str((ROOT / script).parent)!r}; "
                f"runpy.run_path({script!r}, run_name='capture')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr.splitlines()[-1:]
