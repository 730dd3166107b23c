"""Record the namespace controller's NamespaceDeletionGroupVersionParsingFailure (issue 25's
catalogue row): a namespace deleted while API discovery lists a groupVersion that does not
parse.

    .venv/bin/python tests/data/controlplane/groupversion/capture.py OUT_DIR

On a control plane of its own (tests/infra/k8s.py: the real kube-apiserver with its
aggregator, kube-controller-manager and kube-scheduler, one kwok node), with extension_api.py
(HTTPS on 127.0.0.1, stopped by PID) as the backend of an ExternalName Service
`widgets-system/widgets-api` (localhost), ``ktrace record`` (default kinds) records into
OUT_DIR/recording:

  tidy     APIService `v1.widgets.ktrace.test`, created through the API, sends group
           widgets.ktrace.test to the backend, whose own discovery says groupVersion
           `widgets.ktrace.test/v1/v1`. The aggregator never passes that on: it lists the group
           and version of the APIService object. Namespace `tidy` (a ConfigMap, a pod) is
           deleted and goes.
  blocked  CustomResourceDefinition `widgets.widgets.ktrace.test` written straight into etcd
           (Established, as its controllers would leave it) with spec.group
           `widgets.ktrace.test/v1` — the groupVersion typed where the group belongs: the API
           server's validation refuses a group that is not a DNS subdomain, and an object
           whose name holds a `/` never reaches the API server's cache, so an APIService (whose
           discovered group is read from its name) cannot carry one; a CRD's discovered group
           is its spec.group. The aggregated discovery then lists group
           `widgets.ktrace.test/v1` version v1, which the controller-manager's discovery client
           joins to `widgets.ktrace.test/v1/v1`. Namespace `blocked` (a ConfigMap, a pod) is
           deleted and stays Terminating.

then waits past ``ktrace stuck``'s 60 s threshold. Writes OUT_DIR/versions.txt.
"""

from __future__ import annotations

import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from tests.data.controlplane.capture import Play, server_and_recorder, versions  # noqa: E402
from tests.data.replayer.capture import pod  # noqa: E402
from tests.infra.k8s import LocalControlPlane  # noqa: E402

EXTENSION_API = Path(__file__).with_name("extension_api.py")
SERVICE = {"namespace": "widgets-system", "name": "widgets-api"}


def malformed_crd() -> dict:
    """A namespaced kind whose group is a groupVersion, with the metadata the API server and
    the status the CRD controllers would write, now."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.widgets.ktrace.test", "uid": str(uuid.uuid4()), "creationTimestamp": now},
        "spec": {"group": "widgets.ktrace.test/v1", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}]},
        "status": {"acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                     "listKind": "WidgetList"},
                   "storedVersions": ["v1"],
                   "conditions": [{"type": t, "status": "True", "reason": r, "message": m,
                                   "lastTransitionTime": now}
                                  for t, r, m in (("NamesAccepted", "NoConflicts", "no conflicts found"),
                                                  ("Established", "InitialNamesAccepted",
                                                   "the initial names have been accepted"))]}}


def api_service(group: str, port: int) -> dict:
    """An APIService of GROUP, version v1, served by extension_api.py on PORT."""
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": f"v1.{group}"},
            "spec": {"group": group, "version": "v1", "service": SERVICE | {"port": port},
                     "insecureSkipTLSVerify": True, "groupPriorityMinimum": 1000, "versionPriority": 15}}


def populated(play: Play, ns: str) -> None:
    """Namespace NS with a ConfigMap and a running pod."""
    play.namespace(ns)
    play.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": ns}},
               pod("app", ns))
    play.k("wait", "--for=condition=Ready", "pod/app", "-n", ns, "--timeout=60s")


def scenario(plane: LocalControlPlane, port: int) -> None:
    play = Play(plane)
    play.namespace(SERVICE["namespace"])
    play.apply({"apiVersion": "v1", "kind": "Service", "metadata": SERVICE,
                "spec": {"type": "ExternalName", "externalName": "localhost"}})
    populated(play, "tidy")
    populated(play, "blocked")
    play.apply(api_service("widgets.ktrace.test", port))
    play.k("wait", "--for=condition=Available", "apiservice/v1.widgets.ktrace.test", "--timeout=60s")
    play.k("delete", "namespace", "tidy", "--wait=false")
    play.k("wait", "--for=delete", "namespace/tidy", "--timeout=60s")
    crd = malformed_crd()
    plane.write_storage(f"/registry/apiextensions.k8s.io/customresourcedefinitions/{crd['metadata']['name']}", crd)
    time.sleep(5)  # the CRD's discovery
    play.k("delete", "namespace", "blocked", "--wait=false")
    time.sleep(75)  # past stuck's 60 s


def main(out: Path) -> None:
    plane = LocalControlPlane(work_dir=out / "plane", nodes=1, stage_set="race")
    plane.start()
    (out / "versions.txt").write_text(versions(plane))
    with server_and_recorder(plane, out, EXTENSION_API) as port:
        scenario(plane, port)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
