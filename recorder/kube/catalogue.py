"""Which resources the recorder watches, and where the API server serves them.

A static catalogue of the kinds that explain pod lifecycles (design §5), resolved against
the server's discovery documents at start: the first served group/version wins (Events:
events.k8s.io/v1, falling back to core/v1). Secrets are never requested.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemas.errors import KtraceError
from schemas.kinds import UnknownKind, kind_name
from schemas.redaction import REFUSED_RESOURCES

if TYPE_CHECKING:  # `ktrace record --help` lists the kinds without the HTTP client
    from recorder.kube.client import ApiClient

NODE_LEASE_NAMESPACE = "kube-node-lease"


class CatalogueError(KtraceError):
    """A kind that cannot be recorded: unknown, forbidden, or not served by this cluster."""


@dataclass(frozen=True)
class KindSpec:
    resource: str
    candidates: tuple[tuple[str, str], ...]  # (group, version), preferred first; "" = core
    default: bool = True
    #: Recorded only in this namespace whatever -n says (node heartbeats live in one place).
    fixed_namespace: str | None = None


CATALOGUE: tuple[KindSpec, ...] = (
    KindSpec("pods", (("", "v1"),)),
    KindSpec("replicasets", (("apps", "v1"),)),
    KindSpec("deployments", (("apps", "v1"),)),
    KindSpec("statefulsets", (("apps", "v1"),)),
    KindSpec("daemonsets", (("apps", "v1"),)),
    KindSpec("jobs", (("batch", "v1"),)),
    KindSpec("endpointslices", (("discovery.k8s.io", "v1"),)),
    KindSpec("events", (("events.k8s.io", "v1"), ("", "v1"))),
    KindSpec("nodes", (("", "v1"),)),
    KindSpec("leases", (("coordination.k8s.io", "v1"),), fixed_namespace=NODE_LEASE_NAMESPACE),
    KindSpec("persistentvolumeclaims", (("", "v1"),)),
    KindSpec("persistentvolumes", (("", "v1"),)),
    KindSpec("volumeattachments", (("storage.k8s.io", "v1"),)),
    KindSpec("storageclasses", (("storage.k8s.io", "v1"),)),
    KindSpec("namespaces", (("", "v1"),)),
    KindSpec("services", (("", "v1"),)),
    KindSpec("cronjobs", (("batch", "v1"),), default=False),
    KindSpec("poddisruptionbudgets", (("policy", "v1"),)),
)
BY_RESOURCE = {spec.resource: spec for spec in CATALOGUE}
DEFAULT_KINDS = tuple(spec.resource for spec in CATALOGUE if spec.default)


@dataclass(frozen=True)
class Target:
    """One list/watch: a resource in one group/version, all namespaces or one."""

    resource: str
    group: str
    version: str
    kind: str
    namespaced: bool
    namespace: str | None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """Names this watch's checkpoint: resource, group and namespace scope."""
        scope = self.namespace or "_all"
        return f"{self.resource}.{self.group or 'core'}.{scope}"

    @property
    def path(self) -> str:
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and self.namespace:
            return f"{root}/namespaces/{self.namespace}/{self.resource}"
        return f"{root}/{self.resource}"


def parse_kinds(values: tuple[str, ...] | list[str] | None) -> list[str]:
    """``--kinds pods,no --kinds Event`` → resource names (any name kubectl takes),
    validated, in catalogue order."""
    wanted = {_resource(v) for value in values or () for v in value.split(",") if v.strip()}
    if not wanted:
        return list(DEFAULT_KINDS)
    if forbidden := wanted & REFUSED_RESOURCES:
        raise CatalogueError(f"{', '.join(sorted(forbidden))} are never recorded: "
                             "ktrace does not request Secrets")
    if unknown := wanted - set(BY_RESOURCE):
        raise CatalogueError(f"unknown kind(s) {', '.join(sorted(unknown))}; "
                             f"choose from {', '.join(BY_RESOURCE)}")
    return [spec.resource for spec in CATALOGUE if spec.resource in wanted]


def _resource(name: str) -> str:
    try:
        return kind_name(name).resource
    except UnknownKind:
        return name.strip().lower()  # reported below with the catalogue's choices


def resolve_targets(api: ApiClient, resources: list[str],
                    namespaces: list[str] | None) -> list[Target]:
    """Targets for ``resources`` as this server serves them; one per namespace when given."""
    discovery = Discovery(api)
    targets = []
    for resource in resources:
        group, version, kind, namespaced = discovery.find(BY_RESOURCE[resource])
        spec = BY_RESOURCE[resource]
        if not namespaced:
            scopes: list[str | None] = [None]
        elif spec.fixed_namespace:
            scopes = [spec.fixed_namespace]
        else:
            scopes = list(namespaces) if namespaces else [None]
        targets += [Target(resource, group, version, kind, namespaced, ns) for ns in scopes]
    return targets


class Discovery:
    """Reads each group/version's resource list once."""

    def __init__(self, api: ApiClient) -> None:
        self._api = api
        self._lists: dict[tuple[str, str], list[dict] | None] = {}

    def find(self, spec: KindSpec) -> tuple[str, str, str, bool]:
        for group, version in spec.candidates:
            for entry in self._resources(group, version) or ():
                verbs = set(entry.get("verbs") or ())
                if entry.get("name") == spec.resource and {"list", "watch"} <= verbs:
                    return group, version, entry.get("kind", ""), bool(entry.get("namespaced"))
        served = ", ".join(f"{g or 'core'}/{v}" for g, v in spec.candidates)
        raise CatalogueError(f"the API server does not serve {spec.resource} (looked in {served})")

    def _resources(self, group: str, version: str) -> list[dict] | None:
        from recorder.kube.client import ApiError
        if (group, version) not in self._lists:
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            try:
                self._lists[group, version] = self._api.get_json(path).get("resources") or []
            except ApiError as exc:
                if exc.status != 404:
                    raise
                self._lists[group, version] = None
        return self._lists[group, version]
