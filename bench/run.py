"""One benchmark run: per size, the recorder path and the replayer beside their baselines,
each phase in its own process; then the analyses on the largest database."""

from __future__ import annotations

import os
import secrets
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import child, follow, machine, workload
from bench.broker import kafka_bootstrap
from bench.recorder_path import LIVE_TARGET

#: The phases measured per size, in the order they run: each path beside its baseline.
#: ``recorder_local`` writes the local log ``replay_local`` reads.
PATHS = ("recorder_baseline", "recorder", "recorder_local", "replay", "window", "namespace",
         "replay_stored", "replay_local", "window_local", "namespace_local", "replay_baseline")
#: What ``--paths`` chooses from: the recorder's phases, or the replayer's (and the analyses).
PATH_GROUPS = {"recorder": ("recorder_baseline", "recorder", "recorder_local"),
               "replay": ("recorder_local", "replay", "window", "namespace", "replay_stored",
                          "replay_local", "window_local", "namespace_local", "replay_baseline")}
ONE_CORE = frozenset({"recorder_baseline", "recorder", "recorder_registry", "recorder_live",
                      "recorder_local"})
#: When no size reached LIVE_TARGET live objects, the recorder alone on this many events of
#: a workload whose Events never expire (≈ events / 4 live), stopped at LIVE_TARGET: RSS
#: measured there, not extrapolated.
LIVE_EVENTS = 450_000
#: Measured too when a Schema Registry is given: the recorder path in the Confluent framing.
REGISTRY_PATH = "recorder_registry"
#: Outputs no later phase reads: removed at once, so a 1M run fits on disk.
THROWAWAY = {"recorder_baseline": "out", "replay_baseline": "database",
             "replay_stored": "database", "replay_local": "database", "window": "database",
             "window_local": "database", "namespace": "database", "namespace_local": "database"}
#: The analyses are timed on every database at least this large (their growth).
QUERIES_FROM = 100_000
#: The seed's first clone, asked for by the timeline query.
TIMELINE = {"deployment": "frontend-c00001", "namespace": "shop-00001"}
#: Events recorded into the broker, unmeasured, before any phase: a broker just started (a
#: fresh JVM) answers its first sessions slowly — 2.4 s to a session's first acknowledged
#: flush, 1.0 s once warm, and flushes behind twice as long — which the recorder would wait out.
WARM_UP_EVENTS = 20_000
#: The recorder and its baseline run in turn this many times at each size (``--rounds``):
#: this machine's speed drifts by ±10 % within minutes, enough to move one pair's ratio
#: from 1.6x to 2.2x. Each path's figures are its median round; every round is reported.
ROUNDS = 3
PAIRED = ("recorder_baseline", "recorder")


