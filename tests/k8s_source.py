"""The Kubernetes source the tests read facts from (docs/causes.md's reasons, kubectl's
short names): the Go module cache compose/k8s/build.sh fills (CI builds it before the
tests run)."""

from __future__ import annotations

import os
import re
from pathlib import Path

K8S_VERSION = "v1.37.2"
MODCACHE = Path(os.environ.get("GOMODCACHE") or Path(
    os.environ.get("KTRACE_CACHE", Path.home() / ".cache" / "ktrace")) / "go" / "pkg" / "mod")


def source_file(source: str) -> Path:
    """A kubernetes/kubernetes path at K8S_VERSION in the module cache: the staging
    modules are published as k8s.io/NAME@v0.MINOR.PATCH."""
    staging = re.fullmatch(r"staging/src/k8s\.io/([a-z-]+)/(.*)", source)
    if staging:
        return MODCACHE / "k8s.io" / f"{staging[1]}@v0{K8S_VERSION[2:]}" / staging[2]
    return MODCACHE / "k8s.io" / f"kubernetes@{K8S_VERSION}" / source
