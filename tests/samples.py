"""Sample records for transport and schema tests: many keys, many versions per key."""

from __future__ import annotations

import orjson

from schemas import records

BASE_TIME_US = 1_764_000_000_000_000


def pod(uid: str, version: int, *, phase: str = "Running") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-{uid}", "namespace": "default", "uid": uid,
            "resourceVersion": str(1000 + version),
            "creationTimestamp": "2026-11-30T06:51:36Z",
            "labels": {"app": "web"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
                                 "uid": "rs-1", "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "nginx"}]},
        "status": {"phase": phase, "podIP": "10.0.0.1",
                   "conditions": [{"type": "Ready", "status": "True",
                                   "lastTransitionTime": "2026-11-30T06:51:40Z"}]},
    }


def pod_record(uid: str, version: int, seq: int, *, session: str = "s-1") -> dict:
    obj = pod(uid, version)
    return records.object_record(
        cluster="test", session=session, seq=seq,
        event_type="ADDED" if version == 0 else "MODIFIED", resource="pods", obj=obj,
        object_json=orjson.dumps(obj), received_at=BASE_TIME_US + seq * 1000,
        component="kubelet", attribution="managedFields:kubelet:Update:status",
    )


def interleaved(count: int, keys: int) -> list[dict]:
    """``count`` records spread round-robin over ``keys`` uids, versions rising per uid."""
    return [pod_record(f"uid-{i % keys:05d}", i // keys, i) for i in range(count)]
