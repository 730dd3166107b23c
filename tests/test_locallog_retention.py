"""The local log's retention (whole segments, reported as an unseen stretch before the
oldest kept record) and a full disk (a clear error, never a corrupt segment)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from transports.locallog.sink import LocalLogSink
from replayer import db
from replayer.replay import replay
from transports.locallog.source import LocalLogSource
from transports.locallog import layout
from schemas.errors import Retained
from tests import samples
from tests.replayer_data import rows


def _write(directory: Path, count: int, **retention) -> None:
    sink = LocalLogSink(str(directory), max_segment_bytes=4 * 1024, block_records=20, **retention)
    for record in samples.interleaved(count, keys=3):
        sink.send("t.pods", record)
    sink.close()


def test_retention_removes_whole_oldest_segments_and_reports_an_unseen_stretch(tmp_path):
    log = tmp_path / "log"
    _write(log, 2_000, retention_bytes=20 * 1024)
    kept = layout.list_segments(str(log / "t.pods"))
    total = sum(os.path.getsize(p) for _, p in kept)
    assert kept[0][0] > 0 and total <= 20 * 1024 + 4 * 1024 + 2 * 1024  # one segment of slack
    read = list(LocalLogSource(str(log)).read(["t.pods"]))
    (first, *rest) = read
    assert isinstance(first.error, Retained) and first.error.cause.startswith("retention:")
    seqs = [d.record["seq"] for d in rest]
    assert seqs == list(range(seqs[0], 2_000)) and seqs[0] > 0  # whole segments, in order
    con = db.open_db(str(tmp_path / "r.duckdb"))
    summary = replay(LocalLogSource(str(log)), con, source_name="log", prefix="t")
    assert summary.stats.problems["retention"] == 1 and summary.stats.unreadable_bytes == 0
    ((kind, end_at, oldest),) = rows(con, "SELECT g.type, g.end_at, (SELECT min(received_at) "
                                          "FROM raw_events) FROM gaps g WHERE category = 'unseen'")
    assert kind == "retention" and end_at == oldest
    con.close()


def test_retention_by_age_keeps_the_segment_being_written(tmp_path):
    log = tmp_path / "log"
    _write(log, 600)
    for _, path in layout.list_segments(str(log / "t.pods")):
        os.utime(path, (0, 0))  # written long ago
    _write(log, 600, retention_age_s=3600)
    kept = layout.list_segments(str(log / "t.pods"))
    assert kept[0][0] > 0 and all(os.path.getmtime(p) > 0 for _, p in kept)


FULL_DISK = textwrap.dedent("""
    import resource, signal, sys
    from transports.locallog.sink import LocalLogSink
    from schemas.errors import TransportError
    from tests import samples
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # let writes fail with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (30_000, 30_000))  # the "disk" holds 30 kB
    sink = LocalLogSink(sys.argv[1], block_records=50)
    try:
        for record in samples.interleaved(5_000, keys=3):
            sink.send("t.pods", record)
    except TransportError as exc:
        print(exc)
        sys.exit(1)
""")


def test_a_full_disk_stops_with_a_clear_error_and_leaves_a_readable_segment(tmp_path):
    log = tmp_path / "log"
    result = subprocess.run([sys.executable, "-c", FULL_DISK, str(log)], capture_output=True,
                            text=True, cwd=Path(__file__).parent.parent, timeout=120)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("cannot write the local log ") and "the disk is full" in result.stdout
    read = list(LocalLogSource(str(log)).read(["t.pods"]))
    assert read and all(d.error is None for d in read)  # every whole block, no torn tail
    assert [d.record["seq"] for d in read] == list(range(len(read)))
