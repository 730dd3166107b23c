"""Informer semantics, written out: the three layers kopf and client-go use.

1. ``Informer.items`` — the endless loop: list when there is no resourceVersion to watch
   from, watch, reconnect with backoff after a drop, relist after 410 Gone.
2. ``_list`` / ``_watch`` — one paged LIST (``ListStarted``, ``Listed``…, ``Synced``) or one
   WATCH connection with bookmarks, from a resourceVersion, until it ends.
3. the raw stream (``recorder.kube.client.WatchStream``): bytes, one event per line.

The informer only reports what the server said, in order, as ``Item``s; deciding what to
record (and diffing a relist against the last known state) is the writer's job, so this
module stays a pure function of the server's answers and is tested on recorded streams.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec
import orjson

from recorder import lean
from recorder.kube.catalogue import Target
from recorder.kube.client import ApiError, ConnectionLost
from schemas.errors import KtraceError

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def now_us() -> int:
    return time.time_ns() // 1000


# --- what an informer reports ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListStarted:
    """The first page of a LIST arrived; everything listed is the state at this RV."""
    resource_version: str
    relist_cause: str | None  # None for the first list of a session with no known state
    received_at: int


@dataclass(frozen=True, slots=True)
class Listed:
    obj: Obj
    received_at: int


@dataclass(frozen=True, slots=True)
class Synced:
    resource_version: str
    count: int
    received_at: int


class WatchEvent(msgspec.Struct, gc=False):  # one per event: a C __init__ (attribution.Attribution)
    type: str  # ADDED, MODIFIED, DELETED
    obj: Obj | lean.RawObject  # the lean decode, or the full parse for shapes it does not model
    received_at: int

    @property
    def resource_version(self) -> str | None:
        if isinstance(self.obj, lean.RawObject):
            return self.obj.metadata.resourceVersion
        return (self.obj.get("metadata") or {}).get("resourceVersion")


@dataclass(frozen=True, slots=True)
class Bookmark:
    resource_version: str
    received_at: int


@dataclass(frozen=True, slots=True)
class Relist:
    """The watch cannot continue from ``from_rv`` (410 Gone): a relist follows."""
    cause: str
    from_rv: str | None
    received_at: int


@dataclass(frozen=True, slots=True)
class Watching:
    """A watch connection is open from ``resource_version`` (readiness, resume evidence)."""
    resource_version: str


@dataclass(frozen=True, slots=True)
class Problem:
    """Something went wrong and was handled (logged already); the writer counts it."""
    what: str  # malformed, disconnect, server_error, list_error
    detail: str


Item = ListStarted | Listed | Synced | WatchEvent | Bookmark | Relist | Watching | Problem


# --- what an informer needs from the API server ------------------------------------------


class Stream(Protocol):
    def lines(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class WatchApi(Protocol):
    def list_page(self, target: Target, *, limit: int, cont: str | None) -> Obj: ...

    def open_watch(self, target: Target, *, resource_version: str, timeout_s: int) -> Stream: ...


class KubeWatchApi:
    """WatchApi over the real client."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def list_page(self, target: Target, *, limit: int, cont: str | None) -> Obj:
        query: dict[str, Any] = {"limit": limit}
        if cont:
            query["continue"] = cont
        return self._client.get_json(target.path, query)

    def open_watch(self, target: Target, *, resource_version: str, timeout_s: int) -> Stream:
        query = {"watch": "1", "resourceVersion": resource_version,
                 "allowWatchBookmarks": "true", "timeoutSeconds": timeout_s}
        # The server ends the watch after timeout_s; no bytes for much longer means a dead peer.
        return self._client.stream(target.path, query, read_timeout=timeout_s + 60)


class Gone(KtraceError):
    """410: the resourceVersion is older than the server keeps (compacted)."""


class InformerError(KtraceError):
    """A failure retrying cannot fix (forbidden, not found) before anything was listed."""


@dataclass(frozen=True)
class InformerSettings:
    page_size: int = 500
    watch_timeout_s: tuple[int, int] = (300, 600)  # randomised, as client-go does
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 30.0


FATAL_STATUSES = frozenset({400, 401, 403, 404})


