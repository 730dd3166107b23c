"""pytest fixtures for tests that run the ktrace image (marker deploy): the image built by
compose/image/build.sh (buildah over a Debian base) and saved as an OCI archive that podman
loads and the real node's containerd imports."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.infra.k8s import REPO

VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
IMAGE = f"localhost/ktrace:{VERSION}"


@pytest.fixture(scope="session")
def image_archive() -> Path:
    """The image, built (or found cached: it is named by its context's digest) by
    compose/image/build.sh into podman's store, and saved as an OCI archive."""
    done = subprocess.run(["bash", str(REPO / "compose" / "image" / "build.sh")], stdout=subprocess.PIPE,
                          text=True, timeout=1800)
    assert done.returncode == 0, "compose/image/build.sh failed; its output is above"
    return Path(done.stdout.strip().splitlines()[-1])
