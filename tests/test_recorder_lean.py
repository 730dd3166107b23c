"""The lean path (msgspec decode, the object kept as the server's bytes, redaction in place)
against the full parse, on every raw watch stream the tests and the bench hold, the same
streams in the API server's spelling of ``&``, ``<``, ``>`` (``GoSpelled``), and on adversarial
objects: same records, same attribution, same bytes after redaction."""

from __future__ import annotations

import copy
import gzip
from pathlib import Path
from typing import NamedTuple

import orjson
import pytest
from hypothesis import given, settings, strategies as st

from bench.workload import TARGETS
from recorder import informer as inf
from recorder import lean
from recorder.attribution import observed
from schemas.redaction import LAST_APPLIED, REDACTED, Redactor
from transports.sink import Outgoing
from recorder.splice import Memo, SpanRedactor
from recorder.writer import Writer
from schemas import codec, topics
from tests.recorder_data import GO_TEXT, go_spelled, with_go_text



class GoSpelled(NamedTuple):
    """A recorded stream with ``GO_TEXT`` in every object, in the API server's spelling."""
    path: Path


ROOT = Path(__file__).resolve().parent.parent
RECORDED = sorted((ROOT / "tests" / "data" / "recorder").rglob("*.watch.jsonl")) + [
    ROOT / "bench" / "data" / "shop.watch.jsonl.gz"]
STREAMS = RECORDED + [GoSpelled(p) for p in RECORDED]
LISTS = sorted((ROOT / "tests" / "data" / "recorder").rglob("*.list.json")) + sorted(
    (ROOT / "tests" / "data" / "recorder").rglob("*.pages.json"))
#: --redact paths of every form: a key, [N], [-1], [*] over a list and over a mapping, a whole
#: subtree, one above a default path, and an index into a value that is not a list.
EXTRA_PATHS = ["spec.containers[0].args", "spec.containers[-1].image", "metadata.labels.*",
               "status.conditions[*].message", "spec.template", "metadata.annotations",
               "spec.nodeName[0]", "endpoints[*].addresses"]
#: A key below a string: the typed decode cannot locate it, the full parse is used.
MISMATCHED_PATHS = ["spec.containers[*].env[*].name.deeper"]


def stream_lines(stream: Path | GoSpelled) -> list[bytes]:
    path = stream.path if isinstance(stream, GoSpelled) else stream
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    lines = [line for line in data.split(b"\n") if line.strip()]
    if isinstance(stream, GoSpelled):
        return [go_spelled({**doc, "object": with_go_text(doc["object"])})
                for doc in map(orjson.loads, lines)]
    return lines


def stream_id(stream: Path | GoSpelled) -> str:
    path = stream.path if isinstance(stream, GoSpelled) else stream
    return f"{path.parent.name}/{path.name}" + ("-go" if isinstance(stream, GoSpelled) else "")


def object_lines(stream: Path | GoSpelled) -> list[bytes]:
    return [line for line in stream_lines(stream)
            if orjson.loads(line)["type"] in ("ADDED", "MODIFIED", "DELETED")]


def listed_objects() -> list[dict]:
    found: list[dict] = []
    for path in LISTS:
        doc = orjson.loads(path.read_bytes())
        for page in doc if isinstance(doc, list) else [doc]:
            found += page.get("items") or []
    return found


def all_objects() -> list[bytes]:
    """Every object the recordings hold, as the server's bytes (watch) or re-encoded (lists),
    and each of them again in the server's spelling with ``GO_TEXT``."""
    bodies = [lean.split_line(line)[1] for path in STREAMS for line in object_lines(path)]
    return bodies + [spelled(obj) for obj in listed_objects()
                     for spelled in (orjson.dumps, lambda o: go_spelled(with_go_text(o)))]


class Captured:
    """A sink that keeps what it is sent (the records are compared, not their transport)."""

    max_record_bytes = 1_000_000

    def __init__(self) -> None:
        self.records: list[tuple[str, dict]] = []

    def send(self, topic: str, record: dict) -> None:
        self.records.append((topic, record))

    def send_encoded(self, topic: str, outgoing: Outgoing) -> None:
        """Kept as its Record, which must encode to the same body, key and headers."""
        record = outgoing.record()
        assert (outgoing.body, outgoing.key, outgoing.type, outgoing.session, outgoing.seq) == (
            codec.encode(record), topics.key_for(record), record["type"], record["session"],
            record["seq"])
        self.send(topic, record)

    def flush(self, timeout: float | None = None) -> None:
        pass

    def close(self) -> None:
        pass


