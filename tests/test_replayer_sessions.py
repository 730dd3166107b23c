"""Recorder sessions that overlap in time — shards by kind or namespace, a rolling update of
the recorder — on small recorded streams: unseen stretches per topic from every session
covering it, each (session, topic) its own sequence, and one version per object version
however many sessions recorded it (sql/session_stretches.sql, sql/sequence_holes.sql, the loader's
duplicate check).

The streams are written as the recorder writes them (SESSION_START with its watch keys on
every topic at seq 0, objects, SESSION_END), interleaved by receive time as one Kafka
partition or local-log topic holds them.
"""

from __future__ import annotations

import pytest

from replayer import db, projections
from replayer.analyses.races import capacity_dips
from replayer.analyses.stuck import stuck
from replayer.replay import replay
from transports.locallog.source import LocalLogSource
from tests.replayer_data import rows
from tests.samples import BASE_TIME_US, pod
from tests.sessions_data import SECOND_US, Session, at_time, at_us, load, web_service, write_log


def session_stretches(con) -> list[tuple]:
    return rows(con, "SELECT type, session, topic, namespace, epoch(start_at) - ?, "
                     "epoch(end_at) - ? FROM unseen_stretches ORDER BY start_at, topic",
                BASE_TIME_US / SECOND_US, BASE_TIME_US / SECOND_US)


BOTH = {"pods": (), "events": ()}


def test_a_rolling_update_leaves_no_unseen_stretch(tmp_path):
    """B starts before A stops, both writing into the same topics."""
    con = load(tmp_path, Session("a", 0, 100, BOTH), Session("b", 90, 200, BOTH))
    assert session_stretches(con) == []


def test_a_stop_then_start_is_one_stretch_of_the_whole_recording(tmp_path):
    con = load(tmp_path, Session("a", 0, 100, BOTH), Session("b", 110, 200, BOTH))
    assert session_stretches(con) == [("session_gap", "a", None, None, 100, 110)]


def test_a_crash_before_the_next_start_is_a_lost_session(tmp_path):
    con = load(tmp_path, Session("a", 0, 100, BOTH, ended=False), Session("b", 130, 200, BOTH))
    [(kind, session, topic, _, start, end)] = session_stretches(con)
    assert (kind, session, topic, start, end) == ("session_lost", "a", None, 100, 130)


def test_a_shard_restarting_leaves_a_stretch_on_its_own_topics_only(tmp_path):
    pods = Session("pods", 0, 200, {"pods": ()})
    events = [Session("events-1", 1, 50, {"events": ()}), Session("events-2", 60, 200, {"events": ()})]
    con = load(tmp_path, pods, *events)
    assert session_stretches(con) == [("session_gap", "events-1", "ktrace.events", None, 50, 60)]


def test_one_shard_in_a_rolling_update_while_the_other_runs_on(tmp_path):
    con = load(tmp_path, Session("pods", 0, 200, {"pods": ()}),
               Session("events-1", 1, 100, {"events": ()}), Session("events-2", 95, 200, {"events": ()}))
    assert session_stretches(con) == []


def test_a_shard_that_never_comes_back_is_unseen_until_the_end_of_the_data(tmp_path):
    con = load(tmp_path, Session("pods", 0, 1000, {"pods": ()}),
               Session("events", 0, 100, {"events": ()}, ended=False))
    assert session_stretches(con) == [("session_lost", "events", "ktrace.events", None, 100, 1000)]
    assert "no session watched ktrace.events afterwards" in rows(
        con, "SELECT detail FROM unseen_stretches")[0][0]


@pytest.mark.parametrize("ended", [True, False])
def test_a_shard_that_stops_shortly_before_the_others_ends_its_recording_there(tmp_path, ended):
    """Less than session_thresholds' silent_session_s before the data ends: shards stopped
    one after the other, or a quiet shard still watching (not ended)."""
    con = load(tmp_path, Session("pods", 0, 1000, {"pods": ()}),
               Session("events", 0, 900, {"events": ()}, ended=ended))
    assert session_stretches(con) == []


def test_a_shard_stopped_long_before_the_others_is_unseen_from_then_on(tmp_path):
    con = load(tmp_path, Session("pods", 0, 1000, {"pods": ()}), Session("events", 0, 600, {"events": ()}))
    assert session_stretches(con) == [("session_gap", "events", "ktrace.events", None, 600, 1000)]


def test_namespace_shards_are_covered_per_namespace(tmp_path):
    a = Session("ns-a", 0, 200, {"pods": ("a",)})
    b = [Session("ns-b-1", 0, 50, {"pods": ("b",)}), Session("ns-b-2", 70, 200, {"pods": ("b",)})]
    con = load(tmp_path, a, *b)
    assert session_stretches(con) == [("session_gap", "ns-b-1", "ktrace.pods", "b", 50, 70)]


