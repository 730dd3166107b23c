"""``replay -n NS`` (replayer/record_filter.py): a namespace loaded alone — its records and
the cluster-scoped objects they use — answers as the whole recording's load answers for
that namespace (stuck, races, timelines, get), on recordings whose pods ran on several
nodes, were drained, deleted a namespace and waited for a claim; ``--kinds`` reads only
its kinds' topics."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from replayer import db
from replayer.analyses.get import get
from replayer.analyses.races import races
from replayer.analyses.stuck import stuck
from replayer.analyses.timeline import timeline
from schemas.records import OBJECT_TYPES
from replayer.record_filter import RecordFilter
from replayer.replay import import_captures, replay
from tests.replayer_data import captures, rows, send_recorded
from transports.kafka import framing
from transports.kafka.settings import KafkaSettings
from transports.kafka.source import KafkaSource
from transports.locallog.source import LocalLogSource

DATA = Path(__file__).parent / "data"
RECORDINGS = {"scenarios": DATA / "replayer" / "scenarios" / "recording",
              "node": DATA / "node" / "scenarios" / "recording",
              "drain": DATA / "node" / "drain" / "recording"}
NAMESPACES = [("scenarios", "race"), ("scenarios", "hold"), ("scenarios", "lost"),
              ("scenarios", "doomed"), ("node", "storage"), ("node", "crash"),
              ("node", "probes"), ("drain", "drain")]
GET_KINDS = ("pods", "deployments", "replicasets", "persistentvolumeclaims", "events")


def load(path: Path, recording: str, keep: RecordFilter = RecordFilter()
         ) -> duckdb.DuckDBPyConnection:
    con = db.open_db(str(path))
    replay(LocalLogSource(str(RECORDINGS[recording])), con, source_name=recording,
           prefix="ktrace", keep=keep)
    return con


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("whole")
    cons = {name: load(folder / f"{name}.duckdb", name) for name in RECORDINGS}
    yield cons
    for con in cons.values():
        con.close()


def positions(con: duckdb.DuckDBPyConnection) -> dict[int, tuple]:
    """Each event id's record (ids are a load's own numbering)."""
    return {event_id: (topic, offset) for event_id, topic, offset in con.execute(
        'SELECT event_id, topic, "offset" FROM raw_events').fetchall()}


def answered(con: duckdb.DuckDBPyConnection, columns: list[str], found: list[tuple]
             ) -> list[tuple]:
    """Rows with their event ids named by record."""
    where = positions(con)
    ids = [i for i, c in enumerate(columns) if "event_id" in c]
    return [tuple(where.get(v) if i in ids else v for i, v in enumerate(row)) for row in found]


def answers(con: duckdb.DuckDBPyConnection, namespace: str, at: datetime,
            pods: list[str], nodes: list[str]) -> dict[str, list[tuple]]:
    judged = stuck(con, namespace=namespace, at=at).rows
    found = {"stuck": answered(con, *judged), "races": races(con, namespace=namespace)[1]}
    for pod in pods:
        found[f"timeline {pod}"] = answered(con, *timeline(con, pod, namespace))
    for kind in GET_KINDS:
        found[f"get {kind}"] = answered(con, *get(con, kind, at, namespace=namespace))
    if nodes:  # no names: every node
        found["get nodes"] = answered(con, *get(con, "nodes", at, names=tuple(nodes)))
    found["get namespace"] = answered(con, *get(con, "namespaces", at, names=(namespace,)))
    return found


@pytest.mark.parametrize("recording,namespace", NAMESPACES)
def test_a_namespace_loaded_alone_answers_as_the_whole_load(tmp_path, whole, recording,
                                                             namespace):
    alone = load(tmp_path / "alone.duckdb", recording, RecordFilter(namespace))
    try:
        full = whole[recording]
        at = rows(alone, "SELECT max(received_at) FROM raw_events")[0][0]
        pods = [n for n, in rows(full, "SELECT DISTINCT name FROM raw_events WHERE kind = 'Pod' "
                                       "AND namespace = ? ORDER BY 1", namespace)]
        used = [n for n, in rows(full, "SELECT DISTINCT p.node_name FROM pods p JOIN raw_events "
                                       "r USING (event_id) WHERE r.namespace = ? AND "
                                       "p.node_name IS NOT NULL ORDER BY 1", namespace)]
        expected = answers(full, namespace, at, pods, used)
        assert answers(alone, namespace, at, pods, used) == expected
        # what the alone load holds outside the namespace: the namespace, its pods' nodes
        # (with their leases and the Events about them), nothing else but markers
        others = rows(alone, "SELECT DISTINCT kind, namespace, name FROM raw_events WHERE "
                             "coalesce(namespace, '') <> ? AND list_contains(?, type) "
                             "ORDER BY ALL", namespace, sorted(OBJECT_TYPES))
        assert {(k, n) for k, ns, n in others if k not in ("Event", "StorageClass")} == (
            {("Namespace", namespace)} | {("Node", n) for n in used}
            | {("Lease", n) for n in used if (n,) in rows(
                full, "SELECT name FROM raw_events WHERE kind = 'Lease'")})
        assert all(n.rpartition(".")[0] in used for k, ns, n in others if k == "Event")
    finally:
        alone.close()


def test_every_version_of_a_used_node_is_kept(tmp_path, whole):
    """The nodes' topic sorts before the pods': read after them, a node's versions from
    before the pod was scheduled there are still kept."""
    alone = load(tmp_path / "alone.duckdb", "drain", RecordFilter("drain"))
    try:
        sql = "SELECT count(*) FROM raw_events WHERE kind = 'Node' AND name = 'real-node-0'"
        assert rows(alone, sql) == rows(whole["drain"], sql)
        assert rows(alone, sql)[0][0] > 1
    finally:
        alone.close()


def test_kinds_reads_only_their_topics(tmp_path, whole):
    source = LocalLogSource(str(RECORDINGS["drain"]))
    con = db.open_db(str(tmp_path / "kinds.duckdb"))
    try:
        replay(source, con, source_name="drain", prefix="ktrace",
               keep=RecordFilter(kinds=frozenset({"Pod", "Node"})))
        assert {t for t, in rows(con, "SELECT DISTINCT topic FROM load_positions")} == {
            "ktrace.nodes", "ktrace.pods"}
        sql = ("SELECT kind, count(*) FROM raw_events WHERE kind IN ('Pod', 'Node') "
               "GROUP BY ALL ORDER BY ALL")
        assert rows(con, sql) == rows(whole["drain"], sql)
        assert rows(con, "SELECT DISTINCT kind FROM raw_events ORDER BY 1") == [
            ("Node",), ("Pod",)]
    finally:
        con.close()


def test_a_resumed_namespace_load_keeps_the_nodes_it_needed(tmp_path, whole):
    """A second load of the same source starts from the names its database needs."""
    con = load(tmp_path / "alone.duckdb", "drain", RecordFilter("drain"))
    try:
        scope = RecordFilter("drain").scope(con)
        assert "real-node-0" in scope.needed.nodes
    finally:
        con.close()


def test_an_import_learns_the_nodes_from_any_file_order(tmp_path):
    files = captures("scenarios")
    nodes_first = sorted(files, key=lambda f: "node" not in Path(f).name)
    con = db.open_db(str(tmp_path / "imported.duckdb"))
    try:
        import_captures(nodes_first, con, cluster="imported", keep=RecordFilter("race"))
        used = rows(con, "SELECT DISTINCT p.node_name FROM pods p WHERE p.node_name "
                         "IS NOT NULL ORDER BY 1")
        kept = rows(con, "SELECT DISTINCT name FROM raw_events WHERE kind = 'Node' ORDER BY 1")
        assert used and kept == used
    finally:
        con.close()


@pytest.mark.kafka
@pytest.mark.parametrize("headed", [True, False], ids=["ktrace.object", "written before it"])
def test_a_namespace_from_kafka_is_the_namespace_from_the_local_log(
        kafka_bootstrap: str, unique_topic_prefix: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, headed: bool):
    """Read group after group from a real broker (three partitions a topic); the records of
    other namespaces dropped by their ``ktrace.object`` header, their values not read, or,
    in messages written without it, decided on their envelopes as before."""
    settings = KafkaSettings(bootstrap=kafka_bootstrap)
    if not headed:  # the sink writes a header no reader looks for
        monkeypatch.setattr(framing, "HEADER_OBJECT", "ktrace.test-unread")
    send_recorded(settings, unique_topic_prefix)
    content = ("SELECT session, resource, seq, type, uid, resource_version, received_at "
               "FROM raw_events ORDER BY ALL")
    from_kafka = db.open_db(str(tmp_path / "k.duckdb"))
    source = KafkaSource(settings)
    try:
        replay(source, from_kafka, source_name="kafka", prefix=unique_topic_prefix,
               keep=RecordFilter("race"))
    finally:
        source.close()
    filtered = rows(from_kafka, "SELECT deliveries - loaded FROM loads")[0][0]
    assert (0 < source.passed_by <= filtered) if headed else source.passed_by == 0
    direct = load(tmp_path / "d.duckdb", "scenarios", RecordFilter("race"))
    assert rows(from_kafka, content) == rows(direct, content)
    assert rows(direct, "SELECT count(*) FROM raw_events WHERE kind = 'Node' AND "
                        "type <> 'BOOKMARK' AND namespace IS NULL AND name IS NOT NULL") != [(0,)]


def test_the_replay_command_takes_kinds_by_any_name(tmp_path):
    path = str(tmp_path / "k.duckdb")
    done = CliRunner().invoke(cli, ["replay", str(RECORDINGS["drain"]), "--db", path,
                                    "-n", "drain", "--kinds", "po,no", "--kinds", "Event"])
    assert done.exit_code == 0, done.output
    con = db.open_db(path)
    try:
        assert {k for k, in rows(con, "SELECT DISTINCT kind FROM raw_events")} == {
            "Pod", "Node", "Event"}
        assert rows(con, "SELECT load_filter FROM sources") == [
            ("namespace=drain cluster=* kinds=Event,Node,Pod",)]
    finally:
        con.close()
    wrong = CliRunner().invoke(cli, ["replay", str(RECORDINGS["drain"]), "--db", path,
                                     "--kinds", "pods,gizmos"])
    assert wrong.exit_code == 2
    assert "Invalid value for '--kinds': unknown kind 'gizmos'" in wrong.output
