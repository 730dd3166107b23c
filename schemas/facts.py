"""The typed facts of the contract, extracted from a Kubernetes object as the API sent it.

Both sides use this: the recorder to fill the Record's ``meta`` and ``facts`` fields, the
replayer to fill the same fields for captures made without the recorder (``ktrace import``).
Only plain dict access: this runs once per watch event.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any, Callable

Obj = dict[str, Any]
Facts = tuple[str, dict[str, Any]]


@functools.lru_cache(maxsize=4096)
def parse_time(value: str | None) -> int | None:
    """RFC 3339 (Time or MicroTime) → microseconds since the epoch; None when absent/bad."""
    if not value:
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    return int(stamp.timestamp()) * 1_000_000 + stamp.microsecond


def extract_meta(obj: Obj) -> dict[str, Any]:
    md = obj.get("metadata") or {}
    return {
        "creationTimestamp": parse_time(md.get("creationTimestamp")),
        "deletionTimestamp": parse_time(md.get("deletionTimestamp")),
        "deletionGracePeriodSeconds": md.get("deletionGracePeriodSeconds"),
        "generation": md.get("generation"),
        "finalizers": md.get("finalizers") or [],
        "owners": [
            {
                "kind": o.get("kind", ""),
                "name": o.get("name", ""),
                "uid": o.get("uid", ""),
                "controller": bool(o.get("controller")),
                "blockOwnerDeletion": bool(o.get("blockOwnerDeletion")),
            }
            for o in md.get("ownerReferences") or ()
        ],
        "labels": md.get("labels") or {},
    }


def _conditions(items: list[Obj] | None) -> list[dict[str, Any]]:
    return [
        {
            "type": c.get("type", ""),
            "status": c.get("status", ""),
            "reason": c.get("reason"),
            "message": c.get("message"),
            "lastTransitionTime": parse_time(c.get("lastTransitionTime")),
            "lastHeartbeatTime": parse_time(c.get("lastHeartbeatTime")),
        }
        for c in items or ()
    ]


def _container(status: Obj, init: bool) -> dict[str, Any]:
    state = status.get("state") or {}
    name, detail = next(iter(state.items()), (None, {}))
    detail = detail or {}
    return {
        "name": status.get("name", ""),
        "init": init,
        "ready": bool(status.get("ready")),
        "restartCount": status.get("restartCount") or 0,
        "state": name,
        "reason": detail.get("reason"),
        "exitCode": detail.get("exitCode"),
        "startedAt": parse_time(detail.get("startedAt")),
        "finishedAt": parse_time(detail.get("finishedAt")),
    }


def pod_facts(obj: Obj) -> Facts:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    containers = [_container(c, True) for c in status.get("initContainerStatuses") or ()]
    containers += [_container(c, False) for c in status.get("containerStatuses") or ()]
    return "io.ktrace.PodFacts", {
        "phase": status.get("phase"),
        "nodeName": spec.get("nodeName"),
        "podIP": status.get("podIP"),
        "startTime": parse_time(status.get("startTime")),
        "terminationGracePeriodSeconds": spec.get("terminationGracePeriodSeconds"),
        "hasPreStop": any(
            ((c.get("lifecycle") or {}).get("preStop")) for c in spec.get("containers") or ()
        ),
        "claimNames": [
            v["persistentVolumeClaim"].get("claimName", "")
            for v in spec.get("volumes") or ()
            if v.get("persistentVolumeClaim")
        ],
        "conditions": _conditions(status.get("conditions")),
        "containers": containers,
    }


def endpointslice_facts(obj: Obj) -> Facts:
    endpoints = []
    for ep in obj.get("endpoints") or ():
        cond, target = ep.get("conditions") or {}, ep.get("targetRef") or {}
        endpoints.append({
            "addresses": ep.get("addresses") or [],
            "ready": cond.get("ready"),
            "serving": cond.get("serving"),
            "terminating": cond.get("terminating"),
            "nodeName": ep.get("nodeName"),
            "targetKind": target.get("kind"),
            "targetName": target.get("name"),
            "targetUid": target.get("uid"),
        })
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return "io.ktrace.EndpointSliceFacts", {
        "serviceName": labels.get("kubernetes.io/service-name"),
        "addressType": obj.get("addressType"),
        "endpoints": endpoints,
    }


def event_facts(obj: Obj) -> Facts:
    """core/v1 Event (involvedObject, source) and events.k8s.io/v1 (regarding, note) alike."""
    regarding = obj.get("regarding") or obj.get("involvedObject") or {}
    series = obj.get("series") or {}
    source = obj.get("source") or obj.get("deprecatedSource") or {}
    first = obj.get("eventTime") or obj.get("deprecatedFirstTimestamp") or obj.get("firstTimestamp")
    last = (series.get("lastObservedTime") or obj.get("deprecatedLastTimestamp")
            or obj.get("lastTimestamp") or first)
    count = series.get("count") or obj.get("deprecatedCount") or obj.get("count") or 1
    return "io.ktrace.EventFacts", {
        "reason": obj.get("reason"),
        "message": obj.get("note") if "note" in obj else obj.get("message"),
        "type": obj.get("type"),
        "action": obj.get("action"),
        "component": obj.get("reportingController") or source.get("component"),
        "reportingInstance": obj.get("reportingInstance") or source.get("host"),
        "regardingKind": regarding.get("kind"),
        "regardingNamespace": regarding.get("namespace"),
        "regardingName": regarding.get("name"),
        "regardingUid": regarding.get("uid"),
        "regardingFieldPath": regarding.get("fieldPath"),
        "count": count,
        "firstTime": parse_time(first),
        "lastTime": parse_time(last),
    }


def node_facts(obj: Obj) -> Facts:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    conditions = _conditions(status.get("conditions"))
    ready = next((c["status"] for c in conditions if c["type"] == "Ready"), None)
    return "io.ktrace.NodeFacts", {
        "ready": ready,
        "unschedulable": bool(spec.get("unschedulable")),
        "conditions": conditions,
        "taints": [
            {"key": t.get("key", ""), "value": t.get("value"), "effect": t.get("effect", ""),
             "timeAdded": parse_time(t.get("timeAdded"))}
            for t in spec.get("taints") or ()
        ],
    }


def lease_facts(obj: Obj) -> Facts:
    spec = obj.get("spec") or {}
    return "io.ktrace.LeaseFacts", {
        "holderIdentity": spec.get("holderIdentity"),
        "leaseDurationSeconds": spec.get("leaseDurationSeconds"),
        "renewTime": parse_time(spec.get("renewTime")),
    }


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def workload_facts(obj: Obj) -> Facts:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    md = obj.get("metadata") or {}
    strategy = spec.get("strategy") or spec.get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate") or {}
    kind = obj.get("kind")
    if kind == "DaemonSet":
        counts = (status.get("desiredNumberScheduled"), status.get("currentNumberScheduled"),
                  status.get("updatedNumberScheduled"), status.get("numberReady"),
                  status.get("numberAvailable"), status.get("numberUnavailable"))
    elif kind == "Job":
        counts = (spec.get("parallelism"), status.get("active"), None, status.get("succeeded"),
                  None, status.get("failed"))
    else:
        counts = (spec.get("replicas"), status.get("replicas"), status.get("updatedReplicas"),
                  status.get("readyReplicas"), status.get("availableReplicas"),
                  status.get("unavailableReplicas"))
    replicas, current, updated, ready, available, unavailable = counts
    return "io.ktrace.WorkloadFacts", {
        "replicas": replicas,
        "statusReplicas": current,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "unavailableReplicas": unavailable,
        "observedGeneration": status.get("observedGeneration"),
        "revision": (md.get("annotations") or {}).get("deployment.kubernetes.io/revision"),
        "podTemplateHash": (md.get("labels") or {}).get("pod-template-hash"),
        "strategy": strategy.get("type"),
        "maxSurge": _str_or_none(rolling.get("maxSurge")),
        "maxUnavailable": _str_or_none(rolling.get("maxUnavailable")),
        "conditions": _conditions(status.get("conditions")),
    }


def volume_facts(obj: Obj) -> Facts:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    claim = spec.get("claimRef") or {}
    source = spec.get("source") or {}
    return "io.ktrace.VolumeFacts", {
        "phase": status.get("phase"),
        "volumeName": spec.get("volumeName"),
        "storageClass": spec.get("storageClassName"),
        "claimNamespace": claim.get("namespace"),
        "claimName": claim.get("name"),
        "attacher": spec.get("attacher"),
        "nodeName": spec.get("nodeName"),
        "pvName": source.get("persistentVolumeName"),
        "attached": status.get("attached"),
        "attachError": (status.get("attachError") or {}).get("message"),
        "detachError": (status.get("detachError") or {}).get("message"),
    }


def namespace_facts(obj: Obj) -> Facts:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return "io.ktrace.NamespaceFacts", {
        "phase": status.get("phase"),
        "specFinalizers": spec.get("finalizers") or [],
        "conditions": _conditions(status.get("conditions")),
    }


EXTRACTORS: dict[str, Callable[[Obj], Facts]] = {
    "Pod": pod_facts,
    "EndpointSlice": endpointslice_facts,
    "Event": event_facts,
    "Node": node_facts,
    "Lease": lease_facts,
    "ReplicaSet": workload_facts,
    "Deployment": workload_facts,
    "StatefulSet": workload_facts,
    "DaemonSet": workload_facts,
    "Job": workload_facts,
    "PersistentVolumeClaim": volume_facts,
    "PersistentVolume": volume_facts,
    "VolumeAttachment": volume_facts,
    "Namespace": namespace_facts,
}


def extract_facts(kind: str, obj: Obj) -> Facts | None:
    """The typed facts for ``kind``, or None for kinds recorded generically."""
    extractor = EXTRACTORS.get(kind)
    return extractor(obj) if extractor else None
