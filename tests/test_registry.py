"""Kafka the way data teams run it: the Confluent framing against a real Schema Registry
(Apicurio's Confluent-compatible API) and a real broker, read back by a plain
``confluent-kafka`` consumer that knows nothing of ktrace (tests/registry_consumer.py)."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from collections import Counter

import duckdb
import pytest
from click.testing import CliRunner
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from fastavro import schemaless_writer
from kafka import KafkaProducer

from ktrace.cli import cli
from transports.kafka.sink import KafkaSink
from transports.kafka.source import KafkaSource
from schemas import repository, topics
from schemas.errors import KtraceError
from transports.kafka.framing import CONFLUENT_MAGIC, RegistryFraming, registered_schema
from transports.kafka.settings import KafkaSettings
from transports.kafka.registry import RegistryClient, RegistrySettings
from tests import samples
from tests.registry_consumer import consume_all
from tests.recorder_k8s import Recorder, Watcher, apply_deployment, wait_ready_pods

pytestmark = [pytest.mark.registry, pytest.mark.kafka, pytest.mark.timeout(180)]


def settings(bootstrap: str, registry_url: str | None, strategy: str = "topic") -> KafkaSettings:
    registry = (RegistrySettings(url=registry_url, subject_strategy=strategy, timeout_s=5)
                if registry_url else None)
    return KafkaSettings(bootstrap=bootstrap, schema_registry=registry)


def write(kafka: KafkaSettings, topic: str, records: list[dict]) -> None:
    sink = KafkaSink(kafka, partitions=3)
    for record in records:
        sink.send(topic, record)
    sink.close()


def read(kafka: KafkaSettings, topic: str) -> list:
    source = KafkaSource(kafka)
    try:
        return list(source.read([topic]))
    finally:
        source.close()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/apis/ccompat/v7"


def replay(bootstrap: str, prefix: str, db: str, registry_url: str | None):
    args = ["replay", "--kafka", bootstrap, "--topic-prefix", prefix, "--db", db]
    if registry_url:
        args += ["--schema-registry", registry_url]
    return CliRunner().invoke(cli, args)


def without_field(schema_json: str, name: str) -> str:
    schema = json.loads(schema_json)
    schema["fields"] = [f for f in schema["fields"] if f["name"] != name]
    return json.dumps(schema)


@pytest.mark.parametrize("strategy", ["topic", "topic-record"])
def test_a_third_party_avro_consumer_reads_every_record_the_sink_writes(
        kafka_bootstrap, registry_url, unique_topic_prefix, strategy):
    kafka = settings(kafka_bootstrap, registry_url, strategy)
    topic = topics.topic_for(unique_topic_prefix, "pods")
    written = samples.interleaved(500, keys=13)
    write(kafka, topic, written)

    consumed = consume_all(kafka_bootstrap, registry_url, [topic], strategy=strategy)
    ours = {(d.partition, d.offset): d.record for d in read(kafka, topic)}
    assert len(consumed) == len(ours) == 500
    for c in consumed:
        record = ours[(c.partition, c.offset)]
        for field in ("session", "seq", "type", "uid", "resourceVersion", "receivedAt", "kind"):
            assert c.value[field] == record[field]
        assert c.value["object"] == record["object"]
        assert c.key == record["uid"]
        assert c.headers["ktrace.type"] == record["type"].encode()
        assert c.headers["ktrace.seq"] == str(record["seq"]).encode()
        assert "ktrace.schema" not in c.headers  # the id in the value names the schema
    subject = f"{topic}-value" if strategy == "topic" else f"{topic}-io.ktrace.Record"
    client = RegistryClient(RegistrySettings(url=registry_url))
    assert client.compatibility(subject) == "BACKWARD"


def test_v1_records_decode_with_the_v2_reader_under_backward(kafka_bootstrap, registry_url,
                                                             unique_topic_prefix):
    """A producer that knows only v1 registers it and writes; ktrace (v2) registers v2 on the
    same subject under BACKWARD; a consumer reading with v2 decodes both."""
    v1, v2 = repository.all_versions()[0], repository.current()
    topic = topics.topic_for(unique_topic_prefix, "pods")
    subject = f"{topic}-value"
    third_party = SchemaRegistryClient({"url": registry_url, "timeout": 10})
    v1_id = third_party.register_schema(subject, Schema(registered_schema(v1.schema), "AVRO"))
    old = samples.interleaved(100, keys=5)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    for record in old:
        body = io.BytesIO()
        schemaless_writer(body, v1.schema, record)
        producer.send(topic, key=record["uid"].encode(),
                      value=CONFLUENT_MAGIC + v1_id.to_bytes(4, "big") + body.getvalue())
    producer.flush()
    producer.close()
    new = [{**r, "seq": r["seq"] + 100, "session": "s-2"} for r in samples.interleaved(100, keys=5)]
    write(settings(kafka_bootstrap, registry_url), topic, new)

    versions = third_party.get_versions(subject)
    assert len(versions) == 2 and third_party.get_compatibility(subject) == "BACKWARD"
    consumed = consume_all(kafka_bootstrap, registry_url, [topic],
                           reader_schema=registered_schema(v2.schema))
    sources = Counter(c.value["timeSource"] for c in consumed)
    assert sources == {"received": 200}  # v1 records get v2's default
    assert sorted(c.value["seq"] for c in consumed) == list(range(200))
    ours = read(settings(kafka_bootstrap, registry_url), topic)
    assert [d.error for d in ours if d.error] == []
    assert sorted(d.record["seq"] for d in ours) == list(range(200))


def test_an_incompatible_schema_is_refused_with_one_line_naming_the_field(registry_url,
                                                                          unique_topic_prefix):
    """An earlier schema without ``seq``: ktrace's reader could not read its data (seq has no
    default), so BACKWARD refuses ktrace's schema."""
    topic = topics.topic_for(unique_topic_prefix, "pods")
    client = RegistryClient(RegistrySettings(url=registry_url))
    client.set_compatibility(f"{topic}-value", "BACKWARD")
    client.register(f"{topic}-value", without_field(registered_schema(repository.current().schema), "seq"))
    with pytest.raises(KtraceError) as refused:
        RegistryFraming(client).register([topic])
    message = str(refused.value)
    assert "\n" not in message and f"subject {topic}-value" in message
    assert "incompatible under BACKWARD" in message and "field seq" in message


