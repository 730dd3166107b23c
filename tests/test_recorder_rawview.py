"""recorder/rawview.py reads msgspec's private layout (where a Raw's bytes lie): it must apply
to the installed msgspec, which must be one pyproject.toml allows; where it does not, the
writer still records the same, redacted, and says why it is slow."""

from __future__ import annotations

import logging
from importlib import metadata
from pathlib import Path

import msgspec
import pytest
from packaging.requirements import Requirement

from recorder import rawview
from recorder.splice import SpanRedactor
from recorder.writer import Writer
from schemas.redaction import REDACTED, Redactor
from tests.recorder_data import TARGETS, events, read_back
from transports.locallog.sink import LocalLogSink


def test_the_installed_msgspec_lays_out_raw_as_rawview_reads_it() -> None:
    assert rawview.USABLE, (
        f"msgspec {msgspec.__version__} no longer keeps a Raw's pointer where recorder/rawview.py "
        "reads it: the recorder redacts by full parses (same records, ~2.5x the CPU). Find the "
        "new layout and re-measure, or pin msgspec below this version in pyproject.toml")
    body = b'{"metadata":{"name":"a\\u0026b"},"spec":{"env":[{"value":"x"}]}}'
    tree = msgspec.json.decode(body, type=dict[str, msgspec.Raw])
    for key in ("metadata", "spec"):
        assert rawview.address(tree[key]) - rawview.bytes_address(body) == body.index(bytes(tree[key]))


def test_the_installed_msgspec_is_one_pyproject_allows() -> None:
    [pin] = [r for r in map(Requirement, metadata.requires("ktrace") or ()) if r.name == "msgspec"]
    assert pin.specifier.contains(msgspec.__version__), (msgspec.__version__, str(pin.specifier))
    assert pin.specifier and any(s.operator == "<" for s in pin.specifier)  # pinned, not open


def test_without_the_layout_the_writer_records_the_same_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def recorded(name: str) -> list[dict]:
        writer = Writer(LocalLogSink(str(tmp_path / name)), cluster="c", session="s",
                        topic_prefix="t", redactor=Redactor())
        key = writer.add_watch(TARGETS["pods"], None).target.key
        for item in events("pods"):
            writer.handle(key, item)
        writer.sink.close()
        return [(r["type"], r["uid"], r["attribution"], r["object"])
                for r in read_back(tmp_path / name)["t.pods"]]

    spliced = recorded("spliced")
    assert not caplog.records
    monkeypatch.setattr(SpanRedactor, "usable", False)
    with caplog.at_level(logging.WARNING):
        parsed = recorded("parsed")
    assert parsed == spliced
    assert all(b"hunter2" not in body and REDACTED.encode() in body for *_, body in parsed)
    [warning] = caplog.records
    assert warning.getMessage().startswith(f"msgspec {msgspec.__version__} does not lay out")
