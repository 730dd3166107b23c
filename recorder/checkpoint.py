"""Where each watch stopped, so a restart resumes instead of relisting.

Per watch in ``--state-dir``: the last resourceVersion whose records the sink confirmed,
when it was seen, and the objects known at that point (uid → resourceVersion, namespace,
name) — the state a relist is diffed against when the resourceVersion has expired
meanwhile. Saved only after the sink confirmed the records they account for.

The known map grows with the cluster (150k pods), so a save does not rewrite it: a snapshot
(``<key>.checkpoint.json``, replaced atomically) plus a journal (``<key>.journal.jsonl``) of
one fsync'd line per save with what changed since the last. The journal is folded into a
new snapshot when it outgrows the snapshot; its lines name the snapshot's generation, so lines
left from before a compaction are never applied to the newer snapshot, and a torn last line
(a crash mid-save) is the save that did not happen.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field

import orjson

from schemas.errors import KtraceError

log = logging.getLogger(__name__)

Known = dict[str, list[str | None]]  # uid → [resourceVersion, namespace, name]
FORMAT = 1
#: The journal is folded into a new snapshot once it is larger than the snapshot (and this):
#: each change is then written at most about twice, whatever the number of live objects.
COMPACT_MIN_BYTES = 1 << 20


class CheckpointError(KtraceError):
    """The state directory cannot be written."""


@dataclass
class Checkpoint:
    resource_version: str | None = None
    last_seen_at: int | None = None
    known: Known = field(default_factory=dict)
    #: uid → entry (None: gone) changed since the last save: what the journal line holds.
    changes: dict[str, list[str | None] | None] = field(default_factory=dict, compare=False)

    def put(self, uid: str, rv: str | None, namespace: str | None, name: str | None) -> None:
        entry = [rv, namespace, name]
        self.known[uid] = self.changes[uid] = entry

    def pop(self, uid: str) -> list[str | None] | None:
        entry = self.known.pop(uid, None)
        if entry is not None:
            self.changes[uid] = None
        return entry

    def take(self, *, snapshot: bool) -> Taken:
        """This checkpoint as of now, to be saved later: its changes since the last save
        (they start afresh), and with ``snapshot`` a copy of the known map."""
        taken = Taken(self.resource_version, self.last_seen_at, self.changes,
                      dict(self.known) if snapshot else None)
        self.changes = {}
        return taken


@dataclass(frozen=True)
class Taken:
    """A checkpoint as of one point, saved once its records are durable
    (``recorder.checkpointer``): the recorder has gone on by then. Entries of the known map
    are replaced, never changed in place, so a copy of the map is the map as it was."""
    resource_version: str | None
    last_seen_at: int | None
    changes: dict[str, list[str | None] | None]
    known: Known | None  # the snapshot to write, or None: a journal line


class CheckpointStore:
    """Checkpoints of one recording destination; ``scope`` names it (cluster, server and
    where records go), so a state directory reused for another destination is not trusted."""

    def __init__(self, directory: str, scope: str) -> None:
        self.directory, self.scope = directory, scope
        self._journals: dict[str, _Journal] = {}
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise CheckpointError(f"cannot create state directory {directory}: {exc}") from exc

    def path(self, key: str) -> str:
        return os.path.join(self.directory, f"{key}.checkpoint.json")

    def journal_path(self, key: str) -> str:
        return os.path.join(self.directory, f"{key}.journal.jsonl")

    def load(self, key: str) -> Checkpoint | None:
        try:
            with open(self.path(key), "rb") as fh:
                doc = orjson.loads(fh.read())
        except FileNotFoundError:
            return None
        except (OSError, orjson.JSONDecodeError) as exc:
            log.error("checkpoint %s is unreadable (%s); starting that watch afresh", self.path(key), exc)
            return None
        if doc.get("format") != FORMAT or doc.get("scope") != self.scope:
            log.warning("checkpoint %s belongs to %r, not %r; ignoring it",
                        self.path(key), doc.get("scope"), self.scope)
            return None
        checkpoint = Checkpoint(doc.get("resourceVersion"), doc.get("lastSeenAt"), doc.get("known") or {})
        self._replay(key, doc.get("generation", 0), checkpoint)
        return checkpoint

    def save(self, key: str, checkpoint: Checkpoint) -> None:
        """A journal line with the changes since the last save, or a new snapshot (the first
        save of this process, and when the journal has outgrown the known map)."""
        self.save_taken(key, checkpoint.take(snapshot=self.snapshot_due(key)))

    def snapshot_due(self, key: str) -> bool:
        journal = self._journals.get(key)
        return journal is None or journal.size > max(COMPACT_MIN_BYTES, journal.snapshot_size)

    def save_taken(self, key: str, taken: Taken) -> None:
        """``taken`` saved: its snapshot, else its journal line (``snapshot_due`` said which
        when it was taken)."""
        if taken.known is not None:
            self._snapshot(key, taken.resource_version, taken.last_seen_at, taken.known)
        else:
            self._append(key, taken)

    def _append(self, key: str, taken: Taken) -> None:
        journal = self._journals[key]
        line = orjson.dumps({"generation": journal.generation,
                             "resourceVersion": taken.resource_version,
                             "lastSeenAt": taken.last_seen_at,
                             "changes": taken.changes}) + b"\n"
        _append_synced(self.journal_path(key), line)
        journal.size += len(line)

    def _snapshot(self, key: str, resource_version: str | None, last_seen_at: int | None,
                  known: Known) -> None:
        previous = self._journals.get(key)
        generation = (previous.generation if previous else time.time_ns()) + 1
        doc = {"format": FORMAT, "scope": self.scope, "generation": generation,
               "resourceVersion": resource_version, "lastSeenAt": last_seen_at, "known": known}
        data = orjson.dumps(doc)
        write_atomically(self.path(key), data)
        try:
            os.truncate(self.journal_path(key), 0)  # its lines name an older generation anyway
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise CheckpointError(f"cannot truncate {self.journal_path(key)}: {exc}") from exc
        self._journals[key] = _Journal(generation, len(data))

    def _replay(self, key: str, generation: int, checkpoint: Checkpoint) -> None:
        try:
            with open(self.journal_path(key), "rb") as fh:
                lines = fh.read().splitlines()
        except FileNotFoundError:
            return
        except OSError as exc:
            log.error("checkpoint journal %s is unreadable (%s); using the snapshot alone",
                      self.journal_path(key), exc)
            return
        for number, raw in enumerate(lines, 1):
            try:
                line = orjson.loads(raw)
            except orjson.JSONDecodeError:
                if number < len(lines):
                    log.error("checkpoint journal %s: line %d is damaged; using the state before it",
                              self.journal_path(key), number)
                return  # a torn last line is a save that did not complete
            if line.get("generation") != generation:
                continue
            checkpoint.resource_version = line.get("resourceVersion")
            checkpoint.last_seen_at = line.get("lastSeenAt")
            for uid, entry in (line.get("changes") or {}).items():
                if entry is None:
                    checkpoint.known.pop(uid, None)
                else:
                    checkpoint.known[uid] = entry


@dataclass
class _Journal:
    generation: int
    snapshot_size: int
    size: int = 0


def _append_synced(path: str, data: bytes) -> None:
    try:
        with open(path, "ab") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise CheckpointError(f"cannot write checkpoint journal {path}: {exc}") from exc


def write_atomically(path: str, data: bytes) -> None:
    temp = f"{path}.tmp"
    try:
        with open(temp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
        fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise CheckpointError(f"cannot write checkpoint {path}: {exc}") from exc
