"""Recorders sharing a cluster, and a rolling update of the recorder, against the real
control plane and the real Kafka broker (markers k8s, kafka; docs/scale-out.md).

- Two recorders sharded by kind record together the same object versions (kind, uid,
  resourceVersion, type) that one recorder of every kind records beside them.
- A rolling restart (B starts, then A stops, both writing into the same topics) leaves no
  unseen stretch in ``ktrace gaps`` and the same versions and lifecycle steps as a recorder
  that ran throughout; a stop, a pause, then a start shows the pause as unseen.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from replayer import db
from replayer.analyses.gaps import gaps
from replayer.dedup import version_class
from replayer.replay import replay
from transports.kafka.source import KafkaSource
from transports.kafka.settings import KafkaSettings
from tests.recorder_k8s import RESOURCES, Churn, Recorder, Watcher, deployment_lifecycle, read_kafka

pytestmark = [pytest.mark.k8s, pytest.mark.kafka]

KINDS = (*RESOURCES, "events")
SHARDS = (("pods", "events"), ("replicasets", "deployments", "endpointslices"))


@pytest.fixture
def recorders(k8s_cluster, k8s_namespace, kafka_bootstrap, tmp_path):
    """Makes recorders of the test's namespace; kills any still running afterwards."""
    made: list[Recorder] = []

    def make(prefix: str, name: str, kinds: tuple[str, ...] = KINDS) -> Recorder:
        made.append(Recorder(k8s_cluster, kafka_bootstrap, prefix, k8s_namespace,
                             tmp_path / name, kinds=kinds))
        return made[-1]

    yield make
    for recorder in made:
        if recorder.proc is not None and recorder.proc.poll() is None:
            recorder.kill()


def object_versions(records: dict[str, list[dict]]) -> Counter:
    """(kind, uid, resourceVersion, type) of every object record, once per (session, seq)."""
    seen = {(r["session"], r["resource"], r["seq"]): r for rs in records.values() for r in rs
            if r["marker"] is None and r["uid"]}
    return Counter((r["kind"], r["uid"], r["resourceVersion"], r["type"]) for r in seen.values())


def load(bootstrap: str, prefix: str, path: Path):
    con = db.open_db(str(path))
    source = KafkaSource(KafkaSettings(bootstrap=bootstrap))
    try:
        replay(source, con, source_name=f"kafka:{prefix}", prefix=prefix)
    finally:
        source.close()
    return con


def unseen(con) -> list[dict]:
    """The unseen stretches ``ktrace gaps`` reports."""
    columns, data = gaps(con)
    return [row for row in (dict(zip(columns, values)) for values in data)
            if row["category"] == "unseen"]


def test_two_recorders_sharded_by_kind_record_what_one_records(recorders, k8s_cluster, k8s_namespace,
                                                               kafka_bootstrap, unique_topic_prefix,
                                                               tmp_path, record_property) -> None:
    cluster, ns = k8s_cluster, k8s_namespace
    one = recorders(f"{unique_topic_prefix}-one", "one")
    shards = [recorders(f"{unique_topic_prefix}-shards", f"shard{i}", kinds) for i, kinds in enumerate(SHARDS)]
    watcher = Watcher(cluster, ns)
    try:
        with ThreadPoolExecutor(3) as pool:  # each waits for its /readyz
            list(pool.map(Recorder.start, (one, *shards)))
        deployment_lifecycle(cluster, ns, "web", 2, 3)
        watcher.wait_quiet()
    finally:
        watcher.close()
    for recorder in (one, *shards):
        assert recorder.stop() == 0
    alone = object_versions(read_kafka(kafka_bootstrap, f"{unique_topic_prefix}-one"))
    sharded_records = read_kafka(kafka_bootstrap, f"{unique_topic_prefix}-shards")
    together = object_versions(sharded_records)
    record_property("object_versions", sum(alone.values()))
    assert {kind for kind, *_ in alone} == {"Pod", "Event", "ReplicaSet", "Deployment", "EndpointSlice"}
    assert together == alone
    assert len({r["session"] for rs in sharded_records.values() for r in rs}) == 2

    con = load(kafka_bootstrap, f"{unique_topic_prefix}-shards", tmp_path / "shards.duckdb")
    assert unseen(con) == []
    assert con.execute("SELECT count(DISTINCT session) FROM session_coverage").fetchone()[0] == 2
    con.close()