class Informer:
    def __init__(self, api: WatchApi, target: Target, *, start_rv: str | None = None,
                 relist_cause: str | None = None, stop: threading.Event | None = None,
                 settings: InformerSettings = InformerSettings()) -> None:
        self.api, self.target, self.settings = api, target, settings
        self.stop = stop or threading.Event()
        self._rv = start_rv
        self._relist_cause = relist_cause
        self._stream: Stream | None = None
        self._listed_once = False
        self._backoff = settings.backoff_initial_s

    def interrupt(self) -> None:
        """End a blocked read now (from another thread); ``stop`` must be set first."""
        stream = self._stream
        if stream is not None:
            stream.close()

    def items(self) -> Iterator[Item]:
        """Everything the server reports for this target until ``stop`` is set."""
        while not self.stop.is_set():
            try:
                if self._rv is None:
                    self._rv = yield from self._list()
                    self._listed_once = True
                self._rv = yield from self._watch(self._rv)
            except Gone as exc:
                cause = f"410 Gone: {exc}"
                log.warning("%s: watch from resourceVersion %s expired (%s); relisting",
                            self.target.key, self._rv, exc)
                yield Relist(cause, self._rv, now_us())
                self._rv, self._relist_cause = None, cause
            except ApiError as exc:
                if exc.status in FATAL_STATUSES and not self._listed_once:
                    raise InformerError(f"cannot list/watch {self.target.resource}: {exc}") from exc
                yield self._problem("server_error", str(exc))
                self._sleep_backoff()
            except (ConnectionLost, MalformedStream) as exc:
                yield self._problem("malformed" if isinstance(exc, MalformedStream) else "disconnect",
                                    str(exc))
                self._sleep_backoff()

    # --- layer 2: one LIST, one WATCH ------------------------------------------------------

    def _list(self) -> Iterator[Item]:
        """A paged LIST; an expired continue token restarts it (a new ListStarted)."""
        while True:
            try:
                return (yield from self._list_pages())
            except ApiError as exc:
                if exc.status != 410:
                    raise
                log.warning("%s: list continuation expired; restarting the list", self.target.key)

    def _list_pages(self) -> Iterator[Item]:
        cont, count, rv = None, 0, ""
        while True:
            page = self.api.list_page(self.target, limit=self.settings.page_size, cont=cont)
            received = now_us()
            meta = page.get("metadata") or {}
            if cont is None:
                rv = meta.get("resourceVersion") or ""
                yield ListStarted(rv, self._relist_cause, received)
            for obj in page.get("items") or ():
                # A list's items carry no kind or apiVersion: the watch's objects open with
                # them, and a listed object is stored in the same order as a watched one.
                count += 1
                yield Listed({"kind": self.target.kind, "apiVersion": self.target.api_version,
                              **obj}, received)
            cont = meta.get("continue")
            if not cont:
                break
        self._relist_cause = None
        self._backoff = self.settings.backoff_initial_s
        yield Synced(rv, count, now_us())
        return rv

    def _watch(self, rv: str) -> Iterator[Item]:
        """One watch connection; ``self._rv`` follows every event, so a watch that breaks
        half-way resumes after the last event it delivered. Returns the last RV seen."""
        try:
            stream = self.api.open_watch(self.target, resource_version=rv,
                                         timeout_s=random.randint(*self.settings.watch_timeout_s))
        except ApiError as exc:
            if exc.status == 410:
                raise Gone(exc.message) from exc
            raise
        self._stream = stream
        opened, events = time.monotonic(), 0
        try:
            yield Watching(rv)
            for line in stream.lines():
                item = parse_event(line, self.target.key)
                self._rv = item.resource_version or self._rv
                events += 1
                yield item
        finally:
            self._stream = None
            stream.close()
        if events or time.monotonic() - opened > 5:
            self._backoff = self.settings.backoff_initial_s
        elif not self.stop.is_set():
            self._sleep_backoff()  # a server that ends watches at once must not be hammered
        return self._rv

    def _problem(self, what: str, detail: str) -> Problem:
        log.warning("%s: %s (%s); resuming from resourceVersion %s in %.1fs",
                    self.target.key, what, detail, self._rv, self._backoff)
        return Problem(what, detail)

    def _sleep_backoff(self) -> None:
        self.stop.wait(self._backoff * random.uniform(0.8, 1.2))
        self._backoff = min(self._backoff * 2, self.settings.backoff_max_s)


# --- layer 3: one line of a watch stream -----------------------------------------------------


class MalformedStream(KtraceError):
    """A line that is not a watch event: the rest of this stream cannot be trusted."""


def parse_event(line: bytes, where: str) -> WatchEvent | Bookmark:
    """One watch line → an item; Gone for an expired resourceVersion, MalformedStream for
    garbage (the watch is re-opened from the last good resourceVersion, so nothing is skipped).
    Object events are decoded lean (``recorder.lean``); other lines and shapes the lean
    structures do not model take the full parse."""
    received = now_us()
    try:
        kind, body = lean.split_line(line)
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            return WatchEvent(kind, lean.read_object(body), received)
    except (msgspec.DecodeError, msgspec.ValidationError, lean.LeanMiss):
        pass  # the full parse below says what is wrong, or reads what lean does not model
    return _parse_in_full(line, where, received)


def _parse_in_full(line: bytes, where: str, received: int) -> WatchEvent | Bookmark:
    try:
        doc = orjson.loads(line)
        kind, obj = doc["type"], doc["object"]
        if not isinstance(obj, dict):
            raise TypeError("object is not a JSON object")
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        log.error("%s: malformed watch line (%s): %.200r", where, exc, line)
        raise MalformedStream(f"malformed watch line: {exc}") from exc
    if kind == "BOOKMARK":
        return Bookmark((obj.get("metadata") or {}).get("resourceVersion") or "", received)
    if kind == "ERROR":
        raise status_error(obj)
    if kind not in ("ADDED", "MODIFIED", "DELETED"):
        log.error("%s: unknown watch event type %r", where, kind)
        raise MalformedStream(f"unknown watch event type {kind!r}")
    return WatchEvent(kind, obj, received)


def status_error(status: Obj) -> KtraceError:
    code, message = status.get("code"), status.get("message") or status.get("reason") or ""
    if code == 410 or status.get("reason") in ("Expired", "Gone"):
        return Gone(message)
    return ApiError(int(code or 500), message, status.get("reason"))
