"""``ktrace serve``'s data: the report of a database that a follower (``replay --follow``)
keeps current, rendered by the report's own templates — the whole page once, then its
inside again whenever the data changed.

Every answer opens the database read-only and closes it before returning: a follower holds
the file only while a catch-up loads and waits for readers to close it (``db.LOCK_WAIT_S``),
so neither keeps the other out for longer than one catch-up or one render. The data's
version is what the follower moves: how many records, and the last one loaded."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import duckdb

from replayer import db
from replayer.report import collect, gather
from replayer.report.html import render, render_fragment
from schemas.errors import KtraceError

#: Where the page polls, and what it swaps in (report.js, ``live``).
STATE_PATH, FRAGMENT_PATH = "/state.json", "/fragment"


class EmptyDatabase(KtraceError):
    """Nothing to draw yet: the page says so and the server goes on."""


@dataclass
class LiveReport:
    """One database's live report, narrowed like ``ktrace report`` (namespace, pods,
    cluster); its window is the whole data, growing with it."""

    db_path: str
    poll_ms: int = 2000
    namespace: str | None = None
    targets: tuple[str, ...] = ()
    cluster: str | None = None
    #: one render at a time: each holds a read-only connection, which a follower waits for
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def state(self) -> dict[str, Any]:
        """The data's version and size: cheap, polled every ``poll_ms``."""
        with self._lock:
            con = db.open_readonly(self.db_path)
            try:
                return _state(con)
            finally:
                con.close()

    def page(self) -> tuple[str, str]:
        """(the whole page, the version it shows)."""
        return self._draw(lambda con, inc, version: render(con, inc, live={
            "state_url": STATE_PATH, "fragment_url": FRAGMENT_PATH, "poll_ms": self.poll_ms,
            "version": version}))

    def fragment(self) -> tuple[str, str]:
        """(the inside of the page's ``<main>``, the version it shows)."""
        return self._draw(lambda con, inc, version: render_fragment(con, inc))

    def _draw(self, draw) -> tuple[str, str]:
        with self._lock:
            con = db.open_readonly(self.db_path)
            try:
                state = _state(con)
                if not state["records"]:  # a follower's first catch-up has not committed
                    raise EmptyDatabase(f"{self.db_path} holds no records yet")
                version = state["version"]
                sel = gather.select(con, namespace=self.namespace, targets=self.targets,
                                    cluster=self.cluster)
                return draw(con, collect(con, sel), version), version
            finally:
                con.close()


def _state(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    records, last_id, last_at = con.execute(
        "SELECT count(*), max(event_id), max(received_at) FROM raw_events").fetchone()
    return {"version": f"{records}-{last_id}", "records": records,
            "last_received_at": last_at.isoformat() + "Z" if last_at else None}
