"""The recorder's producer (confluent-kafka) beside what it replaced: the same partition per
key as kafka-python and the Java client, and the TLS/SASL settings librdkafka accepts."""

from __future__ import annotations

import datetime
import statistics
import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaException, Producer
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kafka.partitioner.default import murmur2

from transports.kafka.sink import KafkaSink, connect_admin, producer_config
from transports.kafka.source import KafkaSource
from transports.kafka.settings import KafkaSettings
from tests import samples

PARTITIONS = 6


@pytest.mark.kafka
def test_each_key_lands_on_the_partition_kafka_python_chose(kafka_bootstrap: str,
                                                            unique_topic_prefix: str) -> None:
    """Topics recorded before the switch keep one object's history in one partition."""
    settings = KafkaSettings(bootstrap=kafka_bootstrap)
    topic = f"{unique_topic_prefix}.pods"
    written = samples.interleaved(600, keys=97)
    sink = KafkaSink(settings, partitions=PARTITIONS)
    for record in written:
        sink.send(topic, record)
    sink.close()
    source = KafkaSource(settings)
    try:
        read = list(source.read([topic]))
    finally:
        source.close()
    assert len(read) == len(written)
    placed = {(d.record["uid"], d.partition) for d in read}
    assert len({uid for uid, _ in placed}) == 97
    assert placed == {(uid, (murmur2(uid.encode()) & 0x7FFFFFFF) % PARTITIONS) for uid, _ in placed}


def _tls_files(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate and its key, PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ktrace-test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    cert_file, key_file = directory / "client.pem", directory / "client.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def _secured(cert: Path, key: Path) -> KafkaSettings:
    return KafkaSettings(bootstrap="127.0.0.1:9", security_protocol="SASL_SSL",
                         sasl_mechanism="SCRAM-SHA-512", sasl_username="rec", sasl_password="pw",
                         ssl_cafile=str(cert), ssl_certfile=str(cert), ssl_keyfile=str(key))


def test_tls_and_sasl_settings_are_ones_librdkafka_loads(tmp_path: Path) -> None:
    cert, key = _tls_files(tmp_path)
    settings = _secured(cert, key)
    config = producer_config(settings, max_record_bytes=1_000_000, linger_ms=5)
    assert {k: config[k] for k in ("security.protocol", "sasl.mechanisms", "sasl.username",
                                   "ssl.ca.location", "ssl.certificate.location",
                                   "ssl.key.location")} == {
        "security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512",
        "sasl.username": "rec", "ssl.ca.location": str(cert),
        "ssl.certificate.location": str(cert), "ssl.key.location": str(key)}
    Producer(config).close()  # librdkafka reads the files and checks the key fits the cert
    (tmp_path / "other").mkdir()
    _, other_key = _tls_files(tmp_path / "other")
    refused = {**config, "ssl.key.location": str(other_key)}
    with pytest.raises(KafkaException):
        Producer(refused)


@pytest.mark.kafka
def test_a_sessions_topics_exist_once_the_sink_is_open(kafka_bootstrap: str,
                                                       unique_topic_prefix: str) -> None:
    """Made sure of together when the sink opens (one request), with the partitions asked
    for; a topic not named then is still created at its first record."""
    settings = KafkaSettings(bootstrap=kafka_bootstrap)
    named = [f"{unique_topic_prefix}.pods", f"{unique_topic_prefix}.nodes"]
    later = f"{unique_topic_prefix}.events"
    admin = connect_admin(settings)
    sink = KafkaSink(settings, partitions=PARTITIONS, topics=named)
    try:
        present = admin.list_topics(timeout=10).topics
        assert {name: len(present[name].partitions) for name in named if name in present} == \
            {name: PARTITIONS for name in named}
        assert later not in present
        sink.send(later, samples.interleaved(1, keys=1)[0])
        sink.flush()
        assert later in admin.list_topics(timeout=10).topics
    finally:
        sink.close()


@pytest.mark.kafka
def test_a_fresh_sinks_first_record_is_acknowledged_without_waiting_out_the_id_timer(
        kafka_bootstrap: str, unique_topic_prefix: str) -> None:
    """librdkafka asks again for the idempotent producer's id 500 ms after its first metadata
    answer found no connection up to ask on; the sink's own answer once connected gets the id
    at once, so a session's first acknowledgement is a few round trips, not half a second."""
    settings = KafkaSettings(bootstrap=kafka_bootstrap)
    topic = f"{unique_topic_prefix}.pods"
    waits = []
    for _ in range(5):
        sink = KafkaSink(settings, partitions=PARTITIONS, topics=[topic])
        try:
            started = time.monotonic()
            sink.send(topic, samples.interleaved(1, keys=1)[0])
            sink.flush()
            waits.append(time.monotonic() - started)
        finally:
            sink.close()
    assert statistics.median(waits) < 0.4, waits
