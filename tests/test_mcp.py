"""`ktrace mcp` driven by the MCP SDK's own client, over stdio (the server spawned as an agent
spawns it) and over streamable HTTP (a server process on a free port): every tool answers
with exactly its command's `-o json`, pages put together are the whole answer, failures are
tool errors, and a write through `query` is refused."""

from __future__ import annotations

import csv
import io
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.recorder_k8s import free_port
from tests.report_data import ktrace

ROOT = Path(__file__).resolve().parents[1]
KTRACE = [sys.executable, "-c", "from ktrace.cli import main; main()"]
ENV = {"PYTHONPATH": str(ROOT)}
TOOLS = {"info", "stuck", "explain", "timeline", "races", "gaps", "get", "state", "evidence",
         "query"}
QUERY = "SELECT kind, count(*) AS records FROM raw_events GROUP BY ALL ORDER BY kind"


def calls(evidence_id: str) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(tool, arguments, the command that answers the same) for every tool."""
    return [
        ("info", {}, ["info"]),
        ("stuck", {}, ["stuck"]),
        ("stuck", {"only": "terminating", "namespace": "hold"},
         ["stuck", "--terminating", "-n", "hold"]),
        ("explain", {"target": "held"}, ["explain", "held"]),
        ("explain", {"target": "deploy/web", "namespace": "race"},
         ["explain", "deploy/web", "-n", "race"]),
        ("timeline", {"target": "deploy/web", "namespace": "race"},
         ["timeline", "deploy/web", "-n", "race"]),
        ("races", {}, ["races"]),
        ("races", {"margin": "500ms"}, ["races", "--margin", "500ms"]),
        ("gaps", {"thresholds": {"create_to_schedule": "1s"}},
         ["gaps", "--threshold", "create_to_schedule=1s"]),
        ("get", {"kind": "pods"}, ["get", "pods"]),
        ("get", {"kind": "deploy", "names": ["web"], "namespace": "race"},
         ["get", "deploy", "web", "-n", "race"]),
        ("state", {"at": "end-1m", "kind": "pods"}, ["state", "--at", "end-1m", "--kind", "pods"]),
        ("evidence", {"id": evidence_id}, ["evidence", evidence_id]),
        ("query", {"sql": QUERY}, ["query", QUERY]),
    ]


async def whole(client: Client, tool: str, arguments: dict[str, Any],
                limit: int) -> tuple[Any, int]:
    """The tool's answer put together from its pages of ``limit`` rows (per section for a
    report), and how many pages it took."""
    pages, cursor = [], None
    while True:
        result = await client.call_tool(tool, arguments | {"limit": limit, "cursor": cursor})
        assert not result.is_error, result.content[0].text
        pages.append(json.loads(result.content[0].text))
        if len(result.content) == 1:
            break
        cursor = json.loads(result.content[1].text)["next_cursor"]
    if isinstance(pages[0], dict):
        return {key: [row for p in pages for row in p[key]] for key in pages[0]}, len(pages)
    return [row for p in pages for row in p], len(pages)


@pytest.fixture(scope="module")
def answers(demo_db: str) -> list[tuple[str, dict[str, Any], str]]:
    """(tool, arguments, its command's -o json text) for every tool; for `get`, whose -o json
    prints kubectl's objects, the command's rows (its -o csv) as JSON."""
    evidence_id = json.loads(ktrace("stuck", "--db", demo_db, "-o", "json"))[0]["evidence_event_id"]
    return [(tool, arguments, ktrace(*command, "--db", demo_db, "-o", "json") if tool != "get"
             else json.dumps(list(csv.DictReader(io.StringIO(
                 ktrace(*command, "--db", demo_db, "-o", "csv"))))))
            for tool, arguments, command in calls(evidence_id)]


def as_csv(text: str) -> str:
    """A tool's JSON rows as the command's csv cells read (lists and objects as JSON text,
    none as empty), to compare with `get`'s rows."""
    def cell(value: Any) -> str:
        if isinstance(value, (list, dict)):
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        return "" if value is None else str(value)
    return json.dumps([{k: cell(v) for k, v in row.items()} for row in json.loads(text)])


def check_every_tool(client: Callable[[], Client], answers) -> None:
    """Every tool listed and called: an answer that fits its page is its command's text to
    the byte; the cause vocabulary is a resource."""
    async def run() -> None:
        async with client() as session:
            listed = {t.name: t for t in (await session.list_tools()).tools}
            assert set(listed) == TOOLS
            assert all(t.description and t.annotations.read_only_hint for t in listed.values())
            for tool, arguments, cli in answers:
                result = await session.call_tool(tool, arguments | (
                    {"limit": 1000} if tool != "evidence" else {}))
                texts = [c.text if tool != "get" else as_csv(c.text) for c in result.content]
                assert texts == [cli], (tool, arguments)
            causes = await session.read_resource("ktrace://causes")
            vocabulary = {row["cause"] for row in json.loads(causes.contents[0].text)}
            assert {"finalizers", "unschedulable", "recording_gap", "unknown"} <= vocabulary
    anyio.run(run)


def stdio_client(db: str) -> Client:
    return Client(StdioServerParameters(command=KTRACE[0], args=[*KTRACE[1:], "mcp", "--db", db],
                                        env=ENV))


def test_every_tool_over_stdio_answers_as_its_command(demo_db: str, answers):
    check_every_tool(lambda: stdio_client(demo_db), answers)


@pytest.fixture
def http_server(demo_db: str):
    """`ktrace mcp --transport http` on a free port of 127.0.0.1; its URL."""
    port = free_port()
    server = subprocess.Popen([*KTRACE, "mcp", "--db", demo_db, "--transport", "http",
                               "--port", str(port)], env=os.environ | ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stderr.read()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the MCP server never listened"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=30)
        server.stderr.close()


def test_every_tool_over_http_answers_as_its_command(http_server: str, answers):
    check_every_tool(lambda: Client(http_server), answers)


def on_stdio(db: str, body: Callable[[Client], Awaitable[None]]) -> None:
    async def run() -> None:
        async with stdio_client(db) as client:
            await body(client)
    anyio.run(run)


def test_a_write_through_query_is_a_tool_error_and_writes_nothing(demo_db: str):
    before = ktrace("query", "SELECT count(*) AS n FROM raw_events", "--db", demo_db, "-o", "json")

    async def body(client: Client) -> None:
        for sql in ("DELETE FROM raw_events",
                    "SELECT 1; DROP TABLE raw_events",
                    "COPY raw_events TO '/tmp/ktrace-mcp-leak.csv'",
                    "SELECT * FROM read_csv('/etc/passwd')"):
            result = await client.call_tool("query", {"sql": sql})
            assert result.is_error, sql
            assert "not allowed" in result.content[0].text or "disabled" in \
                result.content[0].text.lower(), result.content[0].text
        # the server is still there and answers after the refusals
        ok = await client.call_tool("query", {"sql": "SELECT count(*) AS n FROM raw_events"})
        assert ok.content[0].text == before
    on_stdio(demo_db, body)
    assert not Path("/tmp/ktrace-mcp-leak.csv").exists()


def test_bad_arguments_are_tool_errors_that_say_what_is_wrong(demo_db: str, tmp_path: Path):
    async def body(client: Client) -> None:
        for tool, arguments, says in [
            ("explain", {"target": "no-such-pod"}, "no pod 'no-such-pod'"),
            # one name in two namespaces is two stories: the agent must choose, as the CLI asks
            ("explain", {"target": "deploy/web"}, "in 2 namespaces (graceful, race)"),
            ("timeline", {"target": "deploy/web"}, "in 2 namespaces (graceful, race)"),
            ("evidence", {"id": "po:00000000:1"}, "po:00000000:1"),
            ("stuck", {"margin": "soon"}, "margin"),
            ("stuck", {"only": "sideways"}, "only"),
            ("get", {"kind": "gadgets"}, "unknown kind 'gadgets'"),
            ("state", {"at": "yesterday-ish"}, "yesterday-ish"),
            ("gaps", {"thresholds": {"no_such_step": "1s"}}, "unknown threshold"),
            ("gaps", {"since": "yesterday-ish"}, "yesterday-ish"),
            ("stuck", {"cursor": "abc"}, "cursor"),
            ("stuck", {"limit": 0}, "limit"),
            ("query", {"sql": "SELECT * FROM no_such_table"}, "no_such_table"),
        ]:
            result = await client.call_tool(tool, arguments)
            assert result.is_error and says in result.content[0].text, (tool, result.content)
    on_stdio(demo_db, body)

    async def missing(client: Client) -> None:
        result = await client.call_tool("info", {})
        assert result.is_error and "no database at" in result.content[0].text
    on_stdio(str(tmp_path / "none.duckdb"), missing)


def test_since_keeps_the_recent_part_as_the_command_does(demo_db: str):
    """`since` on races and gaps: the command's --since answer to the byte, and a part of the
    whole answer — the rows from the second-earliest time on (races: deletions requested)."""
    def json_of(*command: str) -> Any:
        return json.loads(ktrace(*command, "--db", demo_db, "-o", "json"))
    every_race = json_of("races")["races"]
    every_gap = json_of("gaps")
    cases = [("races", sorted(r["deletion_requested_at"] for r in every_race)[1],
              lambda answer: answer["races"], every_race, "deletion_requested_at"),
             ("gaps", sorted(g["end_at"] for g in every_gap)[1],
              lambda answer: answer, every_gap, "end_at")]

    async def body(client: Client) -> None:
        for tool, since, rows_of, every, at in cases:
            result = await client.call_tool(tool, {"since": since, "limit": 1000})
            assert not result.is_error, result.content[0].text
            cli = ktrace(tool, "--since", since, "--db", demo_db, "-o", "json")
            assert [c.text for c in result.content] == [cli], tool
            recent = rows_of(json.loads(cli))
            assert recent == [r for r in every if r[at] >= since]
            assert 0 < len(recent) < len(every), tool
    on_stdio(demo_db, body)


def test_pages_put_together_are_the_whole_answer(demo_db: str, answers):
    paged = {"stuck", "races", "get", "state", "gaps", "info"}

    async def body(client: Client) -> None:
        for tool, arguments, cli in answers:
            if tool in paged and "names" not in arguments:
                joined, pages = await whole(client, tool, arguments, limit=2)
                if tool == "get":
                    joined = json.loads(as_csv(json.dumps(joined)))
                assert joined == json.loads(cli), (tool, arguments)
                assert pages > 1, (tool, arguments)
    on_stdio(demo_db, body)


def test_query_stops_at_its_row_limit_and_pages_on(demo_db: str):
    sql = "SELECT i FROM range(250) t(i) ORDER BY i"

    async def body(client: Client) -> None:
        first = await client.call_tool("query", {"sql": sql, "limit": 100})
        assert [r["i"] for r in json.loads(first.content[0].text)] == list(range(100))
        cursor = json.loads(first.content[1].text)["next_cursor"]
        last = await client.call_tool("query", {"sql": sql, "limit": 200, "cursor": cursor})
        assert [r["i"] for r in json.loads(last.content[0].text)] == list(range(100, 250))
        assert len(last.content) == 1
    on_stdio(demo_db, body)
