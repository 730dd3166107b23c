"""``ktrace record`` beside the real node's tests (tests/test_node.py, tests/test_node_drain.py):
a recorder process of their own, replayed into DuckDB when the scenario is over, and the
kubectl reads the tests check it against."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from tests.infra.k8s import LocalControlPlane
from tests.replayer_data import load_recording

REPO = Path(__file__).resolve().parents[1]


def api_time(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def get(plane: LocalControlPlane, *args: str) -> dict[str, Any]:
    return json.loads(plane.kubectl("get", *args, "-o", "json"))


class Recording:
    """``ktrace record`` into a local log, as a process of its own; replayed on stop."""

    def __init__(self, plane: LocalControlPlane, directory: Path, namespace: str,
                 kinds: str = "pods,endpointslices,replicasets,deployments,events,jobs") -> None:
        self.directory = directory
        run_ktrace = "import sys; from ktrace.cli import main; sys.argv[0] = 'ktrace'; main()"
        argv = [sys.executable, "-c", run_ktrace, "record", "--kubeconfig", str(plane.kubeconfig),
                "--out", str(directory / "log"), "--state-dir", str(directory / "state"), "-n", namespace,
                "--kinds", kinds]
        self.log = (directory / "recorder.log").open("wb")
        self.process = subprocess.Popen(argv, stderr=self.log, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
        time.sleep(3)  # its first LIST is in before the scenario starts

    def replay(self) -> duckdb.DuckDBPyConnection:
        self.process.terminate()
        code = self.process.wait(timeout=30)
        self.log.close()
        assert code == 0, (self.directory / "recorder.log").read_text()[-2000:]
        return load_recording(str(self.directory / "replay.duckdb"), str(self.directory / "log"), store_objects=True)
