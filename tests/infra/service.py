"""What the locally started services (Kafka broker, Schema Registry) share: one child
process that stops cleanly, a context manager, and the foreground mode of their
``python -m tests.infra.<service> start`` commands."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Callable, Self


LOG_TAIL_LINES = 40


class LocalService:
    """A service in one child process; subclasses implement ``start``."""

    _process: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        raise NotImplementedError

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM (the service's own clean shutdown), then SIGKILL after ``timeout``."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def serve(service: LocalService, announce: Callable[[], str], log_file: Path) -> int:
    """Start ``service`` and keep it in the foreground until SIGTERM or SIGINT, after printing
    ``announce()`` (the environment variable that points tests at it)."""
    stop_requested = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop_requested.set())
    with service:
        print(announce(), flush=True)
        while not stop_requested.wait(1.0):
            if not service.running:
                print(f"the service exited on its own; see {log_file}", file=sys.stderr)
                return 1
    return 0


def free_loopback_ports(count: int) -> tuple[int, ...]:
    # Hold every socket until all are bound so the kernel hands out distinct ports.
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return tuple(sock.getsockname()[1] for sock in sockets)
    finally:
        for sock in sockets:
            sock.close()


def tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-lines:])
