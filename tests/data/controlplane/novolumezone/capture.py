"""Record a scheduler profile without the VolumeZone plugin refusing a pod whose claim is
Bound to a PersistentVolume that does not exist (issue 25's catalogue row
`node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)`).

    .venv/bin/python tests/data/controlplane/novolumezone/capture.py OUT_DIR

On a control plane of its own (tests/infra/k8s.py: the real kube-apiserver,
kube-controller-manager and kube-scheduler, one kwok node) whose scheduler runs one profile,
`default-scheduler`, with VolumeZone disabled, and whose kube-controller-manager runs without
its PV controller (which would mark the claim Lost within milliseconds), ``ktrace record``
(default kinds) records into OUT_DIR/recording: claim `ghost/orphan` written Bound to `ghost-pv`
by hand (as the PV controller writes a binding) and pod `ghost/uses-orphan` using it, then
waits past ``ktrace stuck``'s 60 s threshold. Writes OUT_DIR/versions.txt. The default profile's
answer to the same claim (VolumeZone's `persistentvolume "ghost-pv" not found`) is binding/'s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from tests.data.controlplane.capture import Play, bound_to_ghost, recording, versions  # noqa: E402
from tests.infra.k8s import LocalControlPlane  # noqa: E402

#: the default profile but for VolumeZone, whose PreFilter would look the volume up first
WITHOUT_VOLUME_ZONE = {"schedulerName": "default-scheduler",
                       "plugins": {"multiPoint": {"disabled": [{"name": "VolumeZone"}]}}}


def main(out: Path) -> None:
    plane = LocalControlPlane(work_dir=out / "plane", nodes=1, stage_set="race",
                              controller_manager_flags=["--controllers=-persistentvolume-binder-controller"],
                              scheduler_profiles=[WITHOUT_VOLUME_ZONE])
    plane.start()
    (out / "versions.txt").write_text(versions(plane))
    with recording(plane, out):
        bound_to_ghost(Play(plane))
        time.sleep(75)  # past stuck's 60 s


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
