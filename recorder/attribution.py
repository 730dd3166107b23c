"""Which component made each change, and the evidence for saying so (design §3, §5).

Most writes leave a trace in ``managedFields``: the manager whose entry is new, whose time
advanced, or whose owned-field set changed made the change. Times have one-second
precision, so two writes by the same manager within a second are told apart by the owned
fields, and else by which part changed (status → the status writer). Some writes change no
managedFields and are recognised by what they change: the binding (``spec.nodeName`` +
PodScheduled) is the scheduler's; setting ``deletionTimestamp`` is the API server handling a
DELETE (the requester is unknown without audit logs, but a DisruptionTarget condition names
it); shortening the grace period of a bound pod to 0 after its status changed is its node
agent confirming the stop, while a first request with grace 0, or a shortening to 0 with no
status write since the request (the node agent never stopped it), is a client's force delete
(``kubectl delete --force --grace-period=0``) — unless the pod had already Succeeded or
Failed: the API server gives those grace 0 whoever asks. Events name their reporter, except
for their removal, mostly the API server's when the Event's TTL runs out.

Per object only what these rules compare is kept (``Prior``): managedFields times and
digests (the mapping observed, its keys shared across objects), a digest of status,
deletionTimestamp, grace period, nodeName, DisruptionTarget reason, finalizers, the last
status writer, the status digest when the deletion was requested, whether a client forced
it and whether the pod had finished when it was first asked to go.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import msgspec

from recorder import gojson

Obj = dict[str, Any]
ManagerKey = tuple[str, str, str]  # manager, operation, subresource
Stamp = tuple[str, int]  # time (RFC 3339, 1 s), digest of the owned fields

#: DisruptionTarget reasons → the component that asked for the deletion.
DISRUPTION_REQUESTERS = {
    "PreemptionByScheduler": "kube-scheduler",
    "PreemptionByKubeScheduler": "kube-scheduler",
    "DeletionByTaintManager": "kube-controller-manager",
    "DeletionByPodGC": "kube-controller-manager",
    "EvictionByEvictionAPI": "eviction API",
    "TerminationByKubelet": "kubelet",
}
APISERVER = "kube-apiserver"
FINISHED_PHASES = ("Succeeded", "Failed")
#: The requester of a DELETE with grace 0 that the node agent did not send (no audit log
#: names the client; the replayer's timeline says the same for old recordings).
FORCE_DELETE = "client (force delete)"
SCHEDULER = "kube-scheduler"
CONTROLLER_MANAGER = "kube-controller-manager"


#: Attribution, Observed and Prior are made per event: Structs, whose ``__init__`` is C (a
#: dataclass's is Python, ~3x the cost; a frozen one's ~6x); untracked by the garbage
#: collector, as nothing they hold refers back. Not frozen: treat them as values.
class Attribution(msgspec.Struct, gc=False):
    component: str | None
    evidence: str
    #: When the server says the change happened (a managedFields time that advanced), for lag.
    server_time: str | None = None


class Observed(msgspec.Struct, gc=False):
    """What attribution compares of one object version, read from a parsed dict
    (``observed``) or from the lean decode (``recorder.lean``)."""
    kind: str
    uid: str
    managers: dict[ManagerKey, Stamp] = msgspec.field(default_factory=dict)
    status: int = 0  # digest
    deletion: str | None = None
    grace: int | None = None
    node: str | None = None  # spec.nodeName of a Pod
    disruption: str | None = None
    finalizers: tuple[str, ...] = ()
    owner: tuple[str | None, str | None] | None = None  # kind, name of the first ownerReference
    #: a Pod already Succeeded or Failed whose deletion has grace 0: the API server gives a
    #: finished pod grace 0 whoever asks (CheckGracefulDelete), so it is no force delete
    finished: bool = False
    reporter: Attribution | None = None  # an Event's named reporter


class Prior(msgspec.Struct, gc=False):
    """What attribution remembers of an object's previous version, never the object itself:
    ``managers`` is the mapping observed, its keys shared (``manager_key``)."""
    managers: dict[ManagerKey, Stamp]
    status: int  # digest
    deletion: str | None
    grace: int | None
    node: str | None
    disruption: str | None
    finalizers: tuple[str, ...]
    status_writer: str | None  # the latest manager of the status subresource (a pod's node agent)
    #: the status digest of the version that first carried deletionTimestamp (None before):
    #: the node agent sends its grace-0 DELETE only after writing its stop into the status
    requested_status: int | None = None
    forced: bool = False  # a client's grace-0 DELETE (first request, or no stop written)
    #: the first deletion request found the pod finished (grace 0 by the API server)
    finished_at_request: bool = False


def digest(value: Any) -> int:
    """A parsed value's hash, of the server's spelling of it: ``lean.observed`` hashes the
    bytes the server sent, and a LIST's object is compared with the watch's next version."""
    return hash(gojson.dumps(value)) if value is not None else 0


#: One tuple per distinct manager key (a few dozen in a cluster), shared by every Prior.
_KEYS: dict[ManagerKey, ManagerKey] = {}
_KEYS_MAX = 10_000  # a pathological cluster: stay bounded


def manager_key(manager: str | None, operation: str | None, subresource: str | None) -> ManagerKey:
    key = (manager or "", operation or "", subresource or "")
    return _KEYS.setdefault(key, key)


def managers_of(obj: Obj) -> dict[ManagerKey, Stamp]:
    entries = (obj.get("metadata") or {}).get("managedFields") or ()
    return {manager_key(e.get("manager"), e.get("operation"), e.get("subresource")):
            (e.get("time") or "", digest(e.get("fieldsV1"))) for e in entries}


def disruption_reason(obj: Obj) -> str | None:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "DisruptionTarget" and cond.get("status") == "True":
            return cond.get("reason") or "unknown"
    return None


def observed(obj: Obj) -> Observed:
    """What attribution compares, read from a parsed object."""
    md, kind = obj.get("metadata") or {}, obj.get("kind") or ""
    if kind == "Event":
        source = obj.get("source") or obj.get("deprecatedSource") or {}
        return Observed(kind, md.get("uid") or "", reporter=event_reporter(
            obj.get("reportingController"), source.get("component"), obj.get("reportingComponent")))
    owners = md.get("ownerReferences")
    grace = md.get("deletionGracePeriodSeconds")
    return Observed(
        kind, md.get("uid") or "", managers=managers_of(obj), status=digest(obj.get("status")),
        deletion=md.get("deletionTimestamp"), grace=grace,
        node=(obj.get("spec") or {}).get("nodeName") if kind == "Pod" else None,
        disruption=disruption_reason(obj), finalizers=tuple(md.get("finalizers") or ()),
        owner=(owners[0].get("kind"), owners[0].get("name")) if owners else None,
        finished=grace == 0 and (obj.get("status") or {}).get("phase") in FINISHED_PHASES)


def prior_of(seen: Observed, previous: Prior | None) -> Prior:
    status = [(stamp[0], key[0]) for key, stamp in seen.managers.items() if key[2] == "status"]
    status_writer = max(status)[1] if status else (previous.status_writer if previous else None)
    if len(_KEYS) > _KEYS_MAX:
        _KEYS.clear()
    requested = previous.requested_status if previous and previous.deletion else None
    if seen.deletion and requested is None:
        requested = seen.status
    forced = bool(seen.deletion) and (
        (previous.forced if previous and previous.deletion else False)
        or force_deleted(previous, seen))
    finished_at_request = (previous.finished_at_request if previous and previous.deletion
                           else seen.finished)
    return Prior(seen.managers, seen.status, seen.deletion, seen.grace, seen.node,
                 seen.disruption, seen.finalizers, status_writer, requested, forced,
                 finished_at_request)


def force_deleted(before: Prior | None, seen: Observed) -> bool:
    """A bound pod's grace-0 DELETE that its node agent did not send: the first deletion
    request already has grace 0 (and the pod had not finished: the API server's own 0), or
    the grace was cut to 0 with the status unchanged since the request (the node agent
    writes its containers' stop before it deletes)."""
    if not (seen.deletion and seen.node and seen.grace == 0):
        return False
    if first_request(before):
        return not seen.finished
    return before.grace != 0 and seen.status == before.requested_status


def first_request(before: Prior | None) -> bool:
    return before is None or not before.deletion


@functools.lru_cache(maxsize=1024)  # a few dozen manager keys in a cluster
def describe(key: ManagerKey) -> str:
    manager, operation, subresource = key
    return ":".join(p for p in ("managedFields", manager, operation, subresource) if p)


def advanced(before: dict[ManagerKey, Stamp] | None, after: dict[ManagerKey, Stamp]) -> list[ManagerKey]:
    """Entries that changed, the likely writer first: new entries, then those whose time moved
    forward, then those whose owned fields changed at the same time (a field can also move
    away from a manager when another one takes it over); latest first within each."""
    new: list[tuple[str, ManagerKey]] = []
    forward: list[tuple[str, ManagerKey]] = []
    refreshed: list[tuple[str, ManagerKey]] = []
    for key, (time, owned) in after.items():
        old = before.get(key) if before is not None else None
        if old is None:
            new.append((time, key))
        elif time > old[0]:
            forward.append((time, key))
        elif owned != old[1]:
            refreshed.append((time, key))
    return [key for ranked in (new, forward, refreshed)
            for _, key in sorted(ranked, key=_TIME, reverse=True)]


_TIME = operator.itemgetter(0)


def latest(by_key: dict[ManagerKey, Stamp], keys: list[ManagerKey] | None = None) -> ManagerKey | None:
    """The entry of ``by_key`` (a Prior's) with the latest time; within one second a status
    writer is the likelier last writer (status changes far more often than spec)."""
    candidates = keys if keys is not None else list(by_key)
    return max(candidates, key=lambda k: (by_key[k][0], k[2] == "status")) if candidates else None


def event_reporter(controller: str | None, component: str | None,
                   reporting_component: str | None) -> Attribution:
    """An Event names its reporter: reportingController, else source.component (core/v1;
    deprecatedSource in events.k8s.io/v1), else reportingComponent."""
    if controller:
        return Attribution(controller, "event.reportingController")
    if component:
        return Attribution(component, "event.source.component")
    if reporting_component:
        return Attribution(reporting_component, "event.reportingComponent")
    return Attribution(None, "event names no reporter")


class Attributor:
    """Attribution for one resource's objects; keeps a small Prior per uid."""

    def __init__(self) -> None:
        self._priors: dict[str, Prior] = {}

    def __len__(self) -> int:
        return len(self._priors)

    def observe(self, event_type: str, obj: Obj | Observed) -> Attribution:
        seen = obj if isinstance(obj, Observed) else observed(obj)
        if event_type in ("DELETED", "INFERRED_DELETED"):
            return deleted(event_type, self._priors.pop(seen.uid, None), seen)
        if seen.reporter is not None:
            return seen.reporter
        before = self._priors.get(seen.uid)
        after = prior_of(seen, before)
        self._priors[seen.uid] = after
        return changed(event_type, before, after)

    def remember(self, obj: Obj | Observed) -> None:
        """Update the prior without attributing (an unchanged object seen by a relist)."""
        seen = obj if isinstance(obj, Observed) else observed(obj)
        if seen.reporter is None:
            self._priors[seen.uid] = prior_of(seen, self._priors.get(seen.uid))


def changed(event_type: str, before: Prior | None, after: Prior) -> Attribution:
    after_keys = after.managers
    if event_type == "LISTED" or before is None:
        key = latest(after_keys)
        note = "listed; " if event_type == "LISTED" else ""
        if key is None:
            return Attribution(None, f"{note}no managedFields")
        server_time = None if event_type == "LISTED" else after_keys[key][0] or None
        return Attribution(key[0], f"{note}{describe(key)} (latest entry)", server_time)
    before_keys = before.managers
    if after_keys == before_keys:
        special = lifecycle_write(before, after)
        if special is not None:
            return special
    moved = advanced(before_keys, after_keys)
    if moved:
        others = f" (also {', '.join(describe(k) for k in moved[1:])})" if len(moved) > 1 else ""
        time = after_keys[moved[0]][0]
        return Attribution(moved[0][0], describe(moved[0]) + others + disruption_note(before, after),
                           time if time > before_keys.get(moved[0], ("", 0))[0] else None)
    return same_second_write(before, after)


def same_second_write(before: Prior, after: Prior) -> Attribution:
    """No entry moved: the same manager wrote again within the second of its entry."""
    after_keys = after.managers
    status_keys = [k for k in after_keys if k[2] == "status"]
    if after.status != before.status and status_keys:
        key, part = latest(after_keys, status_keys), "status changed"
    else:
        other = [k for k in after_keys if k[2] != "status"]
        key, part = latest(after_keys, other) or latest(after_keys), "no status change"
    if key is None:
        return Attribution(None, "no managedFields")
    return Attribution(key[0], f"{describe(key)} (entry unchanged within its second; {part})")


def lifecycle_write(before: Prior, after: Prior) -> Attribution | None:
    """The writes that change no managedFields entry (the caller checked they are equal)."""
    if after.deletion and not before.deletion:
        if after.forced:
            return Attribution(FORCE_DELETE, "deletionTimestamp set with grace 0 on a pod bound "
                                              f"to {after.node}: a client's force delete")
        requester = DISRUPTION_REQUESTERS.get(after.disruption or "")
        who = f"; requested by {requester} (DisruptionTarget {after.disruption})" if requester else ""
        # a Namespace (any object but a Pod) has a deletionTimestamp and no grace period
        grace = "" if after.grace is None else f", grace {after.grace}s"
        return Attribution(APISERVER, f"deletionTimestamp set (DELETE{grace}){who}")
    if after.deletion and after.grace is not None and before.grace is not None and after.grace < before.grace:
        if after.forced and not before.forced:
            return Attribution(FORCE_DELETE, f"DELETE with grace 0 ({before.grace}s before) and no "
                                              "status write since the deletion request: the node "
                                              f"agent of {after.node} did not stop it, a client "
                                              "forced it")
        if after.node and after.grace == 0:
            agent = after.status_writer or "kubelet"
            return Attribution(agent, f"DELETE with grace 0 from the node agent of {after.node} "
                                      f"(last status writer {agent}): containers stopped")
        return Attribution(APISERVER, f"deletionGracePeriodSeconds {before.grace}→{after.grace} "
                                      "(a DELETE with a shorter grace period)")
    if after.node and not before.node:
        return Attribution(SCHEDULER, f"binding: spec.nodeName={after.node} + PodScheduled")
    return None


def finished_pod_deleted(seen: Observed) -> Attribution:
    """A Succeeded or Failed pod removed by its first DELETE (grace 0 whoever asked)."""
    why = "removed by a DELETE of a finished pod (grace 0 for any requester)"
    requester = DISRUPTION_REQUESTERS.get(seen.disruption or "")
    if requester:
        return Attribution(requester, f"{why}; requested by {requester} "
                                      f"(DisruptionTarget {seen.disruption})")
    if seen.owner is not None:
        kind, name = seen.owner
        return Attribution(CONTROLLER_MANAGER, f"{why}; by the garbage collector or the owning "
                                               f"controller (inferred from ownerReference "
                                               f"{kind}/{name})")
    return Attribution(APISERVER, f"{why}; requester unknown without audit logs")


def disruption_note(before: Prior | None, after: Prior) -> str:
    if after.disruption and (before is None or before.disruption != after.disruption):
        return f"; DisruptionTarget {after.disruption}"
    return ""


def deleted(event_type: str, before: Prior | None, seen: Observed) -> Attribution:
    """Who removed the object, as far as the last known state tells."""
    if event_type == "INFERRED_DELETED":
        return Attribution(None, "gone at a relist: the DELETED event was not seen")
    if seen.reporter is not None:  # an Event's reporter wrote it, not its removal
        return Attribution(APISERVER, "Event removed: its TTL (--event-ttl, 1h by default) ran "
                                      "out after its last write, or a DELETE (its namespace's "
                                      "deletion, a client) not told apart without audit logs")
    if seen.deletion:
        if before.forced if not first_request(before) else force_deleted(before, seen):
            return Attribution(FORCE_DELETE, f"removed after a client's grace-0 DELETE (force "
                                              f"delete) of a pod bound to {seen.node}")
        # grace 0 from its first request on: the API server's own for a finished pod
        finished = seen.finished if first_request(before) else before.finished_at_request
        if seen.node and seen.grace == 0 and not finished:
            agent = before.status_writer if before and before.status_writer else "kubelet"
            return Attribution(agent, f"removed after the grace-0 DELETE of the node agent of {seen.node} "
                                      f"(last status writer {agent})")
        if before and before.finalizers and not seen.finalizers:
            return Attribution(APISERVER, "removed once the last finalizer "
                                          f"({before.finalizers[-1]}) was cleared")
        if finished:
            return finished_pod_deleted(seen)
        return Attribution(APISERVER, "removed after deletionTimestamp (grace period over)")
    if seen.owner is not None:
        kind, name = seen.owner
        return Attribution(CONTROLLER_MANAGER, "DELETE by the garbage collector or the owning "
                           f"controller (inferred from ownerReference {kind}/{name})")
    return Attribution(APISERVER, "DELETE (requester unknown without audit logs)")