def record_stream(lines: list[bytes], parse, redactor: Redactor, *, typed_facts: bool = False) -> Captured:
    sink = Captured()
    writer = Writer(sink, cluster="c", session="s", topic_prefix="t", redactor=redactor,
                    typed_facts=typed_facts)
    keys = {kind: writer.add_watch(target, None).target.key for kind, target in TARGETS.items()}
    for line in lines:
        item = parse(line)
        writer.handle(keys[lean.identity(item.obj)[1]], item)
    return sink


def full_parse(line: bytes) -> inf.WatchEvent:
    item = inf._parse_in_full(line, "test", 1)
    assert isinstance(item, inf.WatchEvent)
    return item


def lean_parse(line: bytes) -> inf.WatchEvent:
    item = inf.parse_event(line, "test")
    assert isinstance(item, inf.WatchEvent) and isinstance(item.obj, lean.RawObject), \
        "every recorded shape is modelled"
    return inf.WatchEvent(item.type, item.obj, 1)


def test_the_recordings_are_what_the_parity_is_proven_on() -> None:
    assert len(STREAMS) >= 8 and sum(len(object_lines(p)) for p in STREAMS) > 500
    kinds = {lean.identity(lean_parse(line).obj)[1] for p in STREAMS for line in object_lines(p)}
    assert {"Pod", "ReplicaSet", "Deployment", "EndpointSlice", "Event", "Lease", "Node",
            "Namespace"} <= kinds
    # The server's bytes are its spelling of the parsed object, so "same bytes" is a real
    # test; half of them hold Go's escapes, which orjson alone would spell otherwise.
    bodies = all_objects()
    assert all(go_spelled(orjson.loads(b)) == b for b in bodies)
    go = [b for b in bodies if orjson.dumps(orjson.loads(b)) != b]
    assert len(go) * 2 == len(bodies)
    assert all(b"\\u0026" in b and b"\\u003c" in b and "ü".encode() in b for b in go)


@pytest.mark.parametrize("path", STREAMS, ids=stream_id)
@pytest.mark.parametrize("extra", [(), tuple(EXTRA_PATHS), tuple(EXTRA_PATHS + MISMATCHED_PATHS)],
                         ids=["default", "extra-paths", "unlocatable-path"])
def test_lean_and_full_paths_write_the_same_records(path: Path, extra: tuple[str, ...]) -> None:
    lines = object_lines(path)
    full = record_stream(lines, full_parse, Redactor(list(extra))).records
    lean_records = record_stream(lines, lean_parse, Redactor(list(extra))).records
    assert len(full) == len(lean_records) == len(lines)
    assert all(r["meta"] is None and r["facts"] is None for _, r in lean_records)  # by default
    for (topic_a, a), (topic_b, b) in zip(full, lean_records):
        assert topic_a == topic_b
        assert a == b  # envelope, attribution, redacted bytes: all of it
        assert codec.encode(a) == codec.encode(b)


@pytest.mark.parametrize("path", STREAMS, ids=stream_id)
def test_typed_facts_are_the_same_on_both_paths(path: Path) -> None:
    lines = object_lines(path)[:60]
    full = record_stream(lines, full_parse, Redactor(), typed_facts=True).records
    lean_records = record_stream(lines, lean_parse, Redactor(), typed_facts=True).records
    assert [r for _, r in full] == [r for _, r in lean_records]
    assert all(r["meta"] is not None for _, r in lean_records)


def test_attribution_inputs_are_the_same_on_both_paths() -> None:
    """Digests included: a relist's LISTED objects (full parse) are compared with the watch
    events after them (lean), so the two must digest managedFields and status alike."""
    for body in all_objects():
        assert lean.read_object(body).seen == observed(orjson.loads(body))


def test_in_place_redaction_equals_the_full_parse_on_every_recorded_object() -> None:
    bodies = all_objects()
    for paths in ([], EXTRA_PATHS):
        splicer, redactor = SpanRedactor(Redactor(paths).paths), Redactor(paths)
        for body in bodies:
            obj = orjson.loads(body)
            redactor.apply(obj)
            assert splicer.apply(body) == go_spelled(obj)
    assert sum(splicer.apply(b) != b for b in bodies) > len(bodies) // 2  # it did redact
    unlocatable = SpanRedactor(Redactor(MISMATCHED_PATHS).paths)
    assert any(unlocatable.apply(b) is None for b in bodies)  # the writer parses those in full


