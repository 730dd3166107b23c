"""``ktrace mcp``: the analyses as tools of a Model Context Protocol server, for AI agents.

Each tool runs the analysis its command runs and answers with the command's ``-o json`` text
(the same library calls, the same ``dump_document``), so an agent and a person reading the
same database see the same answer. The database is opened read-only for each call and closed
after it, so a follower keeps loading beside the server and every call sees what it has
loaded. Answers are bounded: lists are cut at ``limit`` rows and go on from a ``cursor``.
Every failure — a bad argument, an unknown object, a refused write — is a tool error the
agent reads (``isError``), never a crash of the server. docs/agents.md tells how to attach it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Iterator

import click
import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ktrace import views
from ktrace.databases import open_for_analysis
from ktrace.options import DurationType
from ktrace.output import Answer, dump_document, dynamic_view
from ktrace.when import moment
from replayer.analyses.query import DEFAULT_TIMEOUT_S
from replayer.analyses.races import DEFAULT_MARGIN_S as RACE_MARGIN_S
from replayer.analyses.stuck import DEFAULT_MARGIN_S, DEFAULT_THRESHOLD_S, PENDING, TERMINATING
from schemas.errors import KtraceError

#: rows a list answer carries at most by default, and at most at all
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
#: the longest a ``query`` may run, whatever the agent asks for
MAX_QUERY_TIMEOUT_S = 120.0
CAUSES_URI = "ktrace://causes"

INSTRUCTIONS = """\
ktrace answers from a recording of a Kubernetes cluster (every object's history, kept after
the objects are gone): what is stuck and why, what raced in a rollout, what the recording did
not see. Start with `info` (what the database holds and when), then `stuck`, `races` and
`gaps` for findings; `explain` tells one object's story with evidence; every evidence id in
an answer opens with `evidence`; `get` and `state` show objects as they were at a moment;
`query` runs read-only SQL for what no tool answers. Times are RFC 3339 UTC; `at` and
`since` also take `end-10m` (before the data's end) or `2h` (before now); `since` keeps only
the recent part of `races` and `gaps`. List answers are cut at `limit` rows: when a second
text block carries `next_cursor`, call again with `cursor` set to it. The cause vocabulary every finding draws on is the resource ktrace://causes."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)

Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT,
                             description="Rows to return at most (lists are cut here).")]
Cursor = Annotated[str | None, Field(description="Where to go on: the next_cursor of the "
                                                 "previous page; omit for the first page.")]
Namespace = Annotated[str | None, Field(description="Only this namespace (default: all).")]
Cluster = Annotated[str | None, Field(description="Only this cluster's records (default: "
                                                  "every cluster in the database).")]
Target = Annotated[str, Field(description="A pod's name (or pod/NAME), or KIND/NAME with any "
                                          "kind name kubectl takes: deploy/web, rs/…, sts/…, "
                                          "ds/…, job/…, pvc/…, no/…, ns/…")]
Moment = Annotated[str | None, Field(description="A moment: RFC 3339 (2026-11-30T07:12:00Z), "
                                                 "end-10m (before the data's end) or 2h "
                                                 "(before now); default: the data's end.")]
Since = Annotated[str | None, Field(description="Only the recent part, from this moment on: "
                                              "RFC 3339, end-10m (before the data's end) or "
                                              "2h (before now); default: the whole "
                                              "recording.")]



def target_namespace(con: Any, target: str, namespace: str | None,
                     cluster: str | None) -> str | None:
    """A target named without a namespace must be in one: two objects of one name in two
    namespaces are two stories, and an agent must choose (as `ktrace explain` refuses)."""
    from replayer.analyses.scope import namespaces_named
    from schemas.kinds import ObjectRef
    if namespace is not None:
        return namespace
    ref = ObjectRef.parse(target)
    found = namespaces_named(con, ref.kind.kind, [ref.name], cluster)
    if len(found) > 1:
        raise ToolError(f"{ref.kind.kind} {ref.name!r} is in {len(found)} namespaces "
                        f"({', '.join(found)}): pass namespace")
    return None

@dataclass(frozen=True)
class Page:
    """The part of a list answer one call returns: ``limit`` items from ``offset``."""

    offset: int
    limit: int

    @classmethod
    def of(cls, limit: int, cursor: str | None) -> "Page":
        if cursor is None:
            return cls(0, limit)
        if not cursor.isdigit():
            raise ToolError(f"cursor {cursor!r} is not one this server gave: pass the "
                            "next_cursor of the previous answer, or none")
        return cls(int(cursor), limit)

    @property
    def end(self) -> int:
        return self.offset + self.limit

    def cut(self, items: list[Any]) -> list[Any]:
        return items[self.offset:self.end]