def test_mixed_framings_in_one_topic_replay_completely(kafka_bootstrap, registry_url,
                                                       unique_topic_prefix, tmp_path):
    """A topic migrated to the registry mid-way: header-framed records, then Confluent ones."""
    topic = topics.topic_for(unique_topic_prefix, "pods")
    records = samples.interleaved(600, keys=9)
    write(settings(kafka_bootstrap, None), topic, records[:300])
    write(settings(kafka_bootstrap, registry_url), topic, records[300:])
    db = str(tmp_path / "r.duckdb")
    result = replay(kafka_bootstrap, unique_topic_prefix, db, registry_url)
    assert result.exit_code == 0, result.output
    assert "loaded 600 of 600 records (0 duplicates, 0 filtered out, 0 problems)" in result.output
    with duckdb.connect(db, read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT seq) FROM raw_events").fetchone()[0] == 600


def test_registry_down_during_replay_is_one_error_and_a_retry_loads_the_rest_once(
        kafka_bootstrap, registry_url, unique_topic_prefix, tmp_path):
    topic = topics.topic_for(unique_topic_prefix, "pods")
    records = samples.interleaved(900, keys=9)
    write(settings(kafka_bootstrap, None), topic, records[:300])
    write(settings(kafka_bootstrap, registry_url), topic, records[300:])
    db = str(tmp_path / "r.duckdb")

    down = replay(kafka_bootstrap, unique_topic_prefix, db, closed_port_url())
    assert down.exit_code == 1
    error_lines = [line for line in down.output.splitlines() if line.startswith("Error:")]
    assert len(error_lines) == 1, down.output
    assert f"first {topic}/" in error_lines[0] and "unavailable" in error_lines[0]
    assert "loaded 300 of " in down.output  # every header-framed record before them

    retry = replay(kafka_bootstrap, unique_topic_prefix, db, registry_url)
    assert retry.exit_code == 0, retry.output
    assert "loaded 600 of 600 records (0 duplicates" in retry.output
    with duckdb.connect(db, read_only=True) as con:
        total, distinct = con.execute(
            "SELECT count(*), count(DISTINCT (session, seq)) FROM raw_events").fetchone()
    assert total == distinct == 900