def pod(env: list, annotations: dict | None = None, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "n", "uid": "u", "resourceVersion": "1",
                         "annotations": annotations or {}},
            "spec": {"containers": [{"name": "app", "env": env, "args": ["--x"]}], **spec}}


ADVERSARIAL = {
    "escaped quotes": pod([{"name": "A", "value": 'say "hi" \\ bye'}]),
    "quote then value key": pod([{"name": 'x","value":"', "value": '","value":"leak'}]),
    "unicode": pod([{"name": "Ü", "value": "пароль 🔑 \u2028 end"}], {"note": "😀"}),
    "nested JSON in last-applied": pod(
        [{"name": "A", "value": "s"}],
        {LAST_APPLIED: orjson.dumps({"spec": {"containers": [{"env": [{"name": "A", "value": "s"}]}]}}).decode(),
         "other": '{"value":"keep"}'}),
    "already redacted": pod([{"name": "A", "value": REDACTED}, {"name": "B", "value": None}]),
    "empty and missing": pod([{"name": "A", "value": ""}, {"name": "B"}, {"name": "C", "valueFrom": {}}]),
    "env null": pod(None),
    "containers and env as mappings, a null container": pod(
        {"A": {"name": "A", "value": "s"}},
        initContainers=[None, {"name": "i", "env": None}, {"name": "j", "env": [None, {"value": "t"}]}],
        ephemeralContainers={"e": {"env": {"B": {"value": "u"}}}, "f": None}),
    "values at the kept test's edges": pod(  # 4 bytes not null; 16, 17 (not redacted), 18 bytes
        [{"name": "A", "value": "ab"}, {"name": "B", "value": 1234}, {"name": "C", "value": "x" * 14},
         {"name": "D", "value": "ktrace:redactex"}, {"name": "E", "value": "x" * 16}]),
    "values of other types": pod([{"name": "A", "value": 5}, {"name": "B", "value": {"x": [1]}}]),
    "Go's escapes in values and keys": pod(
        [{"name": "A", "value": GO_TEXT}, {"name": "B&<>", "value": "<" * 20}], {f"q&{GO_TEXT}": GO_TEXT}),
    "httpHeader with the same name and value": pod(
        [{"name": "H", "value": "v"}],
        nodeName="n1", initContainers=[{"name": "i", "env": [{"name": "H", "value": "v"}],
                                        "livenessProbe": {"httpGet": {"httpHeaders": [{"name": "H", "value": "v"}]}}}]),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
@pytest.mark.parametrize("paths", [[], EXTRA_PATHS], ids=["default", "extra-paths"])
def test_in_place_redaction_on_adversarial_objects(name: str, paths: list[str]) -> None:
    obj = ADVERSARIAL[name]
    expected = copy.deepcopy(obj)
    Redactor(paths).apply(expected)
    splicer = SpanRedactor(Redactor(paths).paths)
    body = orjson.dumps(obj)
    assert splicer.apply(body) == orjson.dumps(expected)
    # As the API server sends it (Go's escapes): its own spelling kept; as another encoder
    # might (every non-ASCII character escaped): the same content.
    assert splicer.apply(go_spelled(obj)) == go_spelled(expected)
    assert orjson.loads(splicer.apply(body.replace(b"\xc3\x9c", b"\\u00dc"))) == expected


def test_an_already_redacted_value_written_all_in_escapes_stays() -> None:
    """The longest way to write REDACTED (every character a \\u escape) is still seen as
    already redacted and left as it is; a longer escaped value is replaced."""
    spelled = "".join(f"\\u{ord(c):04x}" for c in REDACTED).encode()
    longer = spelled + b"\\u0021"
    body = orjson.dumps(pod([{"name": "A", "value": "@1"}, {"name": "B", "value": "@2"}]))
    body = body.replace(b'"@1"', b'"' + spelled + b'"').replace(b'"@2"', b'"' + longer + b'"')
    expected = orjson.loads(body)
    Redactor().apply(expected)
    out = SpanRedactor(Redactor().paths).apply(body)
    assert orjson.loads(out) == expected
    assert spelled in out and longer not in out


def test_remembered_containers_are_redacted_as_on_first_sight() -> None:
    """The second sight of a containers list takes its redaction from the memo: every
    adversarial object, then the same containers under another object's metadata."""
    splicer = SpanRedactor(Redactor().paths)
    for name, obj in sorted(ADVERSARIAL.items()):
        expected = copy.deepcopy(obj)
        Redactor().apply(expected)
        body = orjson.dumps(obj)
        assert splicer.apply(body) == splicer.apply(body) == orjson.dumps(expected), name
        moved = {**obj, "metadata": {**obj["metadata"], "name": "other", "resourceVersion": "2"}}
        expected = copy.deepcopy(moved)
        Redactor().apply(expected)
        assert splicer.apply(orjson.dumps(moved)) == orjson.dumps(expected), name
    # A list of the wrong shape is never remembered: each sight takes the full parse.
    odd = orjson.dumps(pod([], {"value": "not env"}, containers="oops"))
    assert splicer.apply(odd) is None and splicer.apply(odd) is None


def test_a_root_list_path_is_located_without_the_memo() -> None:
    """Paths from the root's [*] alone (no key above them): the root is decoded on its own."""
    redactor = Redactor()
    redactor.paths = [[("all", None)]]
    obj = {"a": "x" * 30, "b": {"c": 1}, "d": None}
    expected = copy.deepcopy(obj)
    redactor.apply(expected)
    assert SpanRedactor(redactor.paths).apply(orjson.dumps(obj)) == orjson.dumps(expected)


def test_the_memo_keeps_within_its_budget_oldest_first() -> None:
    memo = Memo(budget=100)
    for i in range(10):
        memo.put(b"%02d" % i * 10, b"r" * 10)  # 30 bytes an entry
    assert memo.get(b"09" * 10) == b"r" * 10 and memo.get(b"07" * 10) == b"r" * 10
    assert memo.get(b"06" * 10) is None and memo.get(b"00" * 10) is None


def test_a_redacted_value_written_with_escapes_is_left_as_it_is() -> None:
    body = orjson.dumps(pod([{"name": "A", "value": "x"}])).replace(
        b'"value":"x"', b'"value":"ktrace\\u003aredacted"')
    assert SpanRedactor(Redactor().paths).apply(body) == body


def test_shapes_the_paths_do_not_expect_take_the_full_parse() -> None:
    """env as a string: the typed decode refuses it, the writer parses in full."""
    obj = pod("A=secret", {"q": GO_TEXT},
              initContainers=[{"name": "i", "env": [{"name": "B", "value": GO_TEXT}]}])
    splicer = SpanRedactor(Redactor().paths)
    assert splicer.apply(orjson.dumps(obj)) is None
    line = go_spelled({"type": "ADDED", "object": obj})
    full = record_stream([line], full_parse, Redactor()).records
    leaned = record_stream([line], lean_parse, Redactor()).records
    assert full == leaned


def test_objects_lean_does_not_model_fall_back_to_the_full_parse() -> None:
    obj = pod([{"name": "A", "value": "secret"}])
    obj["metadata"]["finalizers"] = "not-a-list"
    item = inf.parse_event(orjson.dumps({"type": "MODIFIED", "object": obj}), "test")
    assert isinstance(item, inf.WatchEvent) and item.obj == obj  # the parsed dict
    with pytest.raises(inf.MalformedStream):
        inf.parse_event(b'{"type":"ADDED","object":{"a":1}},"x"', "test")
    with pytest.raises(inf.MalformedStream):
        inf.parse_event(b'{"type":"ADDED","object":[1]}', "test")


def test_envelope_encoding_is_fastavros_byte_for_byte() -> None:
    import io

    from fastavro import schemaless_writer

    from schemas import envelope, repository

    lines = [line for path in STREAMS for line in object_lines(path)]
    records = [r for _, r in record_stream(lines, lean_parse, Redactor()).records]
    records += [{**records[0], "seq": 2**40, "receivedAt": -5, "namespace": None, "name": "ü" * 70,
                 "object": None, "truncated": True, "inferred": True, "type": "INFERRED_DELETED",
                 "resourceVersionNumber": None, "component": None, "timeSource": "derived"}]
    for record in records:
        out = io.BytesIO()
        schemaless_writer(out, repository.current().schema, record)
        assert envelope.encode_record(record) == out.getvalue() == codec.encode(record)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(seq=st.integers(0, 2**63 - 1), received=st.integers(-2**63, 2**63 - 1),
       rv=st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)),
       size=st.integers(0, 2**40), text=st.text(max_size=200),
       body=st.one_of(st.none(), st.binary(max_size=20_000)))