def answer(doc: Any, page: Page | None = None, more: bool = False) -> CallToolResult:
    """The command's ``-o json`` text of ``doc``; a page that leaves rows out says where the
    next one starts in a second block."""
    content = [TextContent(type="text", text=dump_document(doc, "json"))]
    if page is not None and more:
        content.append(TextContent(type="text", text=orjson.dumps({
            "next_cursor": str(page.end),
            "note": f"rows {page.offset}–{page.end - 1} shown; more follow: call again "
                    "with this cursor"}).decode()))
    return CallToolResult(content=content)


def rows_answer(one: Answer, page: Page) -> CallToolResult:
    """A command's list answer (``emit``'s JSON), one page of it."""
    return answer(page.cut(one.rows), page, len(one.rows) > page.end)


def sections_answer(sections: list[Answer], page: Page) -> CallToolResult:
    """A report of several lists (``emit_report``'s JSON): the same page of each."""
    return answer({a.view.name: page.cut(a.rows) for a in sections}, page,
                  any(len(a.rows) > page.end for a in sections))


def seconds(value: str, name: str) -> float:
    """A duration as the command's option takes it (``30s``, ``2m``, a bare number)."""
    try:
        return DurationType(allow_zero=True).convert(value, None, None)
    except click.BadParameter as exc:
        raise ToolError(f"{name}: {exc.message}") from None


