"""Record the real kubelet's graceful node shutdown and a pod-level memory eviction, on the
real node, with ``ktrace record``.

    .venv/bin/python tests/data/node/shutdown/capture.py OUT_DIR

The real node's kubelet runs with ``shutdownGracePeriod: 12s`` of which
``shutdownGracePeriodCriticalPods: 4s`` (its node shutdown manager then talks to the logind
stand-in on a private system bus, tests/infra/logind.py), and with ``systemReserved`` memory
leaving its pods 1 GiB (the cgroup of all pods is limited to that; the ``memory.available``
hard threshold of 100Mi applies to it too, as ``allocatableMemory.available``). It plays
(tests/node_workloads.py), each in a namespace of its own:

  memory    ``hog`` (pod-level requests 64Mi) holding HOG_MIB: MemoryPressure, the kubelet
            evicts it
  shutdown  the Deployment ``web``, pods ``stubborn`` and ``critical`` (system-node-critical)
            Running; then the operating system asks for a shutdown (logind's
            PrepareForShutdown): the kubelet stops them, regular pods first; once it released
            its delay lock, ``latecomer`` bound to the node is refused

then waits past ``ktrace stuck``'s 60 s threshold and prints the pods and the node's
conditions. Writes OUT_DIR/versions.txt and OUT_DIR/memory.txt (what the pods were left).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from tests import node_workloads as w  # noqa: E402
from tests.data.node.capture import namespace, recorded_real_node  # noqa: E402
from tests.data.node.pressure.capture import wait  # noqa: E402
from tests.infra.k8s import wait_for  # noqa: E402
from tests.infra.node import NODE_NAME  # noqa: E402

PODS_MEMORY_MIB = 1024
HOG_MIB = 960  # past the 924Mi the pods may use before the 100Mi threshold, under their 1 GiB


def kubelet_settings(out: Path) -> dict[str, Any]:
    total_kib = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                     if line.startswith("MemTotal:"))
    reserved_kib = total_kib - PODS_MEMORY_MIB * 1024
    (out / "memory.txt").write_text(f"MemTotal {total_kib}Ki: systemReserved memory {reserved_kib}Ki, "
                                    f"the pods {PODS_MEMORY_MIB}Mi\n")
    return {
        "shutdownGracePeriod": "12s",
        "shutdownGracePeriodCriticalPods": "4s",
        "systemReserved": {"memory": f"{reserved_kib}Ki"},
    }


def main(out: Path) -> None:
    with recorded_real_node(out, kubelet_settings=lambda: kubelet_settings(out)) as node:
        plane = node.plane
        memory = namespace(plane, "memory")
        w.apply(plane, w.pod_level_memory_hog(memory, HOG_MIB))
        wait(plane, "pod/hog", memory, "jsonpath={.status.reason}=Evicted", timeout="120s")
        wait(plane, f"node/{NODE_NAME}", None, "condition=MemoryPressure=False")
        shutdown = namespace(plane, "shutdown")
        w.apply(plane, *w.shutdown_bystanders(shutdown))
        plane.kubectl("rollout", "status", "deploy/web", "-n", shutdown, "--timeout=120s")
        for name in ("stubborn", "critical"):
            wait(plane, f"pod/{name}", shutdown, "condition=Ready")
        time.sleep(2)
        node.shut_down()
        asked = time.monotonic()
        assert node.logind is not None and node.process is not None
        wait_for(node.process, "the kubelet's delay lock released", node.logind.released, timeout=60)
        w.apply(plane, w.bound("latecomer", shutdown, w.sleeper()))
        wait(plane, "pod/latecomer", shutdown, "jsonpath={.status.phase}=Failed")
        time.sleep(max(5.0, 75 - (time.monotonic() - asked)))  # web's new pod past 60 s
        print(plane.kubectl("get", "pods", "-A", "-o", "wide"))
        print(plane.kubectl("get", "node", NODE_NAME, "-o", "jsonpath={.status.conditions}"))
        print(node.logind.log.read_text())


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
