"""Redaction (on by default) and truncation of objects too large for the sink."""

from __future__ import annotations

import copy

import orjson
import pytest

from recorder import truncation
from schemas.redaction import LAST_APPLIED, REDACTED, RedactionPathError, Redactor, parse_path
from schemas import codec, records

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                 "annotations": {LAST_APPLIED: '{"secret": "x"}', "keep": "me"},
                 "managedFields": [{"manager": "kubectl", "operation": "Update",
                                    "time": "2025-01-01T00:00:00Z", "fieldsV1": {"f:x": {}}}]},
    "spec": {
        "containers": [{"name": "app", "env": [{"name": "PASSWORD", "value": "hunter2"},
                                               {"name": "REF", "valueFrom": {"secretKeyRef": {"name": "s"}}}],
                        "args": ["--token", "abc"]}],
        "initContainers": [{"name": "init", "env": [{"name": "A", "value": "a"}]}],
        "ephemeralContainers": [{"name": "dbg", "env": [{"name": "B", "value": "b"}]}],
    },
}
DEPLOYMENT = {"kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"template": {"spec": {"containers": [{"env": [{"name": "K", "value": "v"}]}]}}}}


def test_default_redaction_covers_env_values_and_last_applied() -> None:
    pod = copy.deepcopy(POD)
    assert Redactor().apply(pod) == 4
    spec = pod["spec"]
    assert spec["containers"][0]["env"][0] == {"name": "PASSWORD", "value": REDACTED}
    assert spec["containers"][0]["env"][1]["valueFrom"] == {"secretKeyRef": {"name": "s"}}
    assert spec["initContainers"][0]["env"][0]["value"] == REDACTED
    assert spec["ephemeralContainers"][0]["env"][0]["value"] == REDACTED
    assert pod["metadata"]["annotations"] == {LAST_APPLIED: REDACTED, "keep": "me"}
    assert b"hunter2" not in orjson.dumps(pod)


def test_pod_templates_of_workloads_are_redacted() -> None:
    deployment = copy.deepcopy(DEPLOYMENT)
    Redactor().apply(deployment)
    assert deployment["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == REDACTED


def test_extra_paths_and_no_redact() -> None:
    pod = copy.deepcopy(POD)
    Redactor(["spec.containers[*].args", "metadata.annotations['keep']"]).apply(pod)
    assert pod["spec"]["containers"][0]["args"] == REDACTED
    assert pod["metadata"]["annotations"]["keep"] == REDACTED
    untouched = copy.deepcopy(POD)
    assert Redactor(enabled=False).apply(untouched) == 0 and untouched == POD


@pytest.mark.parametrize("path, segments", [
    ("{.spec.containers[0].image}", [("key", "spec"), ("key", "containers"), ("index", 0), ("key", "image")]),
    ("$.metadata.labels.*", [("key", "metadata"), ("key", "labels"), ("all", None)]),
    ('metadata.annotations["a.b/c"]', [("key", "metadata"), ("key", "annotations"), ("key", "a.b/c")]),
])
def test_paths_parse(path: str, segments: list) -> None:
    assert parse_path(path) == segments


@pytest.mark.parametrize("bad", ["", "spec[", "a[']"])
def test_bad_paths_are_one_clear_error(bad: str) -> None:
    with pytest.raises(RedactionPathError, match="redaction path"):
        parse_path(bad)


def record_for(obj: dict) -> dict:
    return records.object_record(cluster="c", session="s", seq=0, event_type="MODIFIED",
                                 resource="pods", obj=obj, object_json=orjson.dumps(obj),
                                 received_at=1, typed_facts=False)


def big_pod(managed: int, annotations: int) -> dict:
    pod = copy.deepcopy(POD)
    pod["metadata"]["managedFields"][0]["fieldsV1"] = {"f:" + "x" * 50 + str(i): {} for i in range(managed)}
    pod["metadata"]["annotations"]["big"] = "y" * annotations
    return pod


def test_small_records_are_untouched() -> None:
    record = record_for(POD)
    assert truncation.fit(record, 1_000_000) is record


def test_managed_fields_go_first() -> None:
    pod = big_pod(managed=20_000, annotations=10)
    record = record_for(pod)
    fitted = truncation.fit(record, 200_000)
    stored = orjson.loads(fitted["object"])
    assert fitted["truncated"] and "managedFields" not in stored["metadata"]
    assert stored["spec"] == pod["spec"]
    assert fitted["objectSize"] == len(record["object"]) > 1_000_000
    assert len(codec.encode(fitted)) <= 200_000


def test_a_shrunk_object_keeps_the_servers_spelling() -> None:
    """A truncated object is stored as the API server spells it (``\\u0026`` for ``&``…), like
    every other stored object, so its versions compare alike however they were written."""
    pod = big_pod(managed=20_000, annotations=10)
    pod["metadata"]["labels"] = {"team": "a&b<c>d"}
    fitted = truncation.fit(record_for(pod), 200_000)
    assert fitted["truncated"]
    assert b"a\\u0026b\\u003cc\\u003ed" in fitted["object"] and b"&" not in fitted["object"]
    assert orjson.loads(fitted["object"])["metadata"]["labels"] == {"team": "a&b<c>d"}


def test_then_annotations_then_unread_spec_then_everything_but_the_envelope() -> None:
    pod = big_pod(managed=10, annotations=300_000)
    fitted = truncation.fit(record_for(pod), 100_000)
    stored = orjson.loads(fitted["object"])
    assert fitted["truncated"] and stored["spec"] == pod["spec"]  # spec and status stay
    assert "annotations" not in stored["metadata"] and stored["metadata"]["uid"] == "u1"
    pod["spec"]["affinity"] = {"big": "a" * 300_000}  # read by no typed table: goes first
    fitted = truncation.fit(record_for(pod), 100_000)
    stored = orjson.loads(fitted["object"])
    assert "affinity" not in stored["spec"] and stored["spec"]["containers"] == pod["spec"]["containers"]
    pod["spec"]["nodeName"] = "n" * 300_000  # read by the typed tables: the spec goes whole
    fitted = truncation.fit(record_for(pod), 100_000)
    stored = orjson.loads(fitted["object"])
    assert fitted["truncated"] and set(stored) == {"apiVersion", "kind", "metadata"}
    pod["metadata"]["labels"] = {f"l{i}": "z" * 60 for i in range(2000)}
    fitted = truncation.fit(record_for(pod), 20_000)
    assert fitted["truncated"] and fitted["object"] is None and fitted["uid"] == "u1"
    assert len(codec.encode(fitted)) <= 20_000
