"""Which records a load keeps (``-n``, ``--cluster``, ``--kinds``), decided from each
record's envelope before any object is parsed; the rest still advance the positions.

``--kinds`` keeps those kinds exactly: the topics of other kinds (one per resource) are
not read at all. ``-n NS`` keeps NS's records and the cluster-scoped objects its answers
read, by name:

- the Namespace NS itself (a stuck namespace deletion reads it);
- the Nodes its pods run on or were nominated to (``spec.nodeName``,
  ``status.nominatedNodeName``) — their health, taints and pressure explain its pods —
  with each one's Lease in ``kube-node-lease`` (the heartbeat behind a Node's health) and
  the Events about it (NodeNotReady, eviction, …, written in another namespace);
- the PersistentVolumes its claims are bound to (``spec.volumeName``, or a volume whose
  ``claimRef`` is in NS), their VolumeAttachments and the Events about them;
- every StorageClass (a handful; a claim without a class depends on the default one);
- every marker (session and watch state: unseen stretches).

Other cluster-scoped records (other Nodes, Namespaces, volumes) are left out. The source
passes by, undecoded, the records whose namespace and name alone say they are left out
(``Scope.wants``: the local log's key index skips blocks holding none that may be kept,
Kafka's ``ktrace.object`` header drops a message before its value is read). Only the
records the decision needs are decoded, and only their named fields: the namespace's own
pods and claims, the cluster's volumes, and the Events outside NS whose name starts with
a needed object's name (an Event is named ``<object>.<suffix>``). The objects that name
dependencies are read before the objects named (``read_order``: pods and claims, then
volumes, then the rest), so one pass keeps every version of each dependency (kubectl
captures, in any order, are read twice: ``Scope.learn``). A resumed
load starts from the names its database already needs; a Node that first becomes needed
in a later load keeps its versions from there on (its earlier ones were left out).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import duckdb
import msgspec

from schemas.envelope import Envelope
from schemas.kinds import BY_KIND, resource_of
from schemas.records import MARKER_TYPES
from schemas.topics import resource_of as topic_resource
from transports.source import DeliveryRun, Wants

#: Resources read before the rest under ``-n``: each names objects a later one's records
#: are kept by (pods and claims name nodes and volumes; volumes name attachments).
READ_FIRST: tuple[tuple[str, ...], ...] = (("pods", "persistentvolumeclaims"),
                                           ("persistentvolumes",))
NODE_LEASES = "kube-node-lease"
#: The cluster-scoped kinds whose records ``-n`` may keep, by their resource (topic).
_DEPENDED_ON = {resource_of(kind): kind for kind in (
    "Namespace", "StorageClass", "Node", "PersistentVolume", "VolumeAttachment")}
#: The kinds ``wants`` judges by resource: every other topic's records are the kind its
#: resource names, unless the resource is unknown (then each record is decoded).
_KNOWN_RESOURCES = {k.resource for k in BY_KIND.values()}


@dataclass(frozen=True)
class RecordFilter:
    """Which records a load keeps; ``kinds``: Kind names (``Pod``), None for all."""

    namespace: str | None = None
    cluster: str | None = None
    kinds: frozenset[str] | None = None

    def keeps_all(self) -> bool:
        return self.namespace is None and self.cluster is None and self.kinds is None

    def describe(self) -> str:
        kinds = f" kinds={','.join(sorted(self.kinds))}" if self.kinds is not None else ""
        return f"namespace={self.namespace or '*'} cluster={self.cluster or '*'}{kinds}"

    def read_order(self, topics: Sequence[str], prefix: str) -> list[list[str]]:
        """``topics`` to read, in groups to be read one after another: without a namespace
        one group; with one, the topics of ``READ_FIRST`` first. Topics of kinds
        ``--kinds`` leaves out are not read."""
        if self.kinds is not None:
            wanted = {resource_of(kind) for kind in self.kinds}
            topics = [t for t in topics if topic_resource(prefix, t) in wanted]
        if self.namespace is None:
            return [list(topics)]
        groups = [[t for t in topics if topic_resource(prefix, t) in first]
                  for first in READ_FIRST]
        first = {t for group in groups for t in group}
        return [group for group in groups + [[t for t in topics if t not in first]] if group]

    def scope(self, con: duckdb.DuckDBPyConnection | None = None) -> Scope:
        """One load's decisions, starting from the dependencies ``con`` already holds."""
        return Scope(self, Needed.loaded(con, self.namespace) if con is not None and
                     self.namespace is not None else Needed())


