"""``ktrace serve``'s HTTP side: three read-only GETs over a ``LiveReport`` — the page, the
state the page polls, and the fragment it swaps in — on the standard library's threading
server. Nothing here writes; no request takes a parameter that reaches SQL.

Bound to loopback, requests must also name a loopback host (``Host:``): a web page elsewhere
cannot reach the report through a DNS name rebound to 127.0.0.1."""

from __future__ import annotations

import ipaddress
import json
import socket
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from replayer.report.live import FRAGMENT_PATH, STATE_PATH, LiveReport
from schemas.errors import KtraceError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
#: What every answer says about itself: the page's own CSP is in its <meta>.
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str:
    """``localhost:8321`` → ``localhost``; ``[::1]:8321`` → ``::1``."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def make_server(live: LiveReport, host: str, port: int,
                log: Callable[[str], None] = lambda line: None) -> ThreadingHTTPServer:
    """The server, bound (``port`` 0: any free port; ``server_address`` says which)."""
    loopback_only = is_loopback(host)

    class Handler(BaseHTTPRequestHandler):
        server_version = "ktrace"
        sys_version = ""

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if loopback_only and not is_loopback(_host_name(self.headers.get("Host", ""))):
                return self._send(HTTPStatus.FORBIDDEN, "text/plain", b"not a local host\n")
            path = self.path.split("?", 1)[0]
            try:
                if path == "/":
                    html, version = live.page()
                    self._send(HTTPStatus.OK, "text/html; charset=utf-8", html.encode(), version)
                elif path == FRAGMENT_PATH:
                    html, version = live.fragment()
                    self._send(HTTPStatus.OK, "text/html; charset=utf-8", html.encode(), version)
                elif path == STATE_PATH:
                    self._send(HTTPStatus.OK, "application/json",
                               json.dumps(live.state()).encode())
                else:
                    self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found\n")
            except KtraceError as exc:  # no data yet, a lock held too long: say so, go on
                self._send(HTTPStatus.SERVICE_UNAVAILABLE, "text/plain", f"{exc}\n".encode(),
                           retry_s=max(1, live.poll_ms // 1000))

        def _send(self, status: HTTPStatus, kind: str, body: bytes, version: str | None = None,
                  retry_s: int | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for name, value in HEADERS.items():
                self.send_header(name, value)
            if version:
                self.send_header("X-Ktrace-Version", version)
            if retry_s:  # a browser reloads the page by itself once there is something
                self.send_header("Retry-After", str(retry_s))
                self.send_header("Refresh", str(retry_s))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base's name)
            log(format % args)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        # Stopping does not wait for answers being drawn (one may wait up to 30 s for the
        # follower's lock): a read-only server has nothing to finish.
        block_on_close = False
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    return Server((host, port), Handler)
