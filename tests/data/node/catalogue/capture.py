"""Record the kubelet's own verdicts on the real node with ``ktrace record``: the causes of
docs/causes.md that only a node produces.

    .venv/bin/python tests/data/node/catalogue/capture.py OUT_DIR

Starts a control plane with one kwok node and the real node (tests/data/node/capture.py
recorded_node), runs ``ktrace record`` (default kinds) into OUT_DIR/recording and plays
(tests/node_workloads.py), each in a namespace of its own:

  taint    the node tainted NoExecute, pod ``untolerated`` bound to it: TaintToleration
  admit    pods bound by spec.nodeName that the kubelet refuses: NodeAffinity, NodePorts,
           PodOSSelectorNodeLabelDoesNotMatch, PodOSNotSupported, OutOf<extended resource>,
           OutOfephemeral-storage, AppArmor, SupplementalGroupsPolicyNotSupported
  stall    a failing postStart hook, an hour-long one (ContainerCreating), a Secret volume
           that does not exist, a readiness gate no controller sets
  ds       DaemonSet ``winagent`` whose pods the kubelet refuses: FailedDaemonPod
  jobs     Indexed Jobs ending FailedIndexes and MaxFailedIndexesExceeded

then waits past ``ktrace stuck``'s 60 s threshold and prints the pods' phases. Writes
OUT_DIR/versions.txt.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from tests import node_workloads as w  # noqa: E402
from tests.data.node.capture import namespace, recorded_node  # noqa: E402


def main(out: Path) -> None:
    with recorded_node(out) as plane:
        w.quarantined(plane, namespace(plane, "taint"))  # first: the taint evicts what runs
        w.advertise_dongle(plane)
        admit = namespace(plane, "admit")
        w.apply(plane, w.port_holder(admit))
        plane.kubectl("wait", "--for=condition=Ready", "pod/porter", "-n", admit, "--timeout=60s")
        w.apply(plane, *w.admission_rejections(admit))
        w.apply(plane, *w.kubelet_stalls(namespace(plane, "stall")))
        w.apply(plane, w.daemonset_rejected(namespace(plane, "ds")))
        w.apply(plane, *w.indexed_jobs_failing(namespace(plane, "jobs")))
        time.sleep(75)  # the hooks, the gate and the DaemonSet's retries past 60 s
        print(plane.kubectl("get", "pods,jobs", "-A", "-o", "wide"))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
