"""ktrace import of kubectl --watch captures of the real control plane."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import orjson
import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from replayer import db
from replayer.importer import split_json_items
from replayer.replay import import_captures
from schemas.redaction import REDACTED
from tests.replayer_data import captures, load_captures, rows

STEPS = ("SELECT namespace || '/' || pod, list(step ORDER BY step_no) FROM pod_transitions "
         "GROUP BY ALL ORDER BY 1")


def pods_capture() -> Path:
    return next(Path(f) for f in captures("scenarios") if f.endswith("/pods.json"))


def test_import_and_recording_show_the_same_steps_in_the_same_order(imported, recorded):
    from_import, from_recorder = dict(rows(imported, STEPS)), dict(rows(recorded, STEPS))
    # gap/ghost lived and died while the recorder was down: only kubectl saw it
    assert set(from_import) - set(from_recorder) == {"gap/ghost"}
    assert len(from_recorder) == 19
    for pod, steps in from_recorder.items():
        assert from_import[pod] == steps, pod


def test_step_times_agree_within_the_documented_precision(imported, recorded):
    sql = ("SELECT namespace || '/' || pod || ' ' || step, time FROM pod_transitions "
           "WHERE step <> 'deleted'")
    derived, received = dict(rows(imported, sql)), dict(rows(recorded, sql))
    for key, at in received.items():
        # server timestamps are whole seconds: a derived time is at most 1 s early
        assert abs((at - derived[key]).total_seconds()) < 2.0, key


def test_imported_times_are_marked_derived(imported):
    sources = {s.split(":")[0] for (s,) in rows(imported, "SELECT DISTINCT time_source FROM raw_events")}
    assert sources == {"derived"}
    assert rows(imported, "SELECT count(*) FROM raw_events WHERE time_source = 'derived:none'") == [(0,)]


def test_watch_restart_relists_are_duplicates(imported):
    # the captures were restarted with the API server: their relist repeats what was seen
    # (ADDED of unchanged objects: the version already loaded, whatever its event type)
    assert rows(imported, "SELECT problem, count(*) FROM load_problems GROUP BY ALL ORDER BY 1") == [
        ("duplicate", 113), ("unknown_kind", 1)]


def test_reimport_adds_nothing_and_a_grown_file_adds_only_its_tail(tmp_path: Path):
    files = [str(shutil.copy(f, tmp_path)) for f in captures("scenarios")]
    pods = next(f for f in files if f.endswith("pods.json"))
    text = Path(pods).read_text().splitlines(keepends=True)
    Path(pods).write_text("".join(text[:-10]))
    con = db.open_db(str(tmp_path / "i.duckdb"))
    first = import_captures(files, con, cluster="c").stats.loaded
    assert import_captures(files, con, cluster="c").stats.loaded == 0
    Path(pods).write_text("".join(text))
    grown = import_captures(files, con, cluster="c").stats
    # the tail is the restarted capture's relist: ADDED of versions already loaded, and new
    assert (grown.loaded + grown.duplicates, grown.deliveries) == (10, 10) and grown.loaded
    assert first + grown.loaded == rows(con, "SELECT count(*) FROM raw_events")[0][0]


def test_pretty_printed_concatenated_captures_load_the_same(tmp_path: Path):
    lines = pods_capture().read_text().splitlines()
    pretty = tmp_path / "pods.json"
    pretty.write_text("".join(orjson.dumps(orjson.loads(l), option=orjson.OPT_INDENT_2).decode()
                              + "\n" for l in lines))
    one = load_captures(str(tmp_path / "a.duckdb"), [str(pods_capture())])
    two = load_captures(str(tmp_path / "b.duckdb"), [str(pretty)])
    sql = "SELECT uid, resource_version, type, received_at FROM raw_events ORDER BY ALL"
    assert rows(one, sql) == rows(two, sql) and len(rows(one, sql)) > 100


def test_malformed_lines_and_watch_errors_are_counted(tmp_path: Path):
    lines = pods_capture().read_text().splitlines()
    broken = tmp_path / "pods.json"
    broken.write_text("\n".join(
        lines[:5] + ['{"type": "MODIFIED", "object": {"kind": "Pod", "metadata": ']
        + lines[5:6] + ["not json at all",
                     '{"type":"ERROR","object":{"kind":"Status","message":"too old resource version"}}']
        + lines[6:]) + "\n")
    con = db.open_db(str(tmp_path / "m.duckdb"))
    summary = import_captures([str(broken)], con, cluster="c")
    assert summary.stats.problems["malformed_json"] == 2
    assert summary.stats.problems["watch_error"] == 1
    # every line loads but the relist's repeats of versions already loaded
    assert summary.stats.loaded + summary.stats.duplicates == len(lines)


def test_splitting_resynchronises_after_garbage():
    text = '{"a": 1}\n{"b":\n  2}\ngarbage {\n{"c": 3}\n'
    items = list(split_json_items(text))
    assert items[0] == {"a": 1} and items[1] == {"b": 2} and items[-1] == {"c": 3}
    assert len(items) == 4 and items[2].problem == "malformed_json"


def test_components_agree_with_the_recorders_attribution(imported, recorded):
    sql = "SELECT namespace || '/' || pod || ' ' || step, component FROM pod_transitions"
    derived, attributed = dict(rows(imported, sql)), dict(rows(recorded, sql))
    differ = {k for k, c in attributed.items() if derived.get(k) != c}
    # gap/missed was deleted while the recorder was down (inferred: unknown); status steps
    # are the status subresource's writer's in both (the recording's own attribution once
    # credited hold/held's to its creator, on a 1 s managedFields tie)
    assert differ == {"gap/missed deleted"}
    # with the NodeNotReady warnings on victim and orphan, and orphan's taint-eviction
    # cancellation (taint-eviction-controller in both)
    assert len(attributed) == 140
    assert attributed["gone/orphan taint_eviction_cancelled"] == "taint-eviction-controller"


# --- redaction: imports store what the recorder would ----------------------------------------

SECRET = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
          "metadata": {"name": "db", "namespace": "shop", "uid": "s-1", "resourceVersion": "5",
                       "creationTimestamp": "2026-11-30T07:11:00Z"},
          "data": {"password": "aHVudGVyMg=="}, "stringData": {"token": "s3cr3t-token"}}


def _pod_with_env() -> dict:
    pod = orjson.loads(pods_capture().read_text().splitlines()[0])["object"]
    container = pod["spec"]["containers"][0]
    container["env"] = [{"name": "DB_PASSWORD", "value": "hunter2"}]
    pod["metadata"].setdefault("annotations", {})[
        "kubectl.kubernetes.io/last-applied-configuration"] = '{"env": "hunter2"}'
    return pod


def _import_cli(tmp_path: Path, capture: Path, *flags: str):
    dbfile = str(tmp_path / "r.duckdb")
    result = CliRunner().invoke(cli, ["import", str(capture), "--db", dbfile, *flags])
    return result, dbfile


@pytest.mark.parametrize("flags", [(), ("--no-redact",)], ids=["default", "no-redact"])
def test_import_stores_no_secret_and_by_default_no_env_value(tmp_path: Path, flags):
    capture = tmp_path / "mixed.json"
    capture.write_text("\n".join(orjson.dumps(o).decode() for o in (
        {"type": "ADDED", "object": SECRET}, {"type": "ADDED", "object": _pod_with_env()})))
    result, dbfile = _import_cli(tmp_path, capture, *flags)
    assert result.exit_code == 0, result.output
    assert "secret_refused 1" in result.output
    con = duckdb.connect(dbfile, read_only=True)
    objects = " ".join(o for (o,) in rows(con, "SELECT object::VARCHAR FROM raw_events"))
    kinds = rows(con, "SELECT kind, count(*) FROM raw_events GROUP BY ALL")
    con.close()
    assert kinds == [("Pod", 1)]
    assert "aHVudGVyMg==" not in objects and "s3cr3t-token" not in objects
    assert ("hunter2" in objects) == bool(flags)
    if not flags:
        assert objects.count(REDACTED) == 2


def test_import_redacts_extra_paths_like_record(tmp_path: Path):
    capture = tmp_path / "pod.json"
    capture.write_text(orjson.dumps({"type": "ADDED", "object": _pod_with_env()}).decode())
    result, dbfile = _import_cli(tmp_path, capture, "--redact", "spec.containers[*].image")
    assert result.exit_code == 0, result.output
    con = duckdb.connect(dbfile, read_only=True)
    assert rows(con, "SELECT object->>'$.spec.containers[0].image' FROM raw_events") == [(REDACTED,)]
    con.close()
    contradiction, _ = _import_cli(tmp_path, capture, "--redact", "a.b", "--no-redact")
    assert contradiction.exit_code == 2 and "contradict" in contradiction.output


def test_a_kubectl_get_list_imports_its_items(tmp_path: Path):
    objects = [orjson.loads(line)["object"] for line in pods_capture().read_text().splitlines()]
    latest = {o["metadata"]["uid"]: o for o in objects}
    listing = tmp_path / "pods-list.json"
    listing.write_text(orjson.dumps({"apiVersion": "v1", "kind": "List",
                                     "items": list(latest.values())}).decode())
    con = db.open_db(str(tmp_path / "l.duckdb"))
    summary = import_captures([str(listing)], con, cluster="c")
    assert summary.stats.loaded == len(latest) and summary.stats.problem_count() == 0
    assert rows(con, "SELECT count(DISTINCT uid) FROM raw_events WHERE kind = 'Pod'") == [
        (len(latest),)]
    con.close()
