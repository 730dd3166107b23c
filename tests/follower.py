"""``ktrace replay LOG --db PATH --follow`` as a process, and its stderr read line by line: how
the follower tests watch it catch up."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path


def wait_for_line(lines: "queue.Queue[str]", wanted: str, timeout: float = 120) -> None:
    """Wait for the follower's catch-up report ``wanted`` on its stderr, or fail."""
    deadline, seen = time.monotonic() + timeout, []
    while (left := deadline - time.monotonic()) > 0:
        try:
            seen.append(lines.get(timeout=left).strip())
        except queue.Empty:
            break
        if seen[-1] == wanted:
            return
    raise AssertionError(f"follower never reported {wanted!r}; it said {seen}")


def lines_of(stream) -> "queue.Queue[str]":
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)
        lines.put(END_OF_STREAM)
    threading.Thread(target=read, daemon=True).start()
    return lines


END_OF_STREAM = ""  # what lines_of puts after the stream's last line (no real line is empty)


def rest_of(lines: "queue.Queue[str]", timeout: float = 30) -> list[str]:
    """The lines still to come, up to the end of the stream."""
    rest = []
    while (line := lines.get(timeout=timeout)) != END_OF_STREAM:
        rest.append(line.strip())
    return rest


def start_follower(log: Path, path: str, *options: str
                   ) -> tuple[subprocess.Popen, "queue.Queue[str]"]:
    """`ktrace replay LOG --db PATH --follow [OPTIONS]` as a process, and its stderr lines."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    follower = subprocess.Popen(
        [sys.executable, "-c", "from ktrace.cli import main; main()", "replay", str(log),
         "--db", path, "--follow", *options], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    return follower, lines_of(follower.stderr)
