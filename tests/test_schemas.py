"""The Avro contract: every version loads, every record shape round-trips, old data decodes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fastavro import schemaless_writer

from schemas import codec, records, repository
from schemas.errors import DecodeError
from tests import samples

ROOT = Path(__file__).resolve().parents[1]
AVSC = ROOT / "schemas" / "avsc"


def test_versions_are_numbered_from_one_and_have_distinct_fingerprints():
    versions = repository.all_versions()
    assert [v.version for v in versions] == list(range(1, len(versions) + 1))
    assert len({v.fingerprint for v in versions}) == len(versions)
    assert repository.current() is versions[-1]


def test_every_file_is_named_after_its_fullname():
    for path in AVSC.glob("v*/*.avsc"):
        schema = json.loads(path.read_text())
        assert path.stem == f"{schema['namespace']}.{schema['name']}", path


CAPTURES = ROOT / "tests" / "data" / "replayer" / "scenarios" / "kubectl"


def _real_objects() -> list[dict]:
    """Every object version a real control plane sent in the committed kubectl captures."""
    objects = []
    for path in sorted(CAPTURES.glob("*.json")):
        objects += [json.loads(line)["object"] for line in path.read_text().splitlines() if line]
    return objects


def test_every_real_object_round_trips_with_typed_facts_for_its_kind():
    objects = _real_objects()
    kinds = {o["kind"] for o in objects}
    assert kinds >= {"Pod", "EndpointSlice", "Event", "Node", "Lease", "ReplicaSet",
                     "Deployment", "Namespace"}
    fingerprint = repository.current().fingerprint
    for seq, obj in enumerate(objects):
        record = records.object_record(
            cluster="c", session="s", seq=seq, event_type="MODIFIED", resource=obj["kind"].lower() + "s",
            obj=obj, object_json=json.dumps(obj).encode(), received_at=samples.BASE_TIME_US)
        assert codec.decode(codec.encode(record), fingerprint) == record
        assert record["uid"] == obj["metadata"]["uid"]
        assert (record["facts"] is None) == (obj["kind"] == "ConfigMap")


def test_markers_round_trip():
    for event_type in sorted(records.MARKER_TYPES):
        record = records.marker_record(
            cluster="c", session="s", seq=1, event_type=event_type, resource="pods",
            api_version="v1", kind="Pod", received_at=5, marker={"cause": "test", "fromResourceVersion": "10",
            "toResourceVersion": "42", "fromTime": 1, "toTime": 2, "objectCount": 3, "kinds": ["pods"]})
        assert codec.decode(codec.encode(record), repository.current().fingerprint) == record


def _without_fields_added_after(record: dict, version: repository.SchemaVersion) -> dict:
    names = {f["name"] for f in version.schema["fields"]}
    return {k: v for k, v in record.items() if k in names}


@pytest.mark.parametrize("old", repository.all_versions()[:-1], ids=lambda v: f"v{v.version}")
def test_records_written_by_an_old_version_decode_with_the_current_reader(old):
    current = samples.pod_record("uid-1", 3, 7)
    out = io.BytesIO()
    schemaless_writer(out, old.schema, _without_fields_added_after(current, old))
    decoded = codec.decode(out.getvalue(), old.fingerprint)
    assert decoded["uid"] == "uid-1" and decoded["seq"] == 7
    for field in repository.current().schema["fields"]:
        if field["name"] not in {f["name"] for f in old.schema["fields"]}:
            assert decoded[field["name"]] == field["default"]


def test_old_versions_are_kept_unchanged_as_the_rule_says():
    # Evolution adds a new vN directory; published ones never change (docs/schemas.md).
    previous = None
    for version in repository.all_versions():
        names = [f["name"] for f in version.schema["fields"]]
        if previous is not None:
            assert names[: len(previous)] == previous or set(previous) <= set(names)
            added = [f for f in version.schema["fields"] if f["name"] not in previous]
            assert all("default" in f for f in added), f"v{version.version} adds a field without default"
        previous = names


def test_unknown_fingerprint_and_garbage_are_clear_errors():
    body = codec.encode(samples.pod_record("u", 0, 0))
    with pytest.raises(DecodeError, match="unknown schema fingerprint 0102030405060708"):
        codec.decode(body, bytes(range(1, 9)))
    with pytest.raises(DecodeError, match="corrupt"):
        codec.decode(body[: len(body) // 2], repository.current().fingerprint)
    with pytest.raises(DecodeError, match="trailing"):
        codec.decode(body + b"\x00", repository.current().fingerprint)


def test_single_object_framing_round_trips():
    body = codec.encode(samples.pod_record("u", 0, 0))
    fingerprint, unframed = codec.unframe(codec.frame(body))
    assert fingerprint == repository.current().fingerprint and unframed == body
    with pytest.raises(DecodeError, match="magic"):
        codec.unframe(b"\x00" + body)


def test_schemas_load_from_an_installed_wheel_outside_the_source_tree(tmp_path):
    wheel_dir, target = tmp_path / "wheel", tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "-w", str(wheel_dir), str(ROOT)], check=True)
    wheel = next(wheel_dir.glob("ktrace-*.whl"))
    shipped = [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".avsc")]
    assert len(shipped) == len(list(AVSC.glob("v*/*.avsc")))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(target), str(wheel)], check=True)
    probe = ("import schemas.repository as r, schemas; "
             "print(schemas.__file__); print(len(r.all_versions()), r.current().fingerprint_hex)")
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out[0].startswith(str(target))
    assert out[1:] == [str(len(repository.all_versions())), repository.current().fingerprint_hex]