@dataclass
class Needed:
    """The cluster-scoped objects, by name, that the namespace's records name."""

    nodes: set[str] = field(default_factory=set)
    volumes: set[str] = field(default_factory=set)

    @classmethod
    def loaded(cls, con: duckdb.DuckDBPyConnection, namespace: str) -> Needed:
        """What a database's earlier loads of ``namespace`` needed (a resumed load)."""
        nodes = con.execute(
            "SELECT DISTINCT unnest([p.node_name, p.nominated_node]) FROM pods p "
            "JOIN raw_events r USING (event_id) WHERE r.namespace = ?", [namespace]).fetchall()
        volumes = con.execute(
            "SELECT DISTINCT v.volume_name FROM volumes v JOIN raw_events r USING (event_id) "
            "WHERE r.kind = 'PersistentVolumeClaim' AND r.namespace = ?", [namespace]).fetchall()
        return cls({n for n, in nodes if n}, {v for v, in volumes if v})

    def names(self, kind: str | None) -> set[str]:
        if kind == "Node":
            return self.nodes
        return self.volumes if kind == "PersistentVolume" else set()


# --- the fields a decision reads, and nothing else of the object ---------------------------

class _PodSpec(msgspec.Struct):
    nodeName: str | None = None


class _PodStatus(msgspec.Struct):
    nominatedNodeName: str | None = None


class _Pod(msgspec.Struct):
    spec: _PodSpec | None = None
    status: _PodStatus | None = None


class _ClaimSpec(msgspec.Struct):
    volumeName: str | None = None


class _Claim(msgspec.Struct):
    spec: _ClaimSpec | None = None


class _ClaimRef(msgspec.Struct):
    namespace: str | None = None


class _VolumeSpec(msgspec.Struct):
    claimRef: _ClaimRef | None = None


class _Volume(msgspec.Struct):
    spec: _VolumeSpec | None = None


class _AttachmentSource(msgspec.Struct):
    persistentVolumeName: str | None = None


class _AttachmentSpec(msgspec.Struct):
    source: _AttachmentSource | None = None


class _Attachment(msgspec.Struct):
    spec: _AttachmentSpec | None = None


class _Regarding(msgspec.Struct):
    kind: str | None = None
    name: str | None = None


class _Event(msgspec.Struct):
    """An events.k8s.io/v1 (``regarding``) or core/v1 (``involvedObject``) Event."""
    regarding: _Regarding | None = None
    involvedObject: _Regarding | None = None


_DECODERS = {kind: msgspec.json.Decoder(shape) for kind, shape in (
    ("Pod", _Pod), ("PersistentVolumeClaim", _Claim), ("PersistentVolume", _Volume),
    ("VolumeAttachment", _Attachment), ("Event", _Event))}


