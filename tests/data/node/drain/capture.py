"""Record a graceful drain of the real node, blocked then allowed by a PodDisruptionBudget
(tests/node_workloads.py ``drain_blocked_then_allowed``), with ``ktrace record``.

    .venv/bin/python tests/data/node/drain/capture.py OUT_DIR

Starts a control plane with one kwok node and the real node (tests/data/node/capture.py
recorded_node), runs ``ktrace record`` (its default kinds: PodDisruptionBudgets and Nodes
among them) into OUT_DIR/recording and plays, in namespace ``drain``: the web Deployment's
two pods on the real node under a budget of minAvailable 2; ``kubectl drain`` cordons the
node and retries the evictions the budget refuses for 75 s, then gives up; the kwok node is
labelled as spare capacity, the budget relaxed to minAvailable 1 and the drain run again:
both pods evicted one after the other, their replacements on the kwok node; the node
uncordoned. Writes OUT_DIR/versions.txt and OUT_DIR/times.txt (when the drain was blocked
and when it passed, epoch seconds, and what kubectl drain printed when it gave up).
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
        # blocked past `ktrace stuck`'s 60 s threshold, as an incident would be
        drain = w.drain_blocked_then_allowed(plane, namespace(plane, "drain"), plane.node_names[0], blocked_s=75)
        (out / "times.txt").write_text(f"blocked {drain.blocked_at:.3f}\npassed {drain.passed_at:.3f}\n"
                                       f"refused {drain.refused}\n")
        time.sleep(3)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
