"""Everything ``ktrace record`` can be told, in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from transports.kafka.settings import KafkaSettings
from schemas.topics import DEFAULT_PREFIX

if TYPE_CHECKING:
    from recorder.informer import InformerSettings

DEFAULT_OUT = "ktrace-log"
DEFAULT_SPOOL_BYTES = 1024 * 1024 * 1024


def _informer_settings() -> InformerSettings:
    """The informer's defaults, imported when settings are made: `ktrace record --help`
    reads this module's defaults without loading the recorder."""
    from recorder.informer import InformerSettings
    return InformerSettings()


@dataclass(frozen=True, kw_only=True)
class RecordSettings:
    kubeconfig: str | None = None
    context: str | None = None
    kinds: tuple[str, ...] = ()  # empty: the default catalogue
    namespaces: tuple[str, ...] = ()  # empty: all namespaces
    kafka: KafkaSettings | None = None
    topic_prefix: str = DEFAULT_PREFIX
    cluster: str | None = None  # default: the context name, else the server's host
    out: str | None = None  # local log directory when no Kafka is given
    retention_bytes: int | None = None  # local log: per topic, whole segments removed
    retention_age_s: float | None = None
    state_dir: str | None = None  # checkpoints (and the spool) live here
    spool_dir: str | None = None  # default: <state_dir>/spool, else a temporary directory
    spool_max_bytes: int = DEFAULT_SPOOL_BYTES
    redact: tuple[str, ...] = ()
    no_redact: bool = False
    typed_facts: bool = False  # also write the records' typed meta/facts (downstream consumers)
    metrics_port: int | None = None
    metrics_host: str = "0.0.0.0"
    duration: float | None = None  # stop after this many seconds
    #: How often what was sent is made durable and checkpointed: a local log's records are
    #: readable by then at the latest (``replay --follow`` sees them), and a restart after a
    #: kill sends again at most this much. 0.5 s: the follow lag's share halved, at no
    #: CPU per event measured (docs/performance.md, "Following").
    flush_interval_s: float = 0.5
    flush_records: int = 5000
    queue_size: int = 10_000
    informer: InformerSettings = field(default_factory=_informer_settings)
