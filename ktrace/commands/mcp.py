"""ktrace mcp: the analyses as tools for AI agents (a Model Context Protocol server).

The server (ktrace/mcp_server.py) needs the `mcp` SDK, the extra `ktrace[mcp]`; it is
imported only when the command runs."""

from __future__ import annotations

import click

from ktrace.databases import db_option
from schemas.errors import KtraceError


@click.command(short_help="Serve the analyses to AI agents as MCP tools (read-only).")
@db_option
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              show_default=True,
              help="stdio: the agent starts the server and talks over its stdin/stdout; http: "
                   "streamable HTTP at http://HOST:PORT/mcp.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="With --transport http: the address to listen on. The server has no "
                   "authentication: keep it on localhost, or put an authenticating proxy in "
                   "front.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True,
              help="With --transport http: the port to listen on.")
def mcp(db_path: str, transport: str, host: str, port: int) -> None:
    """Serve the analyses to AI agents over the Model Context Protocol: tools stuck,
    explain, timeline, races, gaps, get, state, evidence, info and read-only query, each
    answering with its command's -o json; the cause vocabulary as the resource
    ktrace://causes. Read-only, always (docs/agents.md: attaching it to an agent).

    Examples:

    \b
      ktrace mcp --db incident.duckdb
      ktrace mcp --db live.duckdb --transport http --port 8765"""
    try:
        from ktrace import mcp_server
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("mcp", "mcp_types"):
            raise KtraceError("ktrace mcp needs the MCP SDK: pip install 'ktrace[mcp]'") from exc
        raise
    from replayer.report.server import is_loopback
    if transport == "http" and not is_loopback(host):
        click.echo(f"warning: serving {db_path} to agents on {host}: anyone who can reach it "
                   "reads every object name, message and evidence record in it (no login, no "
                   "TLS)", err=True)
    mcp_server.run(db_path, transport, host, port, ready=lambda line: click.echo(line, err=True))
