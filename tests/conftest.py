"""Shared fixtures: real services the tests start (tests/infra/) and the replayer's
recorded scenarios loaded once per session (tests/replayer_data.py)."""

import os

import pytest

pytest_plugins = ["tests.infra.fixtures_kafka", "tests.infra.fixtures_k8s", "tests.infra.fixtures_node",
                  "tests.infra.fixtures_registry", "tests.infra.fixtures_image",
                  "tests.replayer_data", "tests.report_data"]


@pytest.fixture(scope="session", autouse=True)
def own_cache_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """ktrace's own cache (the demo's database) and state (the last database made) in the
    session's temporary directory: a test run neither reads nor overwrites the user's, nor
    another checkout's. The service installs (KTRACE_CACHE, ~/.cache/ktrace) are not
    affected."""
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("xdg-state"))
