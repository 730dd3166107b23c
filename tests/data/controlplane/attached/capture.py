"""Record a pod being deleted whose volume's VolumeAttachment still says attached (issue 25's
catalogue row `attached`, read by the volume_detach cause).

    .venv/bin/python tests/data/controlplane/attached/capture.py OUT_DIR

On a control plane of its own (tests/infra/k8s.py: the real kube-apiserver,
kube-controller-manager and kube-scheduler, one kwok node annotated
`volumes.kubernetes.io/controller-managed-attach-detach`, as a kubelet annotates its Node so
that the attach/detach controller attaches for it), ``ktrace record`` (default kinds) records
into OUT_DIR/recording, in namespace `attached`: a CSI volume of a driver that needs
attaching (CSIDriver `attach.csi.ktrace.test`, attachRequired), its claim, and pod `db` using
it. The attach/detach controller creates the VolumeAttachment; no external-attacher runs
here, so its status is written by hand as one writes it (`attached: true`). Pod `db` is then
deleted while kwok holds its container running (a 900 s stop delay, as a container that
ignores SIGTERM until its grace period): the controller keeps the volume attached (a pod
whose containers run is not terminated) — then waits past ``ktrace stuck``'s 60 s
threshold. Writes OUT_DIR/versions.txt.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from tests.data.controlplane.capture import Play, claim, pv, recording, uses, versions, with_volume  # noqa: E402
from tests.data.replayer.capture import pod  # noqa: E402
from tests.infra.k8s import LocalControlPlane  # noqa: E402

DRIVER = "attach.csi.ktrace.test"
NS = "attached"


def scenario(plane: LocalControlPlane) -> None:
    play = Play(plane)
    play.k("annotate", "node", plane.node_names[0], "volumes.kubernetes.io/controller-managed-attach-detach=true")
    play.namespace(NS)
    play.apply({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": DRIVER},
                "spec": {"attachRequired": True}},
               pv("disk-pv", "manual", source={"csi": {"driver": DRIVER, "volumeHandle": "disk-1"}}),
               claim("disk", NS, "manual", volume="disk-pv"))
    play.bound(NS, "disk")
    play.apply(with_volume(pod("db", NS, stop_delay="900s", grace=30), uses("disk")))
    play.ready(NS, "db")
    attachment = wait_for_attachment(play)
    # what the external-attacher writes once the driver attached the volume
    play.k("patch", "volumeattachment", attachment, "--subresource=status", "--type=merge",
           "-p", json.dumps({"status": {"attached": True}}))
    time.sleep(3)
    play.k("delete", "pod", "db", "-n", NS, "--wait=false")
    time.sleep(100)  # past the 30 s grace period and stuck's 60 s


def wait_for_attachment(play: Play) -> str:
    """The name of the VolumeAttachment the attach/detach controller creates for disk-pv."""
    for _ in range(60):
        found = play.k("get", "volumeattachment", "-o",
                       "jsonpath={.items[?(@.spec.source.persistentVolumeName=='disk-pv')].metadata.name}").strip()
        if found:
            return found
        time.sleep(1)
    raise RuntimeError("the attach/detach controller created no VolumeAttachment for disk-pv")


def main(out: Path) -> None:
    plane = LocalControlPlane(work_dir=out / "plane", nodes=1, stage_set="race")
    plane.start()
    (out / "versions.txt").write_text(versions(plane))
    with recording(plane, out):
        scenario(plane)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
