"""Raw HTTP(S) to the API server with the standard library: JSON GETs and watch streams
read as bytes, split into lines here (one watch event per line)."""

from __future__ import annotations

import base64
import http.client
import os
import socket
import ssl
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson

from recorder.kube.config import ClusterConfig, ConfigError
from schemas.errors import KtraceError

READ_SIZE = 256 * 1024
USER_AGENT = "ktrace-recorder"


class ApiError(KtraceError):
    """The API server answered with an error status (its Status message included)."""

    def __init__(self, status: int, message: str, reason: str | None = None) -> None:
        super().__init__(f"{status} {reason or ''}: {message}".replace("  ", " "))
        self.status, self.reason, self.message = status, reason, message


class ConnectionLost(KtraceError):
    """The connection failed or dropped (network error, reset, timeout, bad HTTP)."""


def ssl_context(config: ClusterConfig) -> ssl.SSLContext:
    """The TLS context of ``config``; ConfigError naming the file or field that is bad."""
    for what, path in (("certificate-authority", config.ca_file),
                       ("client-certificate", config.cert_file), ("client-key", config.key_file)):
        if path and not os.path.isfile(path):
            raise ConfigError(f"kubeconfig {what} file {path} does not exist")
    try:
        ctx = ssl.create_default_context(cafile=config.ca_file, cadata=_text(config.ca_data))
    except (ssl.SSLError, ValueError, TypeError, OSError) as exc:
        raise ConfigError(f"kubeconfig certificate-authority is not a PEM certificate: "
                          f"{_reason(exc)}") from exc
    if config.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if config.cert_file:
        try:
            ctx.load_cert_chain(config.cert_file, config.key_file)
        except (ssl.SSLError, ValueError, TypeError, OSError) as exc:
            raise ConfigError(f"kubeconfig client certificate/key ({config.cert_file}) cannot "
                              f"be used: {_reason(exc)}") from exc
    return ctx


def _text(data: bytes | None) -> str | None:
    return data.decode("utf-8", errors="replace") if data else None


def _reason(exc: Exception) -> str:
    return getattr(exc, "reason", None) or str(exc).splitlines()[0]


class ApiClient:
    """Shared settings; every call opens its own connection or uses the calling thread's."""

    def __init__(self, config: ClusterConfig, *, timeout: float = 30.0) -> None:
        url = urlsplit(config.server)
        self.config, self.timeout = config, timeout
        self._https = url.scheme == "https"
        self._host = url.hostname or "localhost"
        self._port = url.port or (443 if self._https else 80)
        self._base = url.path.rstrip("/")
        self._ssl = ssl_context(config) if self._https else None
        self._local = threading.local()

    def get_json(self, path: str, query: dict[str, Any] | None = None) -> dict[str, Any]:
        """GET and parse; a dropped keep-alive connection is retried once on a fresh one."""
        for attempt in (1, 2):
            conn = self._thread_connection()
            try:
                response = self._request(conn, path, query)
                body = response.read()
                break
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise ConnectionLost(f"GET {self.url(path)}: {type(exc).__name__}: "
                                         f"{exc}") from exc
        if response.status >= 400:
            raise api_error(response.status, body)
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise ConnectionLost(f"GET {self.url(path)}: response is not JSON ({exc})") from exc

    def url(self, path: str) -> str:
        """Where ``path`` is asked for: errors name the server, not only the path."""
        return f"{self.config.server.rstrip('/')}{path}"

    def stream(self, path: str, query: dict[str, Any], *, read_timeout: float) -> WatchStream:
        """Open a watch on its own connection; ApiError when the server refuses it."""
        conn = self._connection(read_timeout)
        try:
            response = self._request(conn, path, query)
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise ConnectionLost(f"watch {self.url(path)}: {type(exc).__name__}: {exc}") from exc
        if response.status >= 400:
            body = response.read()
            conn.close()
            raise api_error(response.status, body)
        return WatchStream(conn, response)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _thread_connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connection(self.timeout)
        return conn

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout,
                                               context=self._ssl)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def _request(self, conn: http.client.HTTPConnection, path: str,
                 query: dict[str, Any] | None) -> http.client.HTTPResponse:
        target = self._base + path + ("?" + urlencode(query) if query else "")
        conn.request("GET", target, headers=self._headers())
        return conn.getresponse()

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self._https and self.config.tls_server_name:
            headers["Host"] = self.config.tls_server_name
        token = self.config.token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        elif self.config.basic_auth:
            raw = ":".join(self.config.basic_auth).encode()
            headers["Authorization"] = "Basic " + base64.b64encode(raw).decode()
        return headers


def api_error(status: int, body: bytes) -> ApiError:
    """The Status object's message when the body is one, else the start of the body."""
    try:
        doc = orjson.loads(body)
        return ApiError(status, doc.get("message") or "", doc.get("reason"))
    except (orjson.JSONDecodeError, AttributeError):
        return ApiError(status, body[:200].decode(errors="replace"))


class WatchStream:
    """The lines of one watch response. ``close()`` may be called from another thread to
    end a blocked read at once (that is how the recorder stops quickly on SIGTERM)."""

    def __init__(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self._conn, self._response = conn, response
        self._closed = False

    def lines(self) -> Iterator[bytes]:
        """Complete lines, without the newline; a partial last line is dropped (the
        connection broke mid-event: the event is re-read from the last resourceVersion)."""
        pending = b""
        try:
            while chunk := self._response.read1(READ_SIZE):
                *complete, pending = (pending + chunk).split(b"\n")
                # blank keep-alive lines skipped; isspace() stops at an event's first byte,
                # strip() would copy every event to find out
                yield from (line for line in complete if line and not line.isspace())
        except (OSError, http.client.HTTPException, ValueError, AttributeError) as exc:
            # AttributeError: http.client's own state when close() raced a read; only then.
            if self._closed:
                return
            if isinstance(exc, AttributeError):
                raise
            raise ConnectionLost(f"watch stream broke: {type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        self._closed = True
        sock = self._conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._conn.close()
