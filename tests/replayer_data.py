"""Shared data and fixtures of the replayer tests (a pytest plugin: see tests/conftest.py).

The data are recordings of the real control plane, made by tests/data/replayer/capture.py:
``scenarios/`` (rollouts, stuck deletions, lost and deleted nodes, a recorder crash with a
relist) and ``evicted/`` (made by the script's first version: two nodes, Deployments
tolerating an unreachable node for only 2 s, so losing kwok-node-1 evicted pods from under
the Services — capacity dips). tests/data/replayer/capture_pending.py made issue 8's
``pending/``, ``midlife/``, ``crashed/`` and ``edge/``, each with an EXPECTED.md of what an
expert concludes from it.
Each holds ``kubectl/<resource>.json`` (kubectl --watch captures) and ``recording/`` (the
recorder's local log of the same run).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from click.testing import CliRunner

from ktrace.cli import cli
from replayer import db
from replayer.analyses.stuck import stuck
from replayer.replay import import_captures, replay
from schemas.topics import resource_of
from transports.kafka.settings import KafkaSettings
from transports.kafka.sink import KafkaSink
from transports.locallog.sink import LocalLogSink
from transports.locallog.source import LocalLogSource

DATA = Path(__file__).parent / "data" / "replayer"
#: The tables a load fills: two loads that must agree are compared on all of them.
FACT_TABLES = ["raw_events", "owner_refs", "pods", "containers", "conditions", "endpoints",
               "k8s_events", "nodes", "taints", "leases", "workloads", "volumes", "namespaces",
               "markers", "load_positions", "object_versions", "endpoint_membership",
               "pod_transitions", "pod_lifecycle", "session_topics", "sequence_holes"]


def captures(scenario: str) -> list[str]:
    return sorted(glob.glob(str(DATA / scenario / "kubectl" / "*.json")))


def recording(scenario: str) -> str:
    return str(DATA / scenario / "recording")


def load_recording(path: str, directory: str, *, store_objects: bool = False) -> duckdb.DuckDBPyConnection:
    con = db.open_db(path)
    replay(LocalLogSource(directory), con, source_name=directory, prefix="ktrace", store_objects=store_objects)
    return con


def loaded_file(factory: pytest.TempPathFactory, name: str, directory: Path) -> str:
    """A database file holding the recording at `directory` (closed: open it read-only)."""
    path = str(factory.mktemp(name) / f"{name}.duckdb")
    load_recording(path, str(directory)).close()
    return path


def read_only(path: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection for a fixture to yield, closed after."""
    con = db.open_readonly(path)
    yield con
    con.close()


def load_captures(path: str, files: list[str]) -> duckdb.DuckDBPyConnection:
    con = db.open_db(path)
    import_captures(files, con, cluster="imported")
    return con


def recording_fixtures(directory: Path) -> tuple[Callable, Callable]:
    """Two module fixtures over DIRECTORY's recording: ``db_file`` (a database holding it,
    for the CLI) and ``recorded`` (a read-only connection to it, as the analyses open one).
    Assign them by those names: ``db_file, recorded = recording_fixtures(...)``."""
    @pytest.fixture(scope="module", name="db_file")
    def db_file(tmp_path_factory: pytest.TempPathFactory) -> str:
        path = str(tmp_path_factory.mktemp(directory.parent.name) / "recording.duckdb")
        load_recording(path, str(directory)).close()
        return path

    @pytest.fixture(scope="module", name="recorded")
    def recorded(db_file: str) -> Iterator[duckdb.DuckDBPyConnection]:
        con = db.open_readonly(db_file)
        yield con
        con.close()

    return db_file, recorded


def _session_db(factory: pytest.TempPathFactory, name: str, load: Callable[[str], duckdb.DuckDBPyConnection]
                ) -> Iterator[duckdb.DuckDBPyConnection]:
    con = load(os.path.join(factory.mktemp(name), f"{name}.duckdb"))
    yield con
    con.close()


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """The recorder's recording of the scenarios, loaded."""
    yield from _session_db(tmp_path_factory, "recorded",
                           lambda path: load_recording(path, recording("scenarios")))


@pytest.fixture(scope="session")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """The kubectl captures of the same scenarios, imported."""
    yield from _session_db(tmp_path_factory, "imported",
                           lambda path: load_captures(path, captures("scenarios")))


@pytest.fixture(scope="session")
def evicted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """The recorder's recording of the evicted scenario (capacity dips), loaded."""
    yield from _session_db(tmp_path_factory, "evicted",
                           lambda path: load_recording(path, recording("evicted")))


def _recorded_fixture(name: str) -> Callable:
    """A session fixture with one of issue 8's recordings loaded (capture_pending.py)."""
    @pytest.fixture(scope="session", name=name)
    def fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
        yield from _session_db(tmp_path_factory, name,
                               lambda path: load_recording(path, recording(name)))
    return fixture


pending = _recorded_fixture("pending")
midlife = _recorded_fixture("midlife")
crashed = _recorded_fixture("crashed")
edge = _recorded_fixture("edge")


def rows(con: duckdb.DuckDBPyConnection, sql: str, *params: object) -> list[tuple]:
    return con.execute(sql, list(params)).fetchall()


def stuck_by_object(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], dict]:
    """What `ktrace stuck` lists, by (kind, name)."""
    columns, found = stuck(con).rows
    return {(r["kind"], r["name"]): r for r in (dict(zip(columns, row)) for row in found)}


def cli_stdout(*args: str) -> str:
    """What `ktrace ARGS` prints; it must succeed."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def recorded_records(scenario: str = "scenarios") -> list[tuple[str, dict]]:
    source = LocalLogSource(recording(scenario))
    return [(d.topic, d.record) for d in source.read(source.topics("ktrace"))]


def small_blocks_log(directory: Path) -> Path:
    """The scenarios' recording written again by the local-log sink in small blocks and
    segments (many of each; each closed segment with the indexes the sink writes)."""
    sink = LocalLogSink(str(directory), max_segment_bytes=16 * 1024, block_records=8)
    for topic, record in recorded_records():
        sink.send(topic, record)
    sink.close()
    return directory


def send_recorded(settings: KafkaSettings, prefix: str, scenario: str = "scenarios") -> None:
    """The recording of ``scenario`` sent to Kafka under ``prefix``, three partitions a topic."""
    sink = KafkaSink(settings, partitions=3)
    for topic, record in recorded_records(scenario):
        sink.send(f"{prefix}.{resource_of('ktrace', topic)}", record)
    sink.flush()
    sink.close()
