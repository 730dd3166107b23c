"""The flat view of a pyinstrument session: where the time is spent, summed by function."""

from __future__ import annotations

from collections import Counter
from typing import Any

TOP = 15


def top_self_time(session: Any, top: int = TOP) -> list[dict[str, Any]]:
    """The ``top`` functions by self time (summed over every call path), with their share."""
    root = session.root_frame()
    if root is None:
        return []
    spent: Counter = Counter()
    stack = [root]
    while stack:
        frame = stack.pop()
        stack.extend(frame.children)
        if frame.is_synthetic:
            continue
        spent[f"{frame.function} ({frame.file_path_short}:{frame.line_no})"] += frame.total_self_time
    total = root.time or 1.0
    return [{"function": name, "self_s": round(seconds, 3), "share": round(seconds / total, 3)}
            for name, seconds in spent.most_common(top)]