def test_an_unknown_schema_id_is_reported_by_position_and_later_records_decode(
        kafka_bootstrap, registry_url, unique_topic_prefix):
    kafka = settings(kafka_bootstrap, registry_url)
    topic = topics.topic_for(unique_topic_prefix, "pods")
    records = samples.interleaved(10, keys=1)
    write(kafka, topic, records[:5])
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send(topic, key=b"uid-00000", value=CONFLUENT_MAGIC + (2**31 - 1).to_bytes(4, "big") + b"x")
    producer.flush()
    producer.close()
    write(kafka, topic, records[5:])
    read_back = read(kafka, topic)
    assert [d.error is not None for d in read_back] == [False] * 5 + [True] + [False] * 5
    assert f"unknown schema id {2**31 - 1}" in str(read_back[5].error)
    assert [d.record["seq"] for d in read_back if d.record] == list(range(10))


# --- the recorder against the real control plane -------------------------------------------


@pytest.mark.k8s
def test_recorded_topics_read_the_same_by_a_third_party_consumer_and_by_replay(
        k8s_cluster, k8s_namespace, kafka_bootstrap, registry_url, unique_topic_prefix, tmp_path):
    recorder = Recorder(k8s_cluster, kafka_bootstrap, unique_topic_prefix, k8s_namespace,
                        tmp_path / "state")
    recorder.args += ["--schema-registry", registry_url, "--typed-facts"]
    watcher = Watcher(k8s_cluster, k8s_namespace)
    try:
        recorder.start()
        apply_deployment(k8s_cluster, k8s_namespace, "web", 2)
        wait_ready_pods(k8s_cluster, k8s_namespace, "web", 2)
        k8s_cluster.kubectl("delete", "deployment/web", "-n", k8s_namespace)
        wait_ready_pods(k8s_cluster, k8s_namespace, "web", 0)
        watcher.wait_quiet(seconds=3)
        assert recorder.stop() == 0
    finally:
        watcher.close()
        if recorder.proc.poll() is None:
            recorder.kill()
    source = KafkaSource(settings(kafka_bootstrap, registry_url))
    recorded = source.topics(unique_topic_prefix)
    source.close()
    consumed = consume_all(kafka_bootstrap, registry_url, recorded)
    db = str(tmp_path / "r.duckdb")
    result = replay(kafka_bootstrap, unique_topic_prefix, db, registry_url)
    assert result.exit_code == 0 and "0 problems" in result.output, result.output
    with duckdb.connect(db, read_only=True) as con:
        rows = con.execute(
            "SELECT topic, \"partition\", \"offset\", session, seq, type, uid, resource_version, "
            "kind, namespace, name, epoch_us(received_at) FROM raw_events").fetchall()
    loaded = {(r[0], r[1], r[2]): r[3:] for r in rows}
    assert len(consumed) == len(loaded) > 20
    for c in consumed:
        v = c.value
        assert loaded[(c.topic, c.partition, c.offset)] == (
            v["session"], v["seq"], v["type"], v["uid"], v["resourceVersion"], v["kind"],
            v["namespace"], v["name"], v["receivedAt"])
    pods = [c.value for c in consumed if c.value["kind"] == "Pod" and c.value["marker"] is None]
    assert pods and all(p["facts"]["nodeName"] for p in pods if p["facts"]["phase"] == "Running")
    assert all(p["meta"]["labels"].get("app") == "web" for p in pods)  # typed Avro fields
    assert {v.value["type"] for v in consumed} >= {"SESSION_START", "ADDED", "DELETED", "SESSION_END"}


@pytest.mark.k8s
def test_the_recorder_refuses_an_incompatible_subject_with_one_error_line(
        k8s_cluster, k8s_namespace, kafka_bootstrap, registry_url, unique_topic_prefix, tmp_path):
    topic = topics.topic_for(unique_topic_prefix, "pods")
    client = RegistryClient(RegistrySettings(url=registry_url))
    client.register(f"{topic}-value", without_field(registered_schema(repository.current().schema), "seq"))
    recorder = Recorder(k8s_cluster, kafka_bootstrap, unique_topic_prefix, k8s_namespace,
                        tmp_path / "state")
    args = [a for a in recorder.args if a not in ("--log-level", "INFO")]
    result = subprocess.run([sys.executable, "-c", "from ktrace.cli import main; main()", *args,
                             "--schema-registry", registry_url, "--duration", "5"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    seq_at = [f["name"] for f in json.loads(registered_schema(repository.current().schema))["fields"]].index("seq")
    assert result.stderr.strip().splitlines() == [
        f"Error: schema registry refused io.ktrace.Record v{repository.current().version} for "
        f"subject {topic}-value as incompatible under BACKWARD: field seq at /fields/{seq_at}"], result.stderr
