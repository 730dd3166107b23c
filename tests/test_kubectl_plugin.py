"""`kubectl ktrace`: the CLI installed as kubectl-ktrace, found and run by a real kubectl
(the one compose/k8s/build.sh builds) through kubectl's plugin mechanism."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.infra.k8s import ensure_binaries


def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
    plugin = shutil.which("kubectl-ktrace")
    assert plugin, "kubectl-ktrace is not on PATH: install ktrace (pip install .)"
    env = {**os.environ, "PATH": f"{Path(plugin).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([str(ensure_binaries() / "kubectl"), *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_kubectl_lists_the_plugin() -> None:
    listed = kubectl("plugin", "list")
    assert any(line.endswith("/kubectl-ktrace") for line in listed.stdout.splitlines()), listed


def test_kubectl_runs_it_and_it_names_itself_as_kubectl_does() -> None:
    helped = kubectl("ktrace", "--help")
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("Usage: kubectl ktrace [OPTIONS] COMMAND [ARGS]...")
    wrong = kubectl("ktrace", "timeline", "--no-such-flag")
    assert wrong.returncode == 2
    assert "see 'kubectl ktrace timeline --help'" in wrong.stderr
