"""``namespace_s``: ``replay -n NS`` of one namespace into a new database, beside the whole
load of the same source in the same run (``replay``, ``replay_local``), for two namespaces
of the workload: an application's (the first clone's: its pods, their nodes) and the node
leases' (``kube-node-lease``, a tenth of the records); and a namespace the recording does
not hold (``FLOOR``): what any namespace costs beyond its records — the load's fixed part
(a new database, the projection refresh) and the reading of what is passed by (the local
log's key indexes, Kafka's fetch of every message and its headers). The issue's target: a
namespace in at most twice its share of the records. ``python -m bench.namespace LOG
[--prefix ktrace]`` measures the same on one local log, with the whole load, outside a
bench run.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.child import cpu_seconds
from bench.logtool import log_parser
from replayer import db
from replayer.record_filter import RecordFilter
from replayer.replay import replay
from transports.kafka.settings import KafkaSettings
from transports.kafka.source import KafkaSource
from transports.locallog.source import LocalLogSource

#: A namespace no workload holds: the floor of every namespace's load.
FLOOR = "ktrace-bench-absent"
#: The namespaces loaded alone, each into a database of its own.
NAMESPACES = ("shop-00001", "kube-node-lease", FLOOR)
#: Each source's phase and the whole load of the same source it is measured beside.
SOURCES = {"local log": ("namespace_local", "replay_local"), "Kafka": ("namespace", "replay")}
TARGET = 2.0


def load(bootstrap: str | None, prefix: str, database: str, log: str | None = None,
         namespaces: tuple[str | None, ...] = NAMESPACES) -> dict[str, Any]:
    """Each of ``namespaces`` loaded alone (None: the whole): its seconds (wall and CPU),
    records loaded, and what the source read (the local log's blocks read and skipped,
    records passed by undecoded; the Kafka messages passed by by their header)."""
    found: dict[str, Any] = {}
    for namespace in namespaces:
        source = (LocalLogSource(log) if bootstrap is None
                  else KafkaSource(KafkaSettings(bootstrap=bootstrap)))
        cpu = cpu_seconds()  # from the database's opening, as the whole load's phase counts
        con = db.open_db(database, rebuild=True)
        began = time.perf_counter()
        summary = replay(source, con, source_name=source.locator, prefix=prefix,
                         keep=RecordFilter(namespace))
        con.close()
        found[namespace or "whole"] = {
            "seconds": time.perf_counter() - began, "cpu_s": cpu_seconds() - cpu,
            "loaded": summary.records, "filtered": summary.stats.filtered, "read": _read(source)}
        source.close()
    return {"events": summary.stats.deliveries, "seconds": sum(
        n["seconds"] for n in found.values()), "namespaces": found}


def _read(source: LocalLogSource | KafkaSource) -> dict[str, int]:
    if isinstance(source, KafkaSource):
        return {"passed_by_header": source.passed_by}
    counts = asdict(source.counts)
    return {name: counts[name] for name in ("blocks_read", "blocks_skipped", "records_passed",
                                            "key_indexes_built")}


def summary(largest: dict[str, Any]) -> dict[str, Any]:
    """Per source and namespace: its time beside the whole load's (wall and CPU), its share
    of the records, and the ratio of the two shares (the target's measure, by CPU: this
    machine's wall times move with its other users)."""
    out: dict[str, Any] = {}
    for source, (phase, whole) in SOURCES.items():
        if phase not in largest or whole not in largest:
            continue
        a = largest[whole]
        for namespace, n in largest[phase]["namespaces"].items():
            record_share = n["loaded"] / max(a["loaded"], 1)
            cpu_share = n["cpu_s"] / a["cpu_s"]
            out[f"{namespace} ({source})"] = {
                "namespace_s": round(n["seconds"], 2), "whole_s": round(a["seconds"], 2),
                "time_share": round(n["seconds"] / a["seconds"], 3),
                "cpu_share": round(cpu_share, 3), "record_share": round(record_share, 4),
                "cpu_share_per_record_share": round(cpu_share / max(record_share, 1e-9), 1)}
    return out


def targets(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"namespace {name}": {"met": n["cpu_share_per_record_share"] <= TARGET,
                                  "value": n["cpu_share_per_record_share"],
                                  "goal": f"<= {TARGET:g}x its share of the records (CPU)"}
            for name, n in found.items() if not name.startswith(FLOOR)}


def lines(found: dict[str, Any]) -> list[str]:
    return [f"namespace {name}: {n['namespace_s']:.2f} s beside the whole load's "
            f"{n['whole_s']:.2f} s ({n['time_share']:.0%} of its time, {n['cpu_share']:.0%} of "
            f"its CPU, {n['record_share']:.2%} of its records)" for name, n in found.items()]


def main(argv: list[str] | None = None) -> int:
    parser = log_parser("bench.namespace", __doc__)
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        found = load(None, opts.prefix, str(Path(folder) / "n.duckdb"), opts.log,
                     (None, *NAMESPACES))["namespaces"]
    whole = found["whole"]
    for name, n in found.items():
        print(f"{name}: {n['loaded']:,} records ({n['loaded'] / whole['loaded']:.2%}) in "
              f"{n['seconds']:.2f} s, {n['cpu_s']:.2f} CPU-s ({n['cpu_s'] / whole['cpu_s']:.1%} "
              f"of the whole load's); read {n['read']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
