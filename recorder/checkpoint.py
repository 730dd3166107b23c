"""Where each watch stopped, so a restart resumes instead of relisting.

One JSON file per watch in ``--state-dir``: the last resourceVersion whose records the sink
confirmed, when it was seen, and the objects known at that point (uid → resourceVersion,
namespace, name) — the state a relist is diffed against when the resourceVersion has expired
meanwhile. Files are replaced atomically (write, fsync, rename, fsync the directory) and
only after the sink confirmed the records they account for.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

import orjson

from schemas.errors import KtraceError

log = logging.getLogger(__name__)

Known = dict[str, list[str | None]]  # uid → [resourceVersion, namespace, name]
FORMAT = 1


class CheckpointError(KtraceError):
    """The state directory cannot be written."""


@dataclass
class Checkpoint:
    resource_version: str | None = None
    last_seen_at: int | None = None
    known: Known = field(default_factory=dict)


class CheckpointStore:
    """Checkpoints of one recording destination; ``scope`` names it (cluster, server and
    where records go), so a state directory reused for another destination is not trusted."""

    def __init__(self, directory: str, scope: str) -> None:
        self.directory, self.scope = directory, scope
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise CheckpointError(f"cannot create state directory {directory}: {exc}") from exc

    def path(self, key: str) -> str:
        return os.path.join(self.directory, f"{key}.checkpoint.json")

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
        return Checkpoint(doc.get("resourceVersion"), doc.get("lastSeenAt"), doc.get("known") or {})

    def save(self, key: str, checkpoint: Checkpoint) -> None:
        doc = {"format": FORMAT, "scope": self.scope, "resourceVersion": checkpoint.resource_version,
               "lastSeenAt": checkpoint.last_seen_at, "known": checkpoint.known}
        write_atomically(self.path(key), orjson.dumps(doc))


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
