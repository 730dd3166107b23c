"""The layers, and who may import what (docs/architecture.md, "Layers"):

    ktrace ──▶ recorder, replayer ──▶ transports ──▶ schemas

Arrows point one way: a package imports only those below it, the recorder and the replayer
never each other, and the two transports (``transports.kafka``, ``transports.locallog``)
never each other. Each command module (``ktrace.commands.*``) stands alone: what commands
share lives in ``ktrace/`` modules, never in another command's module. The heavy or front-end libraries stay where they belong: DuckDB and
pyarrow in the replayer, confluent-kafka in the Kafka transport, click in the CLI.
Every import counts, also those inside functions and under TYPE_CHECKING.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: package → the packages it must not import (what sits above or beside it).
FORBIDDEN = {
    "schemas": {"transports", "recorder", "replayer", "ktrace"},
    "transports": {"recorder", "replayer", "ktrace"},
    "transports.kafka": {"transports.locallog"},
    "transports.locallog": {"transports.kafka"},
    "recorder": {"replayer", "ktrace"},
    "replayer": {"recorder", "ktrace"},
}

#: library → the only packages that may import it.
LIBRARIES = {
    "duckdb": {"replayer"},
    "pyarrow": {"replayer"},
    "confluent_kafka": {"transports.kafka"},
    "click": {"ktrace"},
}

#: the package whose modules never import each other
STANDALONE = "ktrace.commands"

#: (module, library) imports that break a rule today, each with the work that removes it;
#: the test fails once one is no longer needed, so the list cannot outlive its reason.
KNOWN: set[tuple[str, str]] = set()


def imported_modules(source: str) -> set[str]:
    """Every absolute module name ``source`` imports (``from a.b import c`` gives ``a.b``
    and ``a.b.c``: c may be a module)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def violations(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(module, what it must not import: a package or a library) for each rule ``graph``
    (module → the modules it imports) breaks."""
    found = set()
    for module, imports in graph.items():
        for imported in imports:
            found.update((module, other) for package, others in FORBIDDEN.items()
                         if within(module, package)
                         for other in others if within(imported, other))
            if (within(module, STANDALONE) and within(imported, STANDALONE)
                    and imported not in (module, STANDALONE)):
                found.add((module, ".".join(imported.split(".")[:3])))  # the command module
            library = imported.split(".")[0]
            if library in LIBRARIES and not any(within(module, p) for p in LIBRARIES[library]):
                found.add((module, library))
    return found


def source_graph() -> dict[str, set[str]]:
    graph = {}
    for package in ("ktrace", "recorder", "replayer", "schemas", "transports"):
        for path in (ROOT / package).rglob("*.py"):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            graph[module.removesuffix(".__init__")] = imported_modules(path.read_text())
    return graph


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return source_graph()


def test_every_import_follows_the_layers(graph):
    assert violations(graph) - KNOWN == set()


def test_every_known_exception_is_still_needed(graph):
    assert KNOWN - violations(graph) == set(), "remove it from KNOWN"


@pytest.mark.parametrize("module, imports, broken", [
    ("schemas.codec", "from transports.kafka import framing", "transports"),
    ("transports.kafka.source", "from replayer.loader import Loader", "replayer"),
    ("transports.locallog.sink", "import transports.kafka.settings", "transports.kafka"),
    ("transports.kafka.sink", "from transports.locallog.layout import MAGIC",
     "transports.locallog"),
    ("transports.kafka.source", "from transports import locallog", "transports.locallog"),
    ("recorder.writer", "from replayer import db", "replayer"),
    ("replayer.loader", "from recorder.spooling.spool import Spool", "recorder"),
    ("replayer.db", "def f():\n    from ktrace import output", "ktrace"),
    ("recorder.session", "import duckdb", "duckdb"),
    ("schemas.envelope", "import pyarrow.compute as pc", "pyarrow"),
    ("replayer.replay", "from confluent_kafka import Consumer", "confluent_kafka"),
    ("transports.locallog.source", "import confluent_kafka", "confluent_kafka"),
    ("replayer.analyses.query", "import click", "click"),
    ("ktrace.commands.get", "from ktrace.commands.analyze import with_db",
     "ktrace.commands.analyze"),
    ("ktrace.commands.report", "def f():\n    from ktrace.commands import replay",
     "ktrace.commands.replay"),
])
def test_a_planted_violation_is_found(graph, module, imports, broken):
    planted = graph | {module: graph[module] | imported_modules(imports)}
    assert violations(planted) - KNOWN == {(module, broken)}


@pytest.mark.parametrize("module, imports", [
    ("ktrace.cli", "from recorder import session\nfrom replayer import db\nimport click"),
    ("ktrace.cli", "import ktrace.commands.analyze\nimport ktrace.commands.replay"),
    ("ktrace.commands.get", "from ktrace.databases import with_db\nimport ktrace.commands"),
    ("recorder.session", "from transports.kafka.sink import KafkaSink"),
    ("replayer.objects", "from transports.locator import open_source"),
    ("transports.locator", "from transports.kafka.source import KafkaSource\n"
                           "from transports.locallog.source import LocalLogSource"),
    ("transports.kafka.sink", "from confluent_kafka import Producer\nfrom schemas import codec"),
    ("replayer.loader", "import duckdb\nimport pyarrow as pa"),
])
def test_an_allowed_import_is_not_a_violation(module, imports):
    graph = {module: imported_modules(imports)}
    assert violations(graph) == set()


def test_test_modules_share_helpers_through_helper_modules_only():
    """A test module imports helpers from tests/ helper modules (recorder_data, replayer_data,
    …), never from another test module: running one test file must not collect another's."""
    offenders = {path.name: sorted(m for m in imported_modules(path.read_text())
                                   if m.startswith("tests.test_"))
                 for path in (ROOT / "tests").rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}