@dataclass(frozen=True)
class Options:
    sizes: tuple[int, ...]
    work: Path
    kafka: str | None = None
    profile_size: int | None = None  # profile both paths on a workload of this size
    schema_registry: str | None = None  # also measure the recorder with the Confluent framing
    groups: tuple[str, ...] = tuple(PATH_GROUPS)  # which of PATH_GROUPS to run
    rounds: int = ROUNDS

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(p for p in PATHS if any(p in PATH_GROUPS[g] for g in self.groups))


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Run:
    def __init__(self, options: Options) -> None:
        self.options, self.work = options, options.work
        self.templates = workload.seed_templates()
        self.cpu = machine.pinned_cpu()
        self.token = secrets.token_hex(3)  # fresh topics on a reused broker

    def execute(self) -> dict[str, Any]:
        info = machine.describe()
        with kafka_bootstrap(self.work / "kafka", self.options.kafka,
                             off_cpu=self.cpu) as (bootstrap, source):
            progress(f"kafka: {bootstrap} ({source})")
            if {"recorder", "replay"} & set(self.options.paths):
                self.warm_up(bootstrap)
            growth = {size: self.measure(size, bootstrap) for size in self.options.sizes}
            largest = max(self.options.sizes)
            queries = None
            if "replay" in self.options.paths:
                queries = growth[largest].get("queries") or child.run(
                    "queries", {"database": str(self.database(largest)), **TIMELINE})
            following = self.follow_lag(bootstrap) if "replay" in self.options.paths else None
            live = self.live(growth, bootstrap) if "recorder" in self.options.paths else None
            profiles = self.profile(bootstrap) if self.options.profile_size else {}
        info["load_at_end"] = os.getloadavg()[0]
        info["kafka"] = source
        return {"machine": info, "growth": growth, "queries": queries, "profiles": profiles,
                "live": live, "pinned_cpu": self.cpu, "follow": following}

    def follow_lag(self, bootstrap: str) -> dict[str, Any]:
        """The follow lag at ``follow.RATE`` from each source, on the largest workload."""
        events = workload.cached(self.work, f"workload-{max(self.options.sizes)}")
        found = {}
        for source, args in follow.phase_args(self.work, str(events), bootstrap,
                                              self.token).items():
            progress(f"follow at {follow.RATE:,.0f} events/s from the {source}")
            found[source] = child.run("follow", args)
        return found

    def warm_up(self, bootstrap: str) -> None:
        events = workload.build(workload.cached(self.work, f"workload-{WARM_UP_EVENTS}"), WARM_UP_EVENTS,
                                self.templates)
        progress(f"{WARM_UP_EVENTS:>9,} events: recorder, warming the broker up (not measured)")
        args = self.arguments("recorder", WARM_UP_EVENTS, events, bootstrap,
                              prefix=f"bench-warm-up-{self.token}")
        child.run("recorder", args, cpu=self.cpu)

    def live(self, growth: dict[int, dict[str, Any]], bootstrap: str) -> dict[str, Any] | None:
        """The recorder at LIVE_TARGET live objects: from a size that passed it, else from a
        run of its own (LIVE_EVENTS events, stopped there)."""
        for size in sorted(growth):
            if growth[size]["recorder"]["at_live_target"] is not None:
                return {"source": f"the {size:,}-event run", **growth[size]["recorder"]["at_live_target"]}
        # Events kept: with their hourly expiry live objects reach LIVE_TARGET only after ~2M
        events = workload.build(workload.cached(self.work, f"workload-live-{LIVE_EVENTS}"),
                                LIVE_EVENTS, self.templates, expiring=False)
        progress(f"{LIVE_EVENTS:,} events: recorder until {LIVE_TARGET:,} live objects")
        args = {**self.arguments("recorder", LIVE_EVENTS, events, bootstrap), "stop_at_live": True}
        result = child.run("recorder_live", args, cpu=self.cpu)
        if result["at_live_target"] is None:
            return None
        return {"source": "a run of its own", **result["at_live_target"], "cpu_marks": result["cpu_marks"]}

    def database(self, size: int) -> Path:
        return self.work / f"replay-{size}.duckdb"

    def local_log(self, size: int) -> Path:
        return self.work / f"log-{size}"

    def measure(self, size: int, bootstrap: str) -> dict[str, dict[str, Any]]:
        events = workload.build(workload.cached(self.work, f"workload-{size}"), size, self.templates)
        results = {}
        with_registry = self.options.schema_registry and "recorder" in self.options.paths
        for path in self.options.paths + ((REGISTRY_PATH,) if with_registry else ()):
            if path in PAIRED:
                if path == PAIRED[0]:
                    results |= self.paired(size, events, bootstrap)
                continue
            progress(f"{size:>9,} events: {path}")
            args = self.arguments(path, size, events, bootstrap)
            if path == "recorder_local":  # a fresh log: a reused work directory's would grow
                shutil.rmtree(args["out"], ignore_errors=True)
            results[path] = child.run(path, args, cpu=self.cpu if path in ONE_CORE else None)
            self.clean_after(path, args)
        shutil.rmtree(self.local_log(size), ignore_errors=True)
        if size >= QUERIES_FROM and "replay" in self.options.paths:  # how the analyses grow with the recording
            progress(f"{size:>9,} events: queries")
            results["queries"] = child.run("queries", {"database": str(self.database(size)),
                                                       **TIMELINE})
        if size != max(self.options.sizes):
            self.database(size).unlink(missing_ok=True)
        return results

    def paired(self, size: int, events: Path, bootstrap: str) -> dict[str, dict[str, Any]]:
        """The recorder and its baseline, ``rounds`` times in turn: each one's median round
        (by time), with every round's events/s (``round_eps``). The first round writes the
        topics the replay phases read."""
        rounds: dict[str, list[dict[str, Any]]] = {path: [] for path in PAIRED}
        for n in range(self.options.rounds):
            for path in PAIRED:
                progress(f"{size:>9,} events: {path} (round {n + 1} of {self.options.rounds})")
                prefix = f"bench-{size}-{self.token}" + (f"-r{n + 1}" if n else "")
                args = self.arguments(path, size, events, bootstrap, prefix)
                rounds[path].append(child.run(path, args, cpu=self.cpu))
                self.clean_after(path, args)
        return {path: {**sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2],
                       "round_eps": [round(r["events"] / r["seconds"]) for r in runs]}
                for path, runs in rounds.items()}

    def arguments(self, path: str, size: int, events: Path, bootstrap: str,
                  prefix: str | None = None) -> dict[str, Any]:
        prefix = prefix or f"bench-{size}-{self.token}"
        return {
            "recorder_baseline": {"workload": str(events), "out": str(self.work / "baseline.jsonl")},
            "recorder": {"workload": str(events), "bootstrap": bootstrap, "prefix": prefix,
                         "state_dir": str(self.work / f"state-{prefix}")},
            REGISTRY_PATH: {"workload": str(events), "bootstrap": bootstrap, "prefix": f"{prefix}-sr",
                            "state_dir": str(self.work / f"state-{prefix}-sr"),
                            "schema_registry": self.options.schema_registry},
            "replay": {"bootstrap": bootstrap, "prefix": prefix, "database": str(self.database(size))},
            "recorder_local": {"workload": str(events), "bootstrap": None, "prefix": prefix,
                               "state_dir": str(self.work / f"state-{prefix}-local"),
                               "out": str(self.local_log(size))},
            "replay_stored": {"bootstrap": bootstrap, "prefix": prefix, "store_objects": True,
                              "database": str(self.work / "stored.duckdb")},
            "replay_local": {"bootstrap": None, "prefix": prefix, "log": str(self.local_log(size)),
                             "database": str(self.work / "local.duckdb")},
            "window": {"bootstrap": bootstrap, "prefix": prefix,
                       "database": str(self.work / "window.duckdb")},
            "window_local": {"bootstrap": None, "prefix": prefix, "log": str(self.local_log(size)),
                             "database": str(self.work / "window-local.duckdb")},
            "namespace": {"bootstrap": bootstrap, "prefix": prefix,
                          "database": str(self.work / "namespace.duckdb")},
            "namespace_local": {"bootstrap": None, "prefix": prefix, "log": str(self.local_log(size)),
                                "database": str(self.work / "namespace-local.duckdb")},
            "replay_baseline": {"workload": str(events), "database": str(self.work / "read_json.duckdb")},
        }[path]

    @staticmethod
    def clean_after(path: str, args: dict[str, Any]) -> None:
        if path in THROWAWAY:
            for name in (args[THROWAWAY[path]], args[THROWAWAY[path]] + ".wal"):
                Path(name).unlink(missing_ok=True)

    def profile(self, bootstrap: str) -> dict[str, Any]:
        size = self.options.profile_size or 0
        events = workload.build(workload.cached(self.work, f"workload-{size}"), size, self.templates)
        prefix = f"bench-profile-{size}-{self.token}"
        found = {}
        # the replay profile reads what the recorder's wrote
        for path in ("recorder", "replay") if "replay" in self.options.paths else ("recorder",):
            progress(f"profiling {path} on {size:,} events")
            args = self.arguments(path, size, events, bootstrap, prefix)
            if path == "replay":
                args["database"] = str(self.work / "profile.duckdb")
            out = self.work / f"profile-{path}"
            result = child.run(path, args, cpu=self.cpu if path in ONE_CORE else None, profile=out)
            found[path] = {"top": result["top"], "report": str(out.with_suffix(".txt"))}
        return found
