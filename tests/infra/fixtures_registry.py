"""Pytest fixtures for a real Schema Registry, loaded by ``tests/conftest.py``.

``KTRACE_TEST_REGISTRY=URL`` (its Confluent-compatible API) uses one already running;
otherwise one :class:`~tests.infra.registry.LocalRegistry` serves the whole session.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.infra.registry import LocalRegistry

REGISTRY_ENV = "KTRACE_TEST_REGISTRY"


@pytest.fixture(scope="session")
def registry_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a Confluent-compatible API (``…/apis/ccompat/v7``), compatibility BACKWARD."""
    if url := os.environ.get(REGISTRY_ENV):
        yield url
        return
    with LocalRegistry(work_dir=tmp_path_factory.mktemp("registry")) as registry:
        yield registry.url
