"""A real Confluent-compatible Schema Registry (Apicurio Registry, in-memory storage) without
Docker. The distribution comes from Maven Central through ``compose/registry/install.sh``.
Tests start one with :class:`LocalRegistry`, or from a shell::

    python -m tests.infra.registry start --dir /tmp/registry   # prints KTRACE_TEST_REGISTRY=URL
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.infra.service import LocalService, free_loopback_ports, serve, tail

DEFAULT_VERSION = "3.3.3"
INSTALL_SCRIPT = Path(__file__).resolve().parents[2] / "compose" / "registry" / "install.sh"
#: Apicurio 3.x needs Java 21 or later; these are looked for when ``java`` on PATH is older.
JVM_DIRS = Path("/usr/lib/jvm")
MIN_JAVA = 21
CCOMPAT = "/apis/ccompat/v7"


class RegistryError(RuntimeError):
    """The registry could not be installed or started."""


def install_registry(version: str = DEFAULT_VERSION) -> Path:
    """Run install.sh (a no-op once installed) and return the directory of quarkus-run.jar."""
    result = subprocess.run(["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True,
                            env={**os.environ, "APICURIO_VERSION": version})
    if result.returncode != 0:
        raise RegistryError(f"{INSTALL_SCRIPT} failed ({result.returncode}):\n{tail(result.stderr)}")
    return Path(result.stdout.strip().splitlines()[-1])


def java_for(minimum: int = MIN_JAVA) -> str:
    """A ``java`` of at least ``minimum``: $JAVA_HOME's, PATH's, or the newest under /usr/lib/jvm."""
    candidates = [Path(os.environ["JAVA_HOME"]) / "bin" / "java"] if "JAVA_HOME" in os.environ else []
    candidates.append(Path("java"))
    if JVM_DIRS.is_dir():
        candidates += sorted(JVM_DIRS.glob("*/bin/java"), reverse=True)
    for java in candidates:
        if _java_major(str(java)) >= minimum:
            return str(java)
    raise RegistryError(f"no Java {minimum}+ found (JAVA_HOME, PATH, {JVM_DIRS})")


def _java_major(java: str) -> int:
    try:
        out = subprocess.run([java, "-XshowSettings:properties", "-version"],
                             capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return 0
    for line in out.splitlines():
        if "java.specification.version" in line:  # "17", "25", or "1.8" before Java 9
            return int(line.split("=")[1].strip().removeprefix("1.").split(".")[0])
    return 0


class LocalRegistry(LocalService):
    """One Apicurio Registry on a loopback port, global compatibility BACKWARD (Confluent's
    default; Apicurio's own is NONE). ``stop()`` then ``start()`` brings it back at the same
    URL, empty (in-memory storage)."""

    def __init__(self, *, work_dir: Path | str, version: str = DEFAULT_VERSION,
                 start_timeout: float = 120.0) -> None:
        self.work_dir = Path(work_dir).resolve()
        self.version = version
        self.start_timeout = start_timeout
        self._ports: tuple[int, ...] | None = None  # (API, management)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The Confluent-compatible API's base URL."""
        if self._ports is None:
            raise RegistryError("the registry has not been started yet")
        return f"http://127.0.0.1:{self._ports[0]}{CCOMPAT}"

    @property
    def log_file(self) -> Path:
        return self.work_dir / "registry.log"

    def start(self) -> None:
        if self.running:
            raise RegistryError(f"the registry at {self.url} is already running")
        app = install_registry(self.version)
        if self._ports is None:
            self._ports = free_loopback_ports(2)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        # The management interface (health, metrics) would bind 0.0.0.0:9000 by default.
        command = [java_for(), "-Xmx384m", f"-Dquarkus.http.port={self._ports[0]}",
                   "-Dquarkus.http.host=127.0.0.1", f"-Dquarkus.management.port={self._ports[1]}",
                   "-Dquarkus.management.host=127.0.0.1", "-jar", str(app / "quarkus-run.jar")]
        with self.log_file.open("ab") as log:
            self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT, cwd=self.work_dir)
        try:
            self._wait_until_ready()
            self.request("PUT", "/config", {"compatibility": "BACKWARD"})
        except BaseException:
            self.stop()
            raise

    def request(self, method: str, path: str, body: dict | None = None) -> dict | list:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as response:
            return json.loads(response.read())

    def _wait_until_ready(self) -> None:
        """Ready when the Confluent API lists subjects: what every test's first call needs."""
        assert self._process is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if (code := self._process.poll()) is not None:
                raise RegistryError(f"Apicurio {self.version} exited with code {code} while "
                                    f"starting:\n{tail(self.log_file.read_text(errors='replace'))}")
            try:
                self.request("GET", "/subjects")
                return
            except (urllib.error.URLError, OSError, ValueError):
                time.sleep(0.3)
        raise RegistryError(f"Apicurio {self.version} at {self.url} did not answer within "
                            f"{self.start_timeout:.0f} s:\n{tail(self.log_file.read_text(errors='replace'))}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.infra.registry",
                                     description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("start", help="start a registry; stay in the foreground until SIGTERM/SIGINT")
    start.add_argument("--dir", type=Path, required=True, help="work dir for its log")
    start.add_argument("--version", default=DEFAULT_VERSION, help=f"default {DEFAULT_VERSION}")
    args = parser.parse_args(argv)
    try:
        registry = LocalRegistry(work_dir=args.dir, version=args.version)
        return serve(registry, lambda: f"KTRACE_TEST_REGISTRY={registry.url}", registry.log_file)
    except RegistryError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
