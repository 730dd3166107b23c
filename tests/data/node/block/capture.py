"""Record a block volume the real node's kubelet cannot map, with ``ktrace record``.

    .venv/bin/python tests/data/node/block/capture.py OUT_DIR

Starts a control plane with one kwok node and the real node (tests/data/node/capture.py
recorded_node), runs ``ktrace record`` (default kinds) into OUT_DIR/recording and plays, in
namespace ``block``, a local PersistentVolume of volumeMode Block whose device does not
exist on the node, its claim and pod ``rawdisk`` using it (tests/node_workloads.py
block_volume_missing): the kubelet fails before it makes any loop device or mount. Waits
past ``ktrace stuck``'s 60 s threshold, prints the objects and writes OUT_DIR/versions.txt.
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
        block = namespace(plane, "block")
        w.apply(plane, *w.block_volume_missing(block))
        time.sleep(75)  # FailedMapVolume repeats with the volume manager's back-off
        print(plane.kubectl("get", "pods,pvc,pv", "-A", "-o", "wide"))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
