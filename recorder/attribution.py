"""Which component made each change, and the evidence for saying so (design §3, §5).

Most writes leave a trace in ``managedFields``: the manager whose entry is new or whose time
advanced made the change. Some writes change no managedFields and are recognised by what
they change: the binding (``spec.nodeName`` + PodScheduled) is the scheduler's; setting
``deletionTimestamp`` is the API server handling a DELETE (the requester is unknown without
audit logs, but a DisruptionTarget condition names it); Events name their reporter.

Per object only what these rules compare is kept: managedFields times, deletionTimestamp,
grace period, nodeName, DisruptionTarget reason, finalizers, the last status writer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
ManagerKey = tuple[str, str, str]  # manager, operation, subresource

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
SCHEDULER = "kube-scheduler"
CONTROLLER_MANAGER = "kube-controller-manager"


@dataclass(frozen=True, slots=True)
class Attribution:
    component: str | None
    evidence: str
    #: When the server says the change happened (a managedFields time that advanced), for lag.
    server_time: str | None = None


@dataclass(frozen=True, slots=True)
class Prior:
    """What attribution remembers of an object's previous version."""
    managers: dict[ManagerKey, str]
    deletion: str | None
    grace: int | None
    node: str | None
    disruption: str | None
    finalizers: tuple[str, ...]
    status_writer: str | None  # the last manager of the status subresource (the node agent for pods)


def managers_of(obj: Obj) -> dict[ManagerKey, str]:
    entries = (obj.get("metadata") or {}).get("managedFields") or ()
    return {(e.get("manager") or "", e.get("operation") or "", e.get("subresource") or ""):
            e.get("time") or "" for e in entries}


def disruption_reason(obj: Obj) -> str | None:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "DisruptionTarget" and cond.get("status") == "True":
            return cond.get("reason") or "unknown"
    return None


def prior_of(obj: Obj, previous: Prior | None) -> Prior:
    md = obj.get("metadata") or {}
    managers = managers_of(obj)
    status = [(t, k[0]) for k, t in managers.items() if k[2] == "status"]
    status_writer = max(status)[1] if status else (previous.status_writer if previous else None)
    return Prior(managers, md.get("deletionTimestamp"), md.get("deletionGracePeriodSeconds"),
                 (obj.get("spec") or {}).get("nodeName") if obj.get("kind") == "Pod" else None,
                 disruption_reason(obj), tuple(md.get("finalizers") or ()), status_writer)


def describe(key: ManagerKey) -> str:
    manager, operation, subresource = key
    return ":".join(p for p in ("managedFields", manager, operation, subresource) if p)


def advanced(before: dict[ManagerKey, str] | None, after: dict[ManagerKey, str]) -> list[ManagerKey]:
    """Entries that are new or whose time moved forward, latest first."""
    moved = [k for k, t in after.items() if before is None or t > before.get(k, "")]
    return sorted(moved, key=lambda k: after[k], reverse=True)


def latest_writer(prior: Prior, note: str) -> Attribution:
    if not prior.managers:
        return Attribution(None, f"{note}no managedFields")
    key = max(prior.managers, key=lambda k: prior.managers[k])
    return Attribution(key[0], f"{note}{describe(key)} (latest entry)")


def event_attribution(obj: Obj) -> Attribution:
    if controller := obj.get("reportingController"):
        return Attribution(controller, "event.reportingController")
    if component := (obj.get("source") or obj.get("deprecatedSource") or {}).get("component"):
        return Attribution(component, "event.source.component")
    if controller := obj.get("reportingComponent"):
        return Attribution(controller, "event.reportingComponent")
    return Attribution(None, "event names no reporter")


class Attributor:
    """Attribution for one resource's objects; keeps a small Prior per uid."""

    def __init__(self) -> None:
        self._priors: dict[str, Prior] = {}

    def __len__(self) -> int:
        return len(self._priors)

    def observe(self, event_type: str, obj: Obj) -> Attribution:
        if obj.get("kind") == "Event":
            return event_attribution(obj)
        uid = (obj.get("metadata") or {}).get("uid") or ""
        before = self._priors.get(uid)
        if event_type in ("DELETED", "INFERRED_DELETED"):
            self._priors.pop(uid, None)
            return deleted(event_type, before, obj)
        after = prior_of(obj, before)
        self._priors[uid] = after
        return changed(event_type, before, after)

    def remember(self, obj: Obj) -> None:
        """Update the prior without attributing (an unchanged object seen by a relist)."""
        uid = (obj.get("metadata") or {}).get("uid") or ""
        self._priors[uid] = prior_of(obj, self._priors.get(uid))


def changed(event_type: str, before: Prior | None, after: Prior) -> Attribution:
    if before is not None:
        special = lifecycle_write(before, after)
        if special is not None:
            return special
    moved = advanced(before.managers if before else None, after.managers)
    if event_type == "LISTED":
        return latest_writer(after, "listed; ")
    if moved:
        note = disruption_note(before, after)
        others = f" (also {', '.join(describe(k) for k in moved[1:])})" if len(moved) > 1 else ""
        return Attribution(moved[0][0], describe(moved[0]) + others + note, after.managers[moved[0]])
    return latest_writer(after, "no entry advanced; ")


def lifecycle_write(before: Prior, after: Prior) -> Attribution | None:
    """The writes that change no managedFields entry."""
    if after.deletion and not before.deletion:
        requester = DISRUPTION_REQUESTERS.get(after.disruption or "")
        who = f"; requested by {requester} (DisruptionTarget {after.disruption})" if requester else ""
        return Attribution(APISERVER, f"deletionTimestamp set (DELETE, grace {after.grace}s){who}")
    if after.deletion and after.grace is not None and before.grace is not None \
            and after.grace < before.grace and after.managers == before.managers:
        return Attribution(APISERVER, f"deletionGracePeriodSeconds {before.grace}→{after.grace} "
                                      "(a DELETE with a shorter grace period)")
    if after.node and not before.node and after.managers == before.managers:
        return Attribution(SCHEDULER, f"binding: spec.nodeName={after.node} + PodScheduled")
    return None


def disruption_note(before: Prior | None, after: Prior) -> str:
    if after.disruption and (before is None or before.disruption != after.disruption):
        return f"; DisruptionTarget {after.disruption}"
    return ""


def deleted(event_type: str, before: Prior | None, obj: Obj) -> Attribution:
    """Who removed the object, as far as the last known state tells."""
    if event_type == "INFERRED_DELETED":
        return Attribution(None, "gone at a relist: the DELETED event was not seen")
    md = obj.get("metadata") or {}
    if md.get("deletionTimestamp"):
        node = (obj.get("spec") or {}).get("nodeName") if obj.get("kind") == "Pod" else None
        if node and md.get("deletionGracePeriodSeconds") == 0:
            agent = before.status_writer if before and before.status_writer else "kubelet"
            return Attribution(agent, f"final delete with grace 0 from the node agent of {node} "
                                      f"(last status writer {agent})")
        if before and before.finalizers and not md.get("finalizers"):
            return Attribution(APISERVER, "removed once the last finalizer "
                                          f"({before.finalizers[-1]}) was cleared")
        return Attribution(APISERVER, "removed after deletionTimestamp (grace period over)")
    if owners := md.get("ownerReferences"):
        owner = owners[0]
        return Attribution(CONTROLLER_MANAGER, "DELETE by the garbage collector or the owning "
                           f"controller (inferred from ownerReference {owner.get('kind')}/{owner.get('name')})")
    return Attribution(APISERVER, "DELETE (requester unknown without audit logs)")
