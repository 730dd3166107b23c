"""Property-based tests of the readers on random mutations of real inputs: the local-log
reader, the Kafka record decoder, the kubectl-capture importer and the kubeconfig loader.

Each must raise nothing but ktrace's own errors, lose nothing that lies before the damage,
and (the local log) account for every byte: each lies in a block it delivered or in a range
it reported unreadable. Examples are bounded so each test takes a few seconds.
"""

from __future__ import annotations

import base64
import datetime
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypothesis import HealthCheck, given, settings, strategies as st

from recorder.kube.client import ssl_context
from recorder.kube.config import load_config
from replayer.importer import read_capture
from transports.kafka.source import decode_value
from transports.locallog.source import LocalLogSource
from schemas import codec
from transports.locallog import layout
from schemas.errors import KtraceError, Unreadable
from transports.kafka.framing import FingerprintFraming, ValueDecoder
from schemas.redaction import Redactor
from schemas.varint import read_long
from tests.replayer_data import DATA, recording

FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
SEGMENT = next(Path(recording("scenarios"), "ktrace.pods").glob("*.avro")).read_bytes()
CAPTURE = (DATA / "scenarios" / "kubectl" / "pods.json").read_bytes()


@dataclass(frozen=True)
class Mutation:
    """Replace ``data[at:at + cut]`` with ``insert`` (a flip, a deletion, an insertion, a cut)."""

    at: int
    cut: int
    insert: bytes

    def apply(self, data: bytes) -> bytes:
        return data[: self.at] + self.insert + data[self.at + self.cut:]


@contextmanager
def _file(name: str, data: bytes) -> Iterator[str]:
    """``data`` as a file called ``name`` in a fresh directory (hypothesis runs many
    examples per test, so no function-scoped tmp_path)."""
    with tempfile.TemporaryDirectory() as root:
        path = Path(root, name)
        path.write_bytes(data)
        yield str(path)


def mutations(size: int) -> st.SearchStrategy[list[Mutation]]:
    one = st.builds(Mutation, at=st.integers(0, size - 1), cut=st.integers(0, 64),
                    insert=st.binary(max_size=32))
    truncation = st.builds(lambda at: Mutation(at, size, b""), st.integers(0, size - 1))
    return st.lists(st.one_of(one, truncation), min_size=1, max_size=3)


def mutate(data: bytes, changes: list[Mutation]) -> tuple[bytes, int]:
    """The mutated bytes and the first position that differs from ``data``."""
    for change in sorted(changes, key=lambda m: -m.at):  # from the end: positions stay valid
        data = change.apply(data)
    return data, min(m.at for m in changes)


# --- the local-log reader --------------------------------------------------------------------

def _records_by_block(data: bytes) -> list[tuple[layout.Block, list[dict]]]:
    header = layout.read_header(data)
    source_blocks = [b for b in layout.scan_blocks(data, header) if isinstance(b, layout.Block)]
    decoded = []
    for block in source_blocks:
        records, pos = [], 0
        for _ in range(block.count):
            record, pos = codec.read_at(block.data, pos, header.fingerprint)
            records.append(record)
        decoded.append((block, records))
    return decoded


ORIGINAL_BLOCKS = _records_by_block(SEGMENT)


def _block_end(data: bytes, position: int) -> int:
    count, cursor = read_long(data, position)
    length, cursor = read_long(data, cursor)
    return cursor + length + layout.SYNC_SIZE


def _read(data: bytes) -> list:
    with _file(layout.segment_name(0), data) as path:
        root = Path(path).parent
        topic = root / "ktrace.pods"
        topic.mkdir()
        Path(path).rename(topic / layout.segment_name(0))
        return list(LocalLogSource(str(root)).read(["ktrace.pods"]))


@FUZZ
@given(mutations(len(SEGMENT)))
def test_local_log_reader_reports_every_unreadable_byte_and_keeps_what_precedes(changes):
    data, first_change = mutate(SEGMENT, changes)
    try:
        read = _read(data)
    except KtraceError:
        return
    records = [d.record for d in read if d.record is not None]
    intact = [r for block, rs in ORIGINAL_BLOCKS if block.end <= first_change for r in rs]
    assert records[: len(intact)] == intact  # nothing before the damage is lost
    assert all(d.record is not None or isinstance(d.error, Unreadable) for d in read)
    _assert_every_byte_accounted_for(data, read)