class Tools:
    """The tools over one database file, each call on a read-only connection of its own."""

    def __init__(self, db_path: str) -> None:
        self.db_path = db_path

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:  # a DuckDB connection (DuckDB stays in replayer)
        """A read-only connection for one call; ktrace's own errors become tool errors."""
        try:
            con = open_for_analysis(self.db_path)
            try:
                yield con
            finally:
                con.close()
        except (KtraceError, click.ClickException) as exc:
            raise ToolError(exc.format_message() if isinstance(exc, click.ClickException)
                            else str(exc)) from exc

    def stuck(self, namespace: Namespace = None, cluster: Cluster = None, at: Moment = None,
              only: Annotated[str | None, Field(
                  description=f"'{TERMINATING}': only deletions that never finished; "
                              f"'{PENDING}': only what is not a stuck deletion (pods not "
                              "Running and Ready, workloads and volumes that cannot get "
                              "on); default: both.")] = None,
              margin: Annotated[str, Field(description="Time past the deletion deadline "
                                                       "before a deletion is stuck.")]
              = f"{DEFAULT_MARGIN_S:g}s",
              threshold: Annotated[str, Field(description="Time not Running and Ready "
                                                          "before a pod is stuck.")]
              = f"{DEFAULT_THRESHOLD_S:g}s",
              limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> CallToolResult:
        from replayer.analyses.stuck import stuck as find_stuck
        if only not in (None, TERMINATING, PENDING):
            raise ToolError(f"only: {only!r} is neither {TERMINATING!r} nor {PENDING!r}")
        page = Page.of(limit, cursor)
        with self.connection() as con:
            judged = find_stuck(con, at=moment(at, con), namespace=namespace,
                                cluster=cluster, margin_s=seconds(margin, "margin"),
                                threshold_s=seconds(threshold, "threshold"), only=only)
            return rows_answer(Answer.of(views.STUCK, judged.rows), page)

    def explain(self, target: Target, namespace: Namespace = None, cluster: Cluster = None,
                limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> CallToolResult:
        from replayer.analyses.explain import explain as explain_object
        page = Page.of(limit, cursor)
        with self.connection() as con:
            namespace = target_namespace(con, target, namespace, cluster)
            stories = [s.as_dict() for s in explain_object(con, target, namespace, cluster)]
        return answer(page.cut(stories), page, len(stories) > page.end)

    def timeline(self, target: Target, namespace: Namespace = None, cluster: Cluster = None,
                 limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> CallToolResult:
        from replayer.analyses.timeline import timeline as pod_timeline
        page = Page.of(limit, cursor)
        with self.connection() as con:
            namespace = target_namespace(con, target, namespace, cluster)
            return rows_answer(Answer.of(views.TIMELINE,
                                         pod_timeline(con, target, namespace, cluster)), page)

    def races(self, namespace: Namespace = None, cluster: Cluster = None,
              margin: Annotated[str, Field(description="Dataplane margin: containers stopping "
                                                       "this soon after the endpoint went off "
                                                       "are flagged too.")]
              = f"{RACE_MARGIN_S:g}s",
              since: Since = None, limit: Limit = DEFAULT_LIMIT,
              cursor: Cursor = None) -> CallToolResult:
        from replayer.analyses.findings import race_sections
        page = Page.of(limit, cursor)
        with self.connection() as con:
            sections = race_sections(con, namespace=namespace, cluster=cluster,
                                     margin_s=seconds(margin, "margin"),
                                     since=moment(since, con))
        return sections_answer([Answer.of(views.VIEWS[s.key], (s.columns, s.rows))
                                for s in sections], page)

    def gaps(self, namespace: Namespace = None, cluster: Cluster = None,
             thresholds: Annotated[dict[str, str] | None, Field(
                 description="Override slow-step thresholds for this call, step → duration, "
                             "e.g. {\"create_to_schedule\": \"10s\"}.")] = None,
             since: Since = None, limit: Limit = DEFAULT_LIMIT,
             cursor: Cursor = None) -> CallToolResult:
        from replayer.analyses.gaps import gaps as find_gaps
        page = Page.of(limit, cursor)
        parsed = {step: seconds(value, f"thresholds.{step}")
                  for step, value in (thresholds or {}).items()}
        with self.connection() as con:
            return rows_answer(Answer.of(views.GAPS, find_gaps(
                con, namespace=namespace, cluster=cluster, thresholds=parsed,
                since=moment(since, con))), page)

    def get(self, kind: Annotated[str, Field(description="The kind as kubectl names it: "
                                                         "pods/po, deploy, rs, sts, ds, jobs, "
                                                         "nodes/no, ns, events, pvc, pv…")],
            names: Annotated[list[str] | None, Field(description="Only these objects, by "
                                                                 "name.")] = None,
            namespace: Namespace = None, cluster: Cluster = None, at: Moment = None,
            selector: Annotated[str | None, Field(description="Label selector as kubectl "
                                                              "takes it: app=web, tier!=db, "
                                                              "'env in (a,b)'.")] = None,
            field_selector: Annotated[str | None, Field(
                description="Field selector: metadata.name, metadata.namespace, and per kind "
                            "e.g. spec.nodeName, status.phase (pods).")] = None,
            limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> CallToolResult:
        from replayer.analyses.get import get as get_objects
        from replayer.analyses.scope import data_end
        from schemas.kinds import kind_name
        page = Page.of(limit, cursor)
        with self.connection() as con:
            found = kind_name(kind).kind
            when = moment(at, con) or data_end(con, cluster)
            rows = get_objects(con, found, when, names=tuple(names or ()), namespace=namespace,
                               cluster=cluster, labels=selector, fields=field_selector)
            return rows_answer(Answer.of(views.GET_VIEWS.get(found, views.GET_OTHER), rows,
                                         now=when), page)

    def state(self, at: Annotated[str, Field(description="The moment: RFC 3339, end-10m "
                                                         "(before the data's end) or 2h "
                                                         "(before now).")],
              kind: Annotated[str | None, Field(description="Only this kind, as kubectl "
                                                            "names it.")] = None,
              namespace: Namespace = None, cluster: Cluster = None,
              limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> CallToolResult:
        from replayer.analyses.state import state as state_at
        page = Page.of(limit, cursor)
        with self.connection() as con:
            when = moment(at, con)
            return rows_answer(Answer.of(views.STATE, state_at(
                con, when, namespace=namespace, cluster=cluster, kind=kind, full=False,
                kafka=None), now=when), page)

    def evidence(self, id: Annotated[str, Field(description="An evidence id from another "
                                                            "answer (po:3f2a9c1d:42), or an "
                                                            "event_id from query.")]
                 ) -> CallToolResult:
        from replayer.analyses.evidence import evidence as show_evidence
        with self.connection() as con:
            return answer(show_evidence(con, id, full=True))

    def info(self, cluster: Cluster = None, limit: Limit = DEFAULT_LIMIT,
             cursor: Cursor = None) -> CallToolResult:
        from replayer.analyses.info import info as database_info
        page = Page.of(limit, cursor)
        with self.connection() as con:
            sections = database_info(con, cluster=cluster)
        return sections_answer([Answer.of(views.VIEWS[s.key], (s.columns, s.rows))
                                for s in sections], page)

    def query(self, sql: Annotated[str, Field(description="SQL over the database's tables and "
                                                          "views (raw_events, pod_lifecycle, "
                                                          "…); only SELECT, WITH, EXPLAIN, "
                                                          "SHOW, DESCRIBE, SUMMARIZE, PRAGMA "
                                                          "table_info run.")],
              params: Annotated[dict[str, str] | None, Field(
                  description="Named parameters, used as $NAME in the SQL.")] = None,
              timeout: Annotated[float, Field(gt=0, le=MAX_QUERY_TIMEOUT_S,
                                              description="Seconds before the query is "
                                                          "stopped.")] = DEFAULT_TIMEOUT_S,
              limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> CallToolResult:
        from replayer.analyses.query import run_query
        page = Page.of(limit, cursor)
        with self.connection() as con:
            result = run_query(con, sql, params or {}, write=False, timeout_s=timeout,
                               max_rows=page.end + 1)
        if result is None:
            return answer([])
        return rows_answer(Answer.of(dynamic_view("query", result[0]), result), page)

    def causes(self) -> str:
        """The cause vocabulary as JSON rows: cause, score, meaning, advice."""
        from replayer.analyses.causes import causes as vocabulary
        with self.connection() as con:
            columns, rows = vocabulary(con)
        return dump_document([dict(zip(columns, r)) for r in rows], "json")


#: each tool's name, title and what an agent should choose it for
TOOLS: dict[str, tuple[str, str]] = {
    "info": ("What the database holds", "Start here: each cluster's recorded window, the "
             "recorder sessions, the kinds with their records and objects (and how many exist "
             "at the end), and the stretches the recording did not see."),
    "stuck": ("What is stuck, and why", "What is stuck at a moment (default: the data's end), "
              "with ranked causes and their evidence ids: deletions that never finished "
              "(Terminating: finalizers, a node gone, containers not exiting…), pods not "
              "Running and Ready past a threshold, workloads and volumes that cannot get on. "
              "Use for 'why is X stuck/Pending/Terminating'."),
    "explain": ("One object's whole story", "One object's timeline and every finding about it "
                "in plain sentences, with evidence ids and what to do: pods, workloads "
                "(with their pods' stories), claims, volumes, nodes, namespaces, Jobs — "
                "also objects deleted long ago. Use when the question names an object."),
    "timeline": ("A pod's lifecycle steps", "A pod's lifecycle (or every pod of a workload): "
                 "each step with its time, the delta from the step before, the component "
                 "that did it and its evidence id."),
    "races": ("Rollout races and capacity dips", "Terminating pods whose containers stopped "
              "before (or just after) their endpoint went off — requests sent to a dead pod "
              "during a rollout — with the exposure per pod, the distribution and a "
              "suggested preStop delay per namespace, and dips of ready endpoints below a "
              "Deployment's replicas."),
    "gaps": ("Slow steps and unseen stretches", "Lifecycle steps slower than their threshold "
             "(scheduling, image pull, start…) and stretches the recording did not see "
             "(recorder down, watch relisted, damaged log): what ktrace cannot know."),
    "get": ("Objects as kubectl showed them", "Objects of one kind as `kubectl get` shows "
            "them, at a moment (default: the data's end), with label and field selectors — "
            "also objects deleted since."),
    "state": ("Every object at a moment", "Every object (or one kind's) as it was at a "
              "moment, with the time since its last record."),
    "evidence": ("The record behind an evidence id", "The record an evidence id names: what "
                 "it is, where it came from (topic/partition/offset), the facts the database "
                 "holds about it, and the stored object."),
    "query": ("Read-only SQL", "Read-only SQL over the database for what no other tool "
              "answers (tables: raw_events, pod_lifecycle, pod_transitions, …). Writes, "
              "files and the network are refused; it stops at its timeout."),
}


def server(db_path: str) -> MCPServer:
    """The MCP server over ``db_path``."""
    from importlib.metadata import version
    tools = Tools(db_path)
    mcp = MCPServer("ktrace", version=version("ktrace"), instructions=INSTRUCTIONS,
                    log_level="WARNING")
    for name, (title, description) in TOOLS.items():
        mcp.add_tool(getattr(tools, name), name=name, title=title, description=description,
                     annotations=READ_ONLY, structured_output=False)
    mcp.resource(CAUSES_URI, name="causes", title="The cause vocabulary",
                 description="Every cause a finding can name (cause, score, meaning, advice), "
                             "as the database's SQL declares it.",
                 mime_type="application/json")(tools.causes)
    return mcp


def run(db_path: str, transport: str, host: str, port: int,
        ready: Callable[[str], None]) -> None:
    """Serve until interrupted; ``ready`` hears where (stdout is the stdio transport's)."""
    mcp = server(db_path)
    if transport == "stdio":
        mcp.run("stdio")
        return
    ready(f"serving MCP over streamable HTTP at http://{host}:{port}/mcp")
    mcp.run("streamable-http", host=host, port=port)