def test_envelope_encoding_is_fastavros_for_any_values(seq, received, rv, size, text, body) -> None:
    """Every varint length (the table lookups' edges), strings of any size, and an
    objectSize that is not the body's length (a truncated record)."""
    import io

    from fastavro import schemaless_writer

    from schemas import envelope, repository

    record = {"cluster": text, "session": "s", "seq": seq, "type": "MODIFIED", "inferred": False,
              "apiVersion": "v1", "kind": "Pod", "resource": "pods", "namespace": text or None,
              "name": text, "uid": None, "resourceVersion": text, "resourceVersionNumber": rv,
              "timeSource": "received", "receivedAt": received, "component": text,
              "attribution": text * 2, "object": body, "objectSize": size, "truncated": True,
              "meta": None, "facts": None, "marker": None}
    for fitted in (record, {**record, "objectSize": len(body or b"")}):
        out = io.BytesIO()
        schemaless_writer(out, repository.current().schema, fitted)
        assert envelope.encode_record(fitted) == out.getvalue()


@pytest.mark.parametrize("spelled", [False, True], ids=["recorded", "go"])
def test_events_keep_their_kafka_key_without_typed_facts(spelled: bool) -> None:
    """Events are keyed by the object they are about, read from the JSON when no facts."""
    path = ROOT / "tests" / "data" / "recorder" / "deployment" / "events.watch.jsonl"
    lines = object_lines(GoSpelled(path) if spelled else path)
    typed = record_stream(lines, lean_parse, Redactor(), typed_facts=True).records
    lean_records = record_stream(lines, lean_parse, Redactor()).records
    keys = [topics.key_for(r) for _, r in lean_records]
    assert keys == [topics.key_for(r) for _, r in typed]
    assert all(key != r["uid"].encode() for key, (_, r) in zip(keys, lean_records))