def _assert_every_byte_accounted_for(data: bytes, read: list) -> None:
    """Delivered blocks and reported ranges tile the segment from its data to its end."""
    damage = [d for d in read if d.record is None]
    if damage and layout.split_position(damage[0].offset)[1] == 0:  # the whole segment
        assert len(read) == 1 and damage[0].error.nbytes == len(data)
        assert damage[0].error.end_offset == layout.make_position(1, 0, 0)
        return
    spans: list[tuple[int, int]] = []
    for d in read:
        start = layout.split_position(d.offset)[1]
        if d.record is None:
            spans.append((start, layout.split_position(d.error.end_offset)[1]))
        elif not spans or spans[-1][0] != start:
            spans.append((start, _block_end(data, start)))
    position = layout.read_header(data).data_start if spans else len(data)
    for start, end in spans:
        assert start == position, (start, position)
        position = end
    assert position == len(data)


# --- the Kafka record decoder ----------------------------------------------------------------

BODY = codec.encode(ORIGINAL_BLOCKS[3][1][0])
_RECORD = ORIGINAL_BLOCKS[3][1][0]
HEADERS = list(FingerprintFraming().headers(_RECORD["type"], _RECORD["session"],
                                            _RECORD["seq"]).items())


@FUZZ
@given(mutations(len(BODY)), st.booleans())
def test_kafka_decoder_turns_any_bytes_into_a_record_or_an_unreadable_range(changes, bad_header):
    value, _ = mutate(BODY, changes)
    headers = [(k, v[::-1]) for k, v in HEADERS] if bad_header else HEADERS
    delivery = decode_value("ktrace.pods", 0, 41, value, headers, ValueDecoder(None))
    if delivery.record is None:
        assert isinstance(delivery.error, Unreadable)
        assert (delivery.error.nbytes, delivery.error.end_offset) == (len(value), 42)
    else:
        assert delivery.record["kind"] == "Pod"


# --- the kubectl-capture importer ------------------------------------------------------------

@FUZZ
@given(mutations(len(CAPTURE)))
def test_capture_importer_keeps_every_item_before_the_damage(changes):
    text, first_change = mutate(CAPTURE, changes)
    with _file("pods.json", text) as path:
        try:
            read = list(read_capture(path, cluster="c", redactor=Redactor()))
        except KtraceError:
            return
    whole_lines = CAPTURE[:first_change].count(b"\n")
    original = [orjson.loads(line)["object"]["metadata"]["resourceVersion"]
                for line in CAPTURE.splitlines()[:whole_lines]]
    loaded = [d.record["resourceVersion"] for d in read[:whole_lines]]
    assert loaded == original
    assert all(d.record is not None or isinstance(d.error, KtraceError) for d in read)


# --- the kubeconfig loader ------------------------------------------------------------------

def _pem_pair() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fuzz")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


CERT, KEY = _pem_pair()
KUBECONFIG = yaml.safe_dump({
    "apiVersion": "v1", "kind": "Config", "current-context": "a",
    "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443",
                                          "certificate-authority-data": base64.b64encode(CERT).decode()}}],
    "contexts": [{"name": "a", "context": {"cluster": "c", "user": "u"}}],
    "users": [{"name": "u", "user": {"client-certificate-data": base64.b64encode(CERT).decode(),
                                     "client-key-data": base64.b64encode(KEY).decode()}}],
}).encode()


@FUZZ
@given(mutations(len(KUBECONFIG)))
def test_kubeconfig_loader_raises_only_its_own_errors(changes):
    _load_kubeconfig(mutate(KUBECONFIG, changes)[0])


def _load_kubeconfig(text: bytes) -> None:
    """Load ``text`` as a kubeconfig and make its TLS context: only ktrace's errors may
    escape (exec plugins are never run: the commands would be fuzzed)."""
    with _file("config", text) as path:
        try:
            config = load_config(path)
            try:
                ssl_context(config)
            finally:
                config.cleanup()
        except KtraceError:
            pass


def test_the_unmutated_inputs_read_cleanly():
    assert not [d for d in _read(SEGMENT) if d.error]
    with _file("config", KUBECONFIG) as path:
        config = load_config(path)
        assert ssl_context(config) is not None
        config.cleanup()
    assert os.path.getsize(DATA / "scenarios" / "kubectl" / "pods.json") == len(CAPTURE)


def _paths(node: object, prefix: tuple = ()) -> Iterator[tuple]:
    """Every path into a parsed YAML document (keys and list indices)."""
    yield prefix
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _paths(child, (*prefix, key))


KUBECONFIG_DOC = yaml.safe_load(KUBECONFIG)
KUBECONFIG_PATHS = [p for p in _paths(KUBECONFIG_DOC) if p]
ANY_VALUE = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                         lambda inner: st.lists(inner, max_size=3)
                         | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(KUBECONFIG_PATHS), ANY_VALUE), min_size=1, max_size=3))
def test_kubeconfig_loader_takes_any_value_in_any_field(replacements):
    doc = orjson.loads(orjson.dumps(KUBECONFIG_DOC))
    for path, value in replacements:
        node = doc
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier replacement removed this path
    _load_kubeconfig(yaml.safe_dump(doc).encode())
