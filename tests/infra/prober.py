"""HTTP GETs through a Service, one new connection each (so kube-proxy picks a backend every
time), written as JSON lines: when each started and ended, and the backend that answered
(the pod's name, which the test server returns) or the error. Stops on SIGTERM.

    python -m tests.infra.prober URL OUT
"""

from __future__ import annotations

import http.client
import json
import signal
import sys
import time
from typing import Any
from urllib.parse import urlsplit

INTERVAL_S = 0.02
TIMEOUT_S = 0.5


def request(host: str, port: int) -> dict[str, Any]:
    start = time.time()
    try:
        connection = http.client.HTTPConnection(host, port, timeout=TIMEOUT_S)
        try:
            connection.request("GET", "/")
            response = connection.getresponse()
            body = response.read().decode(errors="replace").strip()
        finally:
            connection.close()
        outcome = {"backend": body} if response.status == 200 else {"error": f"HTTP {response.status}"}
    except OSError as error:
        outcome = {"error": type(error).__name__}
    return {"start": start, "end": time.time(), **outcome}


def main(url: str, out: str) -> None:
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    target = urlsplit(url)
    with open(out, "a", buffering=1) as lines:
        while not stopping:
            sent = request(target.hostname or "", target.port or 80)
            lines.write(json.dumps(sent) + "\n")
            time.sleep(max(0.0, sent["start"] + INTERVAL_S - time.time()))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