def test_a_namespace_session_does_not_cover_the_others(tmp_path):
    """An all-namespaces recorder restarts while a recorder of namespace a runs on: the
    other namespaces were unseen (the stretch is the topic's, for every namespace)."""
    con = load(tmp_path, Session("ns-a", 0, 200, {"pods": ("a",)}),
               Session("all-1", 0, 50, {"pods": ()}), Session("all-2", 70, 200, {"pods": ()}))
    assert session_stretches(con) == [("session_gap", "all-1", "ktrace.pods", None, 50, 70)]


def deleting(uid: str, namespace: str, at_s: float) -> list[tuple[float, str, dict]]:
    """A pod added at 0 s whose deletion (grace 0) is requested at ``at_s``, never DELETED."""
    added = pod(uid, 0)
    added["metadata"]["namespace"] = namespace
    deleted = pod(uid, 1)
    deleted["metadata"].update(namespace=namespace, deletionGracePeriodSeconds=0,
                               deletionTimestamp=at_time(at_s).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return [(0.5, "ADDED", added), (at_s, "MODIFIED", deleted)]


def test_a_stretch_hides_only_its_own_clusters_and_namespaces_objects(tmp_path):
    """Judged at 100 s, while shard b and another cluster's recorder were down: only the
    namespace-b pod's fate is hidden by a stretch (its recording_gap cause)."""
    a = Session("ns-a", 0, 200, {"pods": ("a",)}, objects=deleting("a1", "a", 10))
    b = [Session("ns-b-1", 0, 50, {"pods": ("b",)}, objects=deleting("b1", "b", 10)),
         Session("ns-b-2", 150, 200, {"pods": ("b",)})]
    other = [Session("other-1", 0, 50, {"pods": ()}, cluster="other"),
             Session("other-2", 150, 200, {"pods": ()}, cluster="other")]
    con = load(tmp_path, a, *b, *other)
    judged = stuck(con, at=at_time(100), cluster="test")
    columns, found = judged.rows
    causes = {r[columns.index("name")]: [c["cause"] for c in r[columns.index("causes")]]
              for r in found}
    assert causes == {"web-a1": ["unknown"], "web-b1": ["recording_gap"]}


def node(uid: str, version: int, ready: str) -> dict:
    """Node ``node-1`` (the sample pods' node) with its Ready condition."""
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-1", "uid": uid, "resourceVersion": str(2000 + version)},
            "status": {"conditions": [{"type": "Ready", "status": ready,
                                       "lastTransitionTime": "2026-11-30T06:51:40Z"}]}}


def test_a_node_of_another_cluster_by_the_same_name_is_not_the_pods(tmp_path):
    """Two clusters, each with a node-1: the other cluster's (newer, not Ready) is no cause
    of this cluster's stuck pod, whose own node-1 is Ready."""
    mine = Session("mine", 0, 200, {"pods": (), "nodes": ()},
                   objects=[(0.2, "ADDED", node("n-mine", 0, "True")), *deleting("a1", "a", 10)])
    other = Session("theirs", 0, 200, {"pods": (), "nodes": ()}, cluster="other",
                    objects=[(0.3, "ADDED", node("n-theirs", 1, "False"))])
    con = load(tmp_path, mine, other)
    columns, found = stuck(con, at=at_time(100), cluster="test").rows
    assert [(r[columns.index("name")], r[columns.index("top_cause")]) for r in found] == [
        ("web-a1", "unknown")]


def test_a_load_touches_only_its_own_clusters_pods(tmp_path, monkeypatch):
    """Clusters a and b each have a pod shop/web-1 on a node-1, b's deleted at 12 s. A later
    load of a's pod and node-1 (from 10 s) marks a's pod and node for recomputing, not b's
    pod: neither the reused name nor the node's name reaches into the other cluster."""
    def web_1(uid: str, version: int) -> dict:
        obj = pod(uid, version)
        obj["metadata"].update(namespace="shop", name="web-1")
        return obj

    watches = {"pods": (), "nodes": ()}
    earlier = [Session("rec-a", 0, 5, watches, cluster="a", objects=[(1, "ADDED", web_1("a-1", 0))]),
               Session("rec-b", 0, 15, watches, cluster="b", objects=[
                   (1, "ADDED", web_1("b-1", 0)), (12, "DELETED", web_1("b-1", 1))])]
    later = Session("rec-a-2", 9, 20, watches, cluster="a", objects=[
        (10, "MODIFIED", node("a-node", 0, "True")), (11, "MODIFIED", web_1("a-1", 1))])
    con = db.open_db(str(tmp_path / "replay.duckdb"))
    replay(LocalLogSource(write_log(tmp_path / "earlier", *earlier)), con,
           source_name="earlier", prefix="ktrace")
    scopes = []

    def mark_touched(con) -> None:  # the scope the refresh is about to recompute
        projections_mark_touched(con)
        scopes.append({uid for (uid,) in con.execute("SELECT uid FROM projection_scope").fetchall()})
    projections_mark_touched = projections.mark_touched
    monkeypatch.setattr(projections, "mark_touched", mark_touched)
    replay(LocalLogSource(write_log(tmp_path / "later", later)), con, source_name="later",
           prefix="ktrace")
    assert scopes == [{"a-1", "a-node"}]


