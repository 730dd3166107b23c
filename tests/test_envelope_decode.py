"""The hand-written envelope decoder (schemas/envelope.py ``decode_at``) against fastavro:
the same dict for every record it decodes, and fastavro's own answer (a record or an error)
for everything it declines — typed parts, markers, damaged bytes."""

from __future__ import annotations

import glob
import io

from fastavro import schemaless_reader
from hypothesis import given, settings, strategies as st

from replayer.envelope import EnvelopeBatch
from schemas import codec, envelope, repository
from transports.locallog import layout
from tests.replayer_data import DATA
from transports.source import Delivery, DeliveryRun

FUZZ = settings(max_examples=200, deadline=None, derandomize=True)


def _fastavro(data: bytes, pos: int) -> tuple[dict, int]:
    stream = io.BytesIO(data)
    stream.seek(pos)
    record = schemaless_reader(stream, repository.current().schema, None, return_record_name=True,
                               return_record_name_override=True)
    return record, stream.tell()


def _recorded_records() -> list[dict]:
    """Every record of the recordings under tests/data/replayer, as fastavro reads it."""
    records = []
    for path in sorted(glob.glob(str(DATA / "*" / "recording" / "*" / "*.avro"))):
        with open(path, "rb") as fh:
            data = fh.read()
        header = layout.read_header(data)
        assert header.fingerprint == repository.current().fingerprint
        for block in layout.scan_blocks(data, header):
            pos = 0
            for _ in range(block.count):
                record, pos = _fastavro(block.data, pos)
                records.append(record)
    return records


RECORDED = _recorded_records()
#: What the recorder writes by default: the envelope, no typed parts (markers stay whole).
ENVELOPES = [r if r["marker"] else {**r, "meta": None, "facts": None} for r in RECORDED]
BLOCK = b"".join(codec.encode(r) for r in ENVELOPES)


def test_every_recorded_record_decodes_as_fastavro_decodes_it():
    by_hand = declined = pos = 0
    for recorded in RECORDED:  # the recordings' own (typed) records are declined
        body = codec.encode(recorded)
        assert envelope.decode_at(body, 0) is None
        assert codec.decode(body, repository.current().fingerprint) == recorded
    while pos < len(BLOCK):  # bodies one after another, as in a block
        expected, end = _fastavro(BLOCK, pos)
        fast = envelope.decode_at(BLOCK, pos)
        if fast is None:
            declined += 1
            assert expected["marker"]
        else:
            by_hand += 1
            assert fast == (expected, end)
            assert list(fast[0]) == list(expected)  # the same key order too
        assert codec.read_at(BLOCK, pos, repository.current().fingerprint) == (expected, end)
        pos = end
    assert by_hand == len(ENVELOPES) - declined and declined > 0 and by_hand > 1000


def test_edge_values_decode_as_fastavro_decodes_them():
    base = next(r for r in ENVELOPES if not r["marker"])
    for record in [base, {**base, "seq": 2**40, "receivedAt": -5, "namespace": None,
                          "name": "ü" * 70, "truncated": True, "inferred": True,
                          "type": "INFERRED_DELETED", "resourceVersionNumber": None,
                          "component": None, "timeSource": "derived", "object": None},
                   {**base, "object": b"x" * 300, "objectSize": 300}]:
        body = envelope.encode_record(record)
        assert envelope.decode_at(body, 0) == (record, len(body))
        assert codec.decode(body, repository.current().fingerprint) == record


@FUZZ
@given(st.data())
def test_damaged_bodies_decode_as_fastavro_decodes_them_or_are_declined(draw):
    record = ENVELOPES[draw.draw(st.integers(0, len(ENVELOPES) - 1))]
    body = bytearray(codec.encode(record))
    for _ in range(draw.draw(st.integers(1, 3))):
        body[draw.draw(st.integers(0, len(body) - 1))] = draw.draw(st.integers(0, 255))
    body = bytes(body[:draw.draw(st.integers(1, len(body)))])
    fast = envelope.decode_at(body, 0)
    if fast is not None:
        assert fast == _fastavro(body, 0)


def test_runs_decode_as_fastavro_decodes_them_and_stop_before_what_it_reads():
    pos = by_rows = declined = 0
    while pos < len(BLOCK):
        envelopes, end = envelope.decode_run(BLOCK, pos, 500)
        for decoded in envelopes:
            expected, pos = _fastavro(BLOCK, pos)
            record = decoded.record(BLOCK)
            assert record == expected and list(record) == list(expected)
            by_rows += 1
        assert end == pos
        if len(envelopes) < 500 and pos < len(BLOCK):  # stopped before a record fastavro reads
            assert envelope.decode_at(BLOCK, pos) is None
            pos = _fastavro(BLOCK, pos)[1]
            declined += 1
    assert by_rows == len(ENVELOPES) - declined and declined > 0


def test_a_batch_holds_each_object_as_its_record_has_it():
    """The object column views the bytes rows were decoded from, and Records' own bytes;
    short objects are held in the view itself (Arrow's 12-byte inline values)."""
    base = next(r for r in ENVELOPES if not r["marker"] and r["object"])
    records = [base, {**base, "object": None}, {**base, "object": b"{}", "objectSize": 2},
               {**base, "object": b"x" * 12}, {**base, "object": b"y" * 13}]
    data = b"".join(envelope.encode_record(r) for r in records)
    envelopes, _ = envelope.decode_run(data, 0, len(records))
    batch = EnvelopeBatch(1)
    batch.add_run(1, "t.pods", 0, range(len(envelopes)), envelopes, data)
    for i, record in enumerate(records + [RECORDED[0]]):
        run = DeliveryRun.of(Delivery("t.pods", 0, 10 + i, record))
        batch.add_run(10 + i, run.topic, 0, run.offsets, run.envelopes, run.data, run.markers)
    objects = batch.table().column("object").to_pylist()
    assert objects == [r["object"] and r["object"].decode()
                       for r in records + records + [RECORDED[0]]]


def test_the_envelope_declaration_follows_the_record_schema_or_fails_at_import(monkeypatch):
    """``Envelope`` is checked against the Record schema when schemas.envelope loads: a field
    the declaration does not follow (order, a new field, nullability) stops the import."""
    import copy
    from dataclasses import replace

    import pytest

    current = repository.current()
    assert [name for name, _ in envelope._checked_schema()[0]] == list(envelope.NAMES)

    def schema_with(change) -> None:
        schema = copy.deepcopy(current.schema)
        change(schema["fields"])
        monkeypatch.setattr(repository, "current", lambda: replace(current, schema=schema))

    def swapped(fields):
        fields[9], fields[10] = fields[10], fields[9]

    def nullable_seq(fields):
        fields[2]["type"] = ["null", "long"]

    for change, said in ((swapped, "the Record schema has"),
                         (lambda fields: fields.insert(20, {"name": "extra", "type": "long"}),
                          "'extra'"),
                         (nullable_seq, "Envelope.seq is not declared optional")):
        schema_with(change)
        with pytest.raises(ImportError, match=said):
            envelope._checked_schema()