class Scope:
    """One load's record-by-record decisions (``keeps``), learning the namespace's
    dependencies from its records as they come."""

    def __init__(self, keep: RecordFilter, needed: Needed) -> None:
        self.keep, self.needed = keep, needed

    def keeps(self, e: Envelope, data: bytes) -> bool:
        """Whether the record of ``e`` (its object's bytes in ``data``) is loaded."""
        keep = self.keep
        if keep.cluster is not None and e.cluster != keep.cluster:
            return False
        if e.type in MARKER_TYPES:
            return keep.kinds is None or e.kind is None or e.kind in keep.kinds
        if keep.kinds is not None and e.kind not in keep.kinds:
            return False
        if keep.namespace is None:
            return True
        if e.namespace == keep.namespace:
            self._learn(e, data)
            return True
        if e.namespace is None:
            return self._depended_on(e, data)
        if e.kind == "Lease":
            return e.namespace == NODE_LEASES and e.name in self.needed.nodes
        return e.kind == "Event" and self._about_needed(e, data)

    def wants(self, prefix: str) -> Wants | None:
        """What the source may pass by undecoded under ``-n`` (None: nothing): a record of
        a topic, with a namespace and a name, that ``keeps`` would surely leave out. It
        reads what this load needs as it reads; through one group of ``read_order`` its
        answers stay the same (what it needs is learned from the groups before: pods and
        claims, whose answers depend on their namespace alone, then volumes, all wanted)."""
        if self.keep.namespace is None:
            return None
        resources: dict[str, str | None] = {}

        def wants(topic: str, namespace: str | None, name: str | None) -> bool:
            if topic not in resources:
                resources[topic] = topic_resource(prefix, topic)
            return self._may_keep(resources[topic], namespace, name)
        return wants

    def _may_keep(self, resource: str | None, namespace: str | None, name: str | None) -> bool:
        """``keeps``'s decision as far as a record's resource, namespace and name tell it:
        False only where ``keeps`` surely says False."""
        if namespace == self.keep.namespace or name is None or (
                resource not in _KNOWN_RESOURCES):
            return True  # its own, a marker, a record of a kind not known here
        if namespace is None:
            kind = _DEPENDED_ON.get(resource)
            if kind == "Namespace":
                return name == self.keep.namespace
            if kind == "Node":
                return name in self.needed.nodes
            return kind is not None  # volumes and attachments: decided on their objects
        if resource == "leases":
            return namespace == NODE_LEASES and name in self.needed.nodes
        if resource == "events":
            about = name.rpartition(".")[0]
            return about in self.needed.nodes or about in self.needed.volumes
        return False

    def learn(self, runs: Iterable[DeliveryRun]) -> None:
        """Learn the dependencies ``runs`` name, keeping none of them: for sources read in
        any order (kubectl captures), a first pass."""
        for run in runs:
            for i, e in enumerate(run.envelopes):
                if e.namespace == self.keep.namespace:
                    self._learn(e, run.data_of(i))
                elif e.kind == "PersistentVolume" and e.namespace is None:
                    self._depended_on(e, run.data_of(i))

    def _learn(self, e: Envelope, data: bytes) -> None:
        if e.kind == "Pod":
            pod = self._decoded(e, data)
            if pod is not None:
                self._need(self.needed.nodes, pod.spec and pod.spec.nodeName,
                           pod.status and pod.status.nominatedNodeName)
        elif e.kind == "PersistentVolumeClaim":
            claim = self._decoded(e, data)
            if claim is not None:
                self._need(self.needed.volumes, claim.spec and claim.spec.volumeName)

    def _depended_on(self, e: Envelope, data: bytes) -> bool:
        """A cluster-scoped record: the namespace itself or one of its dependencies."""
        kind = e.kind
        if kind == "Namespace":
            return e.name == self.keep.namespace
        if kind == "StorageClass":
            return True
        if kind == "Node":
            return e.name in self.needed.nodes
        if kind == "PersistentVolume":
            if e.name in self.needed.volumes:
                return True
            volume = self._decoded(e, data)
            ref = volume and volume.spec and volume.spec.claimRef
            if ref is None or ref.namespace != self.keep.namespace:
                return False
            self._need(self.needed.volumes, e.name)
            return True
        if kind == "VolumeAttachment":
            attachment = self._decoded(e, data)
            source = attachment and attachment.spec and attachment.spec.source
            return source is not None and source.persistentVolumeName in self.needed.volumes
        return False

    def _about_needed(self, e: Envelope, data: bytes) -> bool:
        """An Event in another namespace about a needed Node or volume."""
        name = (e.name or "").rpartition(".")[0]
        if name not in self.needed.nodes and name not in self.needed.volumes:
            return False
        event = self._decoded(e, data)
        about = event and (event.regarding or event.involvedObject)
        return about is not None and about.name in self.needed.names(about.kind)

    @staticmethod
    def _decoded(e: Envelope, data: bytes) -> msgspec.Struct | None:
        """The fields a decision reads of ``e``'s object; None without one, or when it is
        not JSON of that shape (the load reports malformed objects)."""
        span = e.object
        if span is None:
            return None
        body = memoryview(data)[span[0]:span[1]] if isinstance(span, tuple) else span
        try:
            return _DECODERS[e.kind].decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    @staticmethod
    def _need(names: set[str], *found: str | None) -> None:
        names.update(name for name in found if name)