def test_a_capacity_dip_is_its_own_clusters_service(tmp_path):
    """Two clusters, each with Service shop/web over a 2-replica Deployment shop/web: in
    cluster a one endpoint is not ready from 5 s to 8 s — a dip to 1 of 2 —, cluster b's
    stay ready. Counted together (4 ready, then 3, against 2 desired) the dip vanished."""
    watches = {"deployments": (), "replicasets": (), "pods": (), "endpointslices": ()}
    a = Session("rec-a", 0, 20, watches, cluster="a",
                objects=web_service("a", [(2, True), (5, False), (8, True)]))
    b = Session("rec-b", 0, 20, watches, cluster="b", objects=web_service("b", [(2, True)]))
    con = load(tmp_path, a, b)
    zero = at_us(0) / SECOND_US
    dips = rows(con, "SELECT cluster, namespace, service, deployment, desired, min_ready, "
                     "round(epoch(start_at) - ?, 3), round(epoch(end_at) - ?, 3) "
                     "FROM capacity_dips", zero, zero)
    assert dips == [("a", "shop", "web", "web", 2, 1, 5.0, 8.0)]
    for cluster, found in (("a", 1), ("b", 0)):
        assert len(capacity_dips(con, cluster=cluster)[1]) == found


def versions(uid: str, *steps: int) -> list[dict]:
    return [pod(uid, step, phase="Running" if step else "Pending") for step in steps]


def test_the_same_version_recorded_by_two_sessions_is_loaded_once(tmp_path):
    """A watches the pod through rv 1000..1003; B starts at 90 s, lists it at rv 1002 and
    then sees rv 1003 as A does: each version is one row, the duplicates' sequence numbers
    count as delivered (no sequence hole in either session), and the lifecycle steps are
    those one recorder gives."""
    v0, v1, v2, v3 = versions("p1", 0, 1, 2, 3)
    a = Session("a", 0, 100, {"pods": ()})
    a.objects = [(10, "ADDED", v0), (20, "MODIFIED", v1), (85, "MODIFIED", v2), (95, "MODIFIED", v3)]
    b = Session("b", 90, 200, {"pods": ()})
    b.objects = [(91, "LISTED", v2), (95.001, "MODIFIED", v3)]
    con = load(tmp_path, a, b)
    assert rows(con, "SELECT resource_version, type, session FROM raw_events WHERE uid = 'p1' "
                     "ORDER BY rv") == [("1000", "ADDED", "a"), ("1001", "MODIFIED", "a"),
                                         ("1002", "MODIFIED", "a"), ("1003", "MODIFIED", "a")]
    assert rows(con, "SELECT count(*) FROM load_problems WHERE problem = 'duplicate'") == [(2,)]
    assert session_stretches(con) == []

    single = Session("one", 0, 200, {"pods": ()})
    single.objects = a.objects
    one = load(tmp_path / "one", single)
    steps = "SELECT step, time, component, derived FROM pod_transitions ORDER BY step_no"
    assert rows(con, steps) == rows(one, steps) and rows(one, steps)


@pytest.mark.parametrize("second", ["LISTED", "MODIFIED"])
def test_a_version_only_the_second_session_saw_is_kept(tmp_path, second):
    v0, v1 = versions("p2", 0, 1)
    a = Session("a", 0, 100, {"pods": ()})
    a.objects = [(10, "ADDED", v0)]
    b = Session("b", 90, 200, {"pods": ()})
    b.objects = [(91, "LISTED", v0), (150, second, v1)]
    con = load(tmp_path, a, b)
    assert rows(con, "SELECT resource_version, session FROM raw_events WHERE uid = 'p2' "
                     "ORDER BY rv") == [("1000", "a"), ("1001", "b")]
