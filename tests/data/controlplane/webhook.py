"""A validating admission webhook for the control-plane catalogue recording (capture.py):
it denies every request the API server sends it, with a message naming what it refused.

    python webhook.py PORT CERT KEY

Serves HTTPS on 127.0.0.1:PORT with CERT/KEY (the test CA's serving certificate) until
SIGTERM; the API server calls it for the rules of capture.py's ValidatingWebhookConfiguration.
"""

from __future__ import annotations

import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Deny(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request = review["request"]
        what = f"{request['operation']} of {request['resource']['resource']} in namespace {request['namespace']}"
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "response": {"uid": request["uid"], "allowed": False,
                                        "status": {"code": 403, "message": f"{what} is frozen by policy"}}})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"webhook: {format % args}\n")


def serve(handler: type[BaseHTTPRequestHandler], port: int, cert: str, key: str) -> None:
    """HANDLER over HTTPS on 127.0.0.1:PORT with CERT/KEY, until killed."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()


if __name__ == "__main__":
    serve(Deny, int(sys.argv[1]), sys.argv[2], sys.argv[3])
