"""Record workloads that wait on pods (tests/node_workloads.py) on the real node with
``ktrace record``.

    .venv/bin/python tests/data/node/workloads/capture.py OUT_DIR

Starts a control plane with one kwok node and the real node (tests/data/node/capture.py
recorded_node), runs ``ktrace record`` (default kinds) into OUT_DIR/recording and plays, each
in a namespace of its own:

  svc      Services without a ready endpoint: ``unready`` (its pod fails its readiness
           probe), ``typo`` (its selector matches no pod); ``web`` healthy beside them
  sts      StatefulSet ``db`` Ready, then updated to a revision that never gets Ready
  ds       DaemonSet ``agent`` whose pod on the real node cannot have its host port
  budgets  Deployment ``api`` under a matchExpressions budget and an empty-selector one
  preempt  a system-node-critical pod bound to the real node with no CPU left for it: the
           kubelet preempts pod ``victim``

then waits past ``ktrace stuck``'s 60 s threshold. Writes OUT_DIR/versions.txt.
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
        w.apply(plane, *w.services_without_ready_endpoints(namespace(plane, "svc")))
        w.apply(plane, *w.budgets_by_expression(namespace(plane, "budgets")))
        ds = namespace(plane, "ds")
        w.apply(plane, w.daemonset_port_taken(ds)[0])
        plane.kubectl("wait", "--for=condition=Ready", "pod/holder", "-n", ds, "--timeout=60s")
        w.apply(plane, *w.daemonset_port_taken(ds)[1:])
        w.statefulset_update_held(plane, namespace(plane, "sts"))
        w.critical_pod_preempting(plane, namespace(plane, "preempt"))
        time.sleep(80)  # the update held, the port taken, the probe failing: past 60 s


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
