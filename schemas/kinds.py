"""Kind names as kubectl takes them, declared once: each kind's Kind, resource (plural) and
short names. ``record --kinds``, ``state --kind``, ``get``, ``timeline`` and ``explain`` all
resolve names here, so ``pods``, ``pod``, ``po``, ``Pod`` and ``pods.v1`` mean one thing
everywhere. It lives in ``schemas`` because the recorder and the replayer both read it."""

from __future__ import annotations

from dataclasses import dataclass

from schemas.errors import KtraceError


class UnknownKind(KtraceError):
    """A name that is no kind ktrace knows."""


@dataclass(frozen=True)
class KindName:
    kind: str
    resource: str
    short: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Every spelling kubectl accepts, lower case: resource, singular, short names."""
        return tuple(dict.fromkeys((self.resource, self.kind.lower(), *self.short)))


KINDS: tuple[KindName, ...] = (
    KindName("Pod", "pods", ("po",)),
    KindName("ReplicaSet", "replicasets", ("rs",)),
    KindName("Deployment", "deployments", ("deploy",)),
    KindName("StatefulSet", "statefulsets", ("sts",)),
    KindName("DaemonSet", "daemonsets", ("ds",)),
    KindName("Job", "jobs"),
    KindName("CronJob", "cronjobs", ("cj",)),
    KindName("EndpointSlice", "endpointslices"),
    KindName("Endpoints", "endpoints", ("ep",)),
    KindName("Service", "services", ("svc",)),
    KindName("Event", "events", ("ev",)),
    KindName("Node", "nodes", ("no",)),
    KindName("Lease", "leases"),
    KindName("PersistentVolumeClaim", "persistentvolumeclaims", ("pvc",)),
    KindName("PersistentVolume", "persistentvolumes", ("pv",)),
    KindName("VolumeAttachment", "volumeattachments"),
    KindName("StorageClass", "storageclasses", ("sc",)),
    KindName("Namespace", "namespaces", ("ns",)),
    KindName("PodDisruptionBudget", "poddisruptionbudgets", ("pdb",)),
    KindName("Secret", "secrets"),  # named so that it can be refused by name
)
_BY_NAME = {name: k for k in KINDS for name in k.names}
BY_KIND = {k.kind: k for k in KINDS}
POD = BY_KIND["Pod"]


def kind_name(text: str) -> KindName:
    """The kind ``text`` names (any case; ``deployments.apps`` and ``pods.v1`` too)."""
    wanted = text.strip().lower()
    found = _BY_NAME.get(wanted) or _BY_NAME.get(wanted.split(".", 1)[0])
    if found is None:
        raise UnknownKind(f"unknown kind {text.strip()!r}; known: "
                          + ", ".join(k.resource for k in KINDS if k.kind != "Secret"))
    return found


def resource_of(kind: str) -> str:
    """The resource of a recorded ``kind`` (kubectl's rule, lower case + s, for others)."""
    known = BY_KIND.get(kind)
    return known.resource if known else kind.lower() + "s"


@dataclass(frozen=True)
class ObjectRef:
    """``KIND/NAME`` as kubectl takes it; a bare ``NAME`` is a pod."""

    kind: KindName
    name: str

    @classmethod
    def parse(cls, text: str) -> "ObjectRef":
        prefix, sep, name = text.partition("/")
        if not sep:
            return cls(POD, text)
        if not name:
            raise UnknownKind(f"{text!r} names no object: expected KIND/NAME")
        return cls(kind_name(prefix), name)
