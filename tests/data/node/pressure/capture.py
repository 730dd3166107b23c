"""Record the kubelet's verdicts that need a kubelet configured for them, on the real node,
with ``ktrace record``: the causes of docs/causes.md the catalogue capture's node cannot give.

    .venv/bin/python tests/data/node/pressure/capture.py OUT_DIR

The real node's kubelet runs with ``maxPods: 3``, a ``pid.available`` hard eviction threshold
PID_MARGIN tasks below what the machine has free when the node starts, a 30 s
``evictionPressureTransitionPeriod`` and the node feature RestartAllContainersOnContainerExits
turned off (tests/data/node/capture.py recorded_node), and plays (tests/node_workloads.py),
each in a namespace of its own:

  features  ``restartall`` (bound) and ``restartall-scheduled`` asking for that feature
  limits    pods past their ephemeral-storage limits, the pod's total and a container's own
  pids      ``forker`` starting FORKED processes: PIDPressure, the kubelet evicts it; while the
            condition holds, ``latecomer`` bound to the node is refused
  pods      three bound sleepers, then ``overflow``: a fourth (OutOfpods)

then waits past ``ktrace stuck``'s 60 s threshold and prints the pods' phases. Writes
OUT_DIR/versions.txt and OUT_DIR/pids.txt (the threshold and what the machine had).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from tests import node_workloads as w  # noqa: E402
from tests.data.node.capture import namespace, recorded_node  # noqa: E402
from tests.infra.node import NODE_NAME  # noqa: E402

MAX_PODS = 3
# The threshold sits PID_MARGIN tasks below the free count at the node's start (the node and
# the recorder take a few hundred; the machine's other users come and go), FORKED above it.
PID_MARGIN = 1000
FORKED = 3000


def free_pids() -> tuple[int, int]:
    """The kubelet's own reckoning (pkg/kubelet/stats/pidlimit): the least of pid_max and
    threads-max, less the tasks /proc/loadavg counts."""
    most = min(int(Path(f"/proc/sys/kernel/{name}").read_text()) for name in ("pid_max", "threads-max"))
    tasks = int(Path("/proc/loadavg").read_text().split()[3].split("/")[1])
    return most, tasks


def kubelet_settings(out: Path) -> dict[str, Any]:
    most, tasks = free_pids()
    threshold = most - tasks - PID_MARGIN
    (out / "pids.txt").write_text(f"max {most}, tasks {tasks} at the node's start: pid.available < {threshold}\n")
    return {
        "maxPods": MAX_PODS,
        "evictionHard": {"pid.available": str(threshold)},
        "evictionPressureTransitionPeriod": "30s",
        "featureGates": {"RestartAllContainersOnContainerExits": False},
    }


def wait(plane: Any, what: str, namespace: str | None, condition: str, timeout: str = "100s") -> None:
    scope = ["-n", namespace] if namespace else []
    plane.kubectl("wait", f"--for={condition}", what, *scope, f"--timeout={timeout}")


def main(out: Path) -> None:
    with recorded_node(out, kubelet_settings=lambda: kubelet_settings(out)) as plane:
        w.apply(plane, *w.restart_all_rule(namespace(plane, "features")))
        started = time.monotonic()
        limits = namespace(plane, "limits")
        w.apply(plane, *w.ephemeral_storage_limits(limits))
        for name in ("podlimit", "ctrlimit"):
            wait(plane, f"pod/{name}", limits, "jsonpath={.status.phase}=Failed")
        pids = namespace(plane, "pids")
        w.apply(plane, w.pid_hog(pids, FORKED))
        wait(plane, f"node/{NODE_NAME}", None, "condition=PIDPressure")
        w.apply(plane, w.bound("latecomer", pids, w.sleeper()))
        wait(plane, "pod/forker", pids, "jsonpath={.status.phase}=Failed")
        wait(plane, f"node/{NODE_NAME}", None, "condition=PIDPressure=False")
        pods = namespace(plane, "pods")
        *fillers, overflow = w.pods_filling(pods, MAX_PODS)
        w.apply(plane, *fillers)
        for filler in fillers:
            wait(plane, f"pod/{filler['metadata']['name']}", pods, "condition=Ready")
        w.apply(plane, overflow)
        time.sleep(max(10.0, 75 - (time.monotonic() - started)))  # restartall-scheduled past 60 s
        print(plane.kubectl("get", "pods", "-A", "-o", "wide"))
        print(plane.kubectl("get", "node", NODE_NAME, "-o", "jsonpath={.status.conditions}"))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
