"""Shared fixtures: real services the tests start (tests/infra/) and the replayer's
recorded scenarios loaded once per session (tests/replayer_data.py)."""

pytest_plugins = ["tests.infra.fixtures_kafka", "tests.infra.fixtures_k8s", "tests.infra.fixtures_registry",
                  "tests.replayer_data", "tests.report_data"]
