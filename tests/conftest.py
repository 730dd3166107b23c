"""Shared fixtures: real services the tests start (see tests/infra/)."""

pytest_plugins = ["tests.infra.fixtures_kafka", "tests.infra.fixtures_k8s"]