def comparable_versions(con) -> Counter:
    """Each object version once, its type as the duplicate check judges it."""
    return Counter((kind, uid, rv, version_class(t)) for kind, uid, rv, t in con.execute(
        "SELECT kind, uid, resource_version, type FROM raw_events WHERE uid IS NOT NULL").fetchall())


def steps(con) -> Counter:
    return Counter(con.execute("SELECT uid, step FROM pod_transitions").fetchall())


def test_a_rolling_restart_leaves_no_unseen_stretch(recorders, k8s_cluster, k8s_namespace, kafka_bootstrap,
                                                    unique_topic_prefix, tmp_path, record_property) -> None:
    """A (state a) runs; B (a fresh state, as a new pod's emptyDir) starts and lists while A
    still records; A stops. A third recorder runs throughout on its own topics."""
    cluster, ns = k8s_cluster, k8s_namespace
    rolled, steady = f"{unique_topic_prefix}-rolled", f"{unique_topic_prefix}-steady"
    throughout = recorders(steady, "throughout").start()
    a = recorders(rolled, "a").start()
    watcher = Watcher(cluster, ns)
    try:
        with Churn(cluster, ns):
            time.sleep(6)
            b = recorders(rolled, "b").start()
            b_ready_at = time.monotonic()
            assert a.stop() == 0
            record_property("a_stopped_s_after_b_ready", round(time.monotonic() - b_ready_at, 2))
            time.sleep(6)
        watcher.wait_quiet()
    finally:
        watcher.close()
    assert b.stop() == 0 and throughout.stop() == 0
    con = load(kafka_bootstrap, rolled, tmp_path / "rolled.duckdb")
    reference = load(kafka_bootstrap, steady, tmp_path / "steady.duckdb")
    assert unseen(con) == []
    assert con.execute("SELECT count(DISTINCT session) FROM session_coverage").fetchone()[0] == 2
    duplicates = con.execute("SELECT count(*) FROM load_problems WHERE problem = 'duplicate'").fetchone()[0]
    record_property("duplicates_across_sessions", duplicates)
    assert duplicates > 0, "B's list repeated versions A had recorded: they must be found"
    assert comparable_versions(con) == comparable_versions(reference)
    assert steps(con) == steps(reference) and steps(reference)
    assert_watched_versions_loaded(watcher, con)
    con.close()
    reference.close()


def assert_watched_versions_loaded(watcher: Watcher, con) -> None:
    """Every version kubectl saw is in the rolled recording."""
    loaded = set(con.execute("SELECT uid, resource_version FROM raw_events "
                             "WHERE uid IS NOT NULL").fetchall())
    missing = [(uid, rv) for resource in RESOURCES for _, uid, rv in watcher.seen[resource]
               if (uid, rv) not in loaded]
    assert not missing, f"{len(missing)} versions kubectl saw were not recorded: {missing[:5]}"


def test_a_stop_then_start_with_a_pause_shows_the_pause_unseen(recorders, k8s_cluster, k8s_namespace,
                                                              kafka_bootstrap, unique_topic_prefix,
                                                              tmp_path) -> None:
    cluster, ns = k8s_cluster, k8s_namespace
    a = recorders(unique_topic_prefix, "a").start()
    with Churn(cluster, ns):
        time.sleep(4)
        assert a.stop() == 0
        time.sleep(5)
        b = recorders(unique_topic_prefix, "b").start()
        time.sleep(4)
    assert b.stop() == 0
    con = load(kafka_bootstrap, unique_topic_prefix, tmp_path / "paused.duckdb")
    [stretch] = unseen(con)
    assert stretch["type"] == "session_gap" and stretch["topics"] == []
    assert stretch["seconds"] >= 5
    assert stretch["detail"].startswith("recorder stopped; next session ")
    con.close()
