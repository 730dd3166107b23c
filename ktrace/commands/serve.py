"""ktrace serve: the report as a live page over a database that `replay --follow` keeps
current, read-only, on localhost unless told otherwise."""

from __future__ import annotations

import signal
import threading

import click

from ktrace.databases import db_option, open_for_analysis
from ktrace.options import DurationType
from ktrace.scope import scope_options

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8321


@click.command(short_help="Serve the report as a live page beside a follower.")
@scope_options
@click.option("--pod", "targets", multiple=True, metavar="POD | KIND/NAME",
              help="Only these pods or workloads' pods (repeatable).")
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address to listen on. Anyone who reaches it reads the whole database "
                   "(names, messages, evidence): there is no login and no TLS, so off "
                   "loopback only the network protects it.")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="Port to listen on (0: any free port, printed at start).")
@click.option("--poll", "poll_s", type=DurationType(), default="2s", show_default=True,
              help="How often the page asks whether the data changed.")
@db_option
def serve(db_path: str, namespace: str | None, cluster: str | None, targets: tuple[str, ...],
          host: str, port: int, poll_s: float) -> None:
    """Serve the incident report as a live page: findings, per-pod lanes, rollouts and the
    unseen stretches, with evidence opened on click, redrawn in place whenever the database
    changes — run it beside `ktrace replay SOURCE --db PATH --follow`. Read-only: each
    refresh opens the database read-only for one render and closes it, so the follower
    loads between renders. The page polls GET /state.json and, when the data's version
    moved, swaps in GET /fragment.

    Examples:

    \b
      ktrace replay ktrace-log --db k.duckdb --follow &
      ktrace serve --db k.duckdb              # http://127.0.0.1:8321/
      ktrace serve --db k.duckdb -n shop --port 0"""
    from replayer.report.live import LiveReport
    from replayer.report.server import is_loopback, make_server

    open_for_analysis(db_path).close()  # a missing or foreign file: one error line, now
    live = LiveReport(db_path, poll_ms=int(poll_s * 1000), namespace=namespace,
                      targets=targets, cluster=cluster)
    server = make_server(live, host, port)
    # Ctrl-C and SIGTERM stop it, handled here: as a container's PID 1 an unhandled SIGTERM
    # is ignored, and a process started in the background of a shell without job control
    # inherits SIGINT ignored. shutdown() waits for serve_forever, which this (the main)
    # thread runs: ask from another. Handled before the line that says it is serving.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: threading.Thread(target=server.shutdown).start())
    if not is_loopback(host):
        click.echo(f"warning: serving {db_path} on {host}: anyone who can reach it reads every "
                   "object name, message and evidence record in it (no login, no TLS)", err=True)
    bound_host, bound_port = server.server_address[:2]
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    click.echo(f"serving {db_path} read-only at http://{shown_host}:{bound_port}/ "
               "(Ctrl-C stops)", err=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
