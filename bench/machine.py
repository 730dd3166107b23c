"""What the figures came from: CPUs, memory, and how busy the machine was."""

from __future__ import annotations

import os
import platform
from typing import Any


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def describe() -> dict[str, Any]:
    import duckdb  # every replay figure, read_json's too, depends on its version

    return {"nproc": os.cpu_count(), "cpu": cpu_model(), "memory_gib": memory_gib(),
            "python": platform.python_version(), "duckdb": duckdb.__version__,
            "load_at_start": os.getloadavg()[0]}


def pinned_cpu() -> int:
    """The CPU the one-core phases run on: the last this process may use."""
    return max(os.sched_getaffinity(0))
