"""``ktrace record``'s command line: help, refusals as one clear line, JSON logs; and the
raw HTTP client's line splitting over a real (local) chunked HTTP response."""

from __future__ import annotations

import http.server
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from recorder.kube.catalogue import Discovery, KindSpec, CatalogueError
from recorder.kube.client import ApiClient, ApiError
from recorder.kube.config import ClusterConfig
from recorder.logs import JsonFormatter


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["record", *args])
    return result.exit_code, result.output


def test_help_names_every_option() -> None:
    code, out = invoke("--help")
    assert code == 0
    for option in ("--kubeconfig", "--context", "--kinds", "--namespace", "--kafka", "--topic-prefix",
                   "--cluster", "--out", "--state-dir", "--redact", "--no-redact", "--metrics-port",
                   "--duration", "--log-format", "--spool-max-mb", "--typed-facts"):
        assert option in out


def test_secrets_are_refused_before_connecting(tmp_path: Path) -> None:
    code, out = invoke("--kinds", "pods,secrets", "--kubeconfig", str(tmp_path / "none"))
    assert code == 1
    assert out.strip() == "Error: secrets are never recorded: ktrace does not request Secrets"


def test_contradictions_are_usage_errors() -> None:
    code, out = invoke("--redact", "spec.x", "--no-redact")
    assert code == 2 and "--redact and --no-redact contradict each other" in out
    code, out = invoke("--kafka", "127.0.0.1:1", "--out", "x")
    assert code == 2 and "give --kafka or --out, not both" in out


def test_bad_inputs_are_one_line(tmp_path: Path) -> None:
    code, out = invoke("--redact", "spec[", "--kubeconfig", str(tmp_path / "none"))
    assert code == 1 and out.strip() == "Error: cannot parse redaction path 'spec[' at '['"
    code, out = invoke("--kubeconfig", str(tmp_path / "none"))
    assert code == 1 and out.strip() == f"Error: kubeconfig {tmp_path / 'none'} does not exist"
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    code, out = invoke("--kubeconfig", str(kubeconfig))
    assert code == 1 and out.strip() == "Error: the kubeconfig has no current-context; pass --context"


def test_json_log_lines() -> None:
    record = logging.LogRecord("recorder.x", logging.WARNING, __file__, 1, "spooled %d", (3,), None)
    doc = json.loads(JsonFormatter().format(record))
    assert doc["level"] == "WARNING" and doc["logger"] == "recorder.x" and doc["message"] == "spooled 3"


class ChunkedHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    chunks: list[bytes] = []

    def do_GET(self) -> None:  # noqa: N802
        if self.path.startswith("/apis/events.k8s.io"):
            body = b'{"kind":"Status","code":404,"reason":"NotFound","message":"the server could not find it"}'
            self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path.startswith("/api/v1?") or self.path == "/api/v1":
            body = json.dumps({"resources": [{"name": "events", "kind": "Event", "namespaced": True,
                                              "verbs": ["list", "watch"]}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in self.chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ApiClient]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ChunkedHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield ApiClient(ClusterConfig(server=f"http://127.0.0.1:{httpd.server_address[1]}"))
    httpd.shutdown()


def test_watch_lines_survive_any_chunking(server: ApiClient) -> None:
    events = [b'{"type":"ADDED","object":{"n":%d,"pad":"%s"}}' % (i, b"x" * 300_000 * (i % 2)) for i in range(4)]
    stream_bytes = b"\n".join(events) + b"\n" + b'{"type":"MODIF'  # a torn last event
    ChunkedHandler.chunks = [stream_bytes[i:i + 7919] for i in range(0, len(stream_bytes), 7919)]
    stream = server.stream("/api/v1/pods", {"watch": "1"}, read_timeout=10)
    assert list(stream.lines()) == events  # the torn tail is dropped, not half-parsed
    stream.close()


def test_discovery_falls_back_to_core_events(server: ApiClient) -> None:
    spec = KindSpec("events", (("events.k8s.io", "v1"), ("", "v1")))
    assert Discovery(server).find(spec) == ("", "v1", "Event", True)
    with pytest.raises(CatalogueError, match="does not serve pods"):
        Discovery(server).find(KindSpec("pods", (("", "v1"),)))


def test_api_errors_carry_the_status_message(server: ApiClient) -> None:
    with pytest.raises(ApiError) as caught:
        server.get_json("/apis/events.k8s.io/v1")
    assert caught.value.status == 404 and str(caught.value) == "404 NotFound: the server could not find it"