@pytest.mark.parametrize("escape", [b'"\\u0076alue"', b'"value"'])
def test_keys_written_with_escapes_are_still_found(escape: bytes) -> None:
    """A key spelled with escapes is the same key."""
    obj = pod([{"name": "A", "value": "secret"}], {LAST_APPLIED: "{}"})
    body = orjson.dumps(obj).replace(b'"value"', escape).replace(
        b"kubernetes.io/last", b"kubernetes.io\\/last")
    expected = copy.deepcopy(obj)
    Redactor().apply(expected)
    assert orjson.loads(SpanRedactor(Redactor().paths).apply(body)) == expected


def test_lean_records_replay_into_the_same_typed_tables(tmp_path: Path) -> None:
    """The replayer derives its tables from the object JSON: records without meta/facts
    load the same rows as records with them."""
    from transports.locallog.sink import LocalLogSink
    from replayer import db
    from replayer.replay import replay
    from transports.locallog.source import LocalLogSource
    from tests.replayer_data import FACT_TABLES

    lines = [line for path in STREAMS for line in object_lines(path)]
    tables = []
    for typed in (False, True):
        out = tmp_path / f"log-{typed}"
        writer = Writer(LocalLogSink(str(out)), cluster="c", session="s", topic_prefix="ktrace",
                        redactor=Redactor(), typed_facts=typed)
        keys = {kind: writer.add_watch(target, None).target.key for kind, target in TARGETS.items()}
        for line in lines:
            item = lean_parse(line)
            writer.handle(keys[lean.identity(item.obj)[1]], item)
        writer.sink.close()
        con = db.open_db(str(tmp_path / f"r-{typed}.duckdb"))
        replay(LocalLogSource(str(out)), con, source_name="s", prefix="ktrace")
        tables.append({t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in FACT_TABLES
                       if t not in ("raw_events", "load_positions")})  # positions differ: sizes do
        con.close()
    for name in tables[0]:
        assert tables[0][name] == tables[1][name], name
    assert tables[0]["pods"] and tables[0]["containers"] and tables[0]["k8s_events"]
