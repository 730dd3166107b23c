"""A broken extension API server for the groupversion recording (capture.py): its discovery
answers a groupVersion that does not parse.

    python extension_api.py PORT CERT KEY

Serves HTTPS on 127.0.0.1:PORT with CERT/KEY until SIGTERM. It has no aggregated discovery
(`GET /apis` is 404, so the aggregator falls back to the group-version path); every other
GET is answered with one namespaced, deletable resource `widgets` in an APIResourceList
whose groupVersion is `widgets.ktrace.test/v1/v1` (two slashes: ParseGroupVersion refuses it),
a list of widgets (a path ending in `/widgets`) is always empty, and a DELETE is 405.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from tests.data.controlplane.webhook import serve  # noqa: E402

MALFORMED = "widgets.ktrace.test/v1/v1"
RESOURCES = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": MALFORMED,
             "resources": [{"name": "widgets", "singularName": "widget", "namespaced": True, "kind": "Widget",
                            "verbs": ["create", "delete", "get", "list", "watch"]}]}
#: what the namespace controller's metadata client asks for when it lists widgets
NO_WIDGETS = {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
              "metadata": {"resourceVersion": "1"}, "items": []}


class Discovery(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        path = self.path.split("?")[0]
        if path == "/apis":
            self.send_error(404)
            return
        body = json.dumps(NO_WIDGETS if path.endswith("/widgets") else RESOURCES).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self) -> None:  # noqa: N802
        """405: the namespace controller then lists the widgets and deletes each (none)."""
        self.send_error(405)

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"extension_api: {format % args}\n")


if __name__ == "__main__":
    serve(Discovery, int(sys.argv[1]), sys.argv[2], sys.argv[3])
