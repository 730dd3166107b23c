"""A real single-node Apache Kafka (KRaft, broker and controller in one JVM) without Docker.

The jars come from Maven Central through ``compose/kafka/install.sh``. Tests, benchmarks and CI
start one with :class:`LocalKafkaBroker`, or from a shell::

    python -m tests.infra.kafka start --dir /tmp/kafka   # prints KTRACE_TEST_KAFKA=127.0.0.1:<port>
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from kafka import KafkaAdminClient
from kafka.errors import KafkaError

from tests.infra.service import LocalService, free_loopback_ports, serve, tail

DEFAULT_VERSION = "4.4.0"
INSTALL_SCRIPT = Path(__file__).resolve().parents[2] / "compose" / "kafka" / "install.sh"


class KafkaBrokerError(RuntimeError):
    """The broker could not be installed or started."""


def install_kafka(version: str = DEFAULT_VERSION) -> Path:
    """Run install.sh (a no-op once installed) and return the directory of the broker's jars."""
    result = subprocess.run(
        ["bash", str(INSTALL_SCRIPT)],
        env={**os.environ, "KAFKA_VERSION": version},
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise KafkaBrokerError(f"{INSTALL_SCRIPT} failed ({result.returncode}):\n{tail(result.stderr)}")
    return Path(result.stdout.strip().splitlines()[-1])


class LocalKafkaBroker(LocalService):
    """One KRaft broker+controller process on two loopback ports, with its data in ``work_dir``.

    The ports are picked on the first start and kept, so ``stop()`` then ``start()`` (or
    ``restart()``) brings back the same broker, with its data, at the same address: a real outage.
    """

    def __init__(
        self, *, work_dir: Path | str, version: str = DEFAULT_VERSION, start_timeout: float = 120.0,
        cpus: set[int] | None = None,
    ) -> None:
        """``cpus``: the CPUs the broker's threads may run on (every one when None)."""
        self.work_dir = Path(work_dir).resolve()
        self.version = version
        self.start_timeout = start_timeout
        self.cpus = cpus
        self._ports: tuple[int, int] | None = None  # (broker, controller)
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        """``127.0.0.1:<port>`` of the PLAINTEXT listener, for ``bootstrap_servers``."""
        if self._ports is None:
            raise KafkaBrokerError("the broker has not been started yet")
        return f"127.0.0.1:{self._ports[0]}"

    @property
    def log_file(self) -> Path:
        return self._logs_dir / "server.log"

    def start(self) -> None:
        """Install if needed, format the storage on first use, launch, and wait until it answers."""
        if self.running:
            raise KafkaBrokerError(f"the broker at {self.bootstrap} is already running")
        libs = install_kafka(self.version)
        if self._ports is None:
            broker_port, controller_port = free_loopback_ports(2)
            self._ports = (broker_port, controller_port)
        self._write_configs()
        if not (self._data_dir / "meta.properties").exists():
            self._format_storage(libs)
        self._process = self._launch(libs)
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def restart(self) -> None:
        """Stop and start again: same ports, same log dir, so committed data survives."""
        self.stop()
        self.start()

    @property
    def _data_dir(self) -> Path:
        return self.work_dir / "data"

    @property
    def _logs_dir(self) -> Path:
        return self.work_dir / "logs"

    @property
    def _properties_file(self) -> Path:
        return self.work_dir / "server.properties"

    @property
    def _log4j_file(self) -> Path:
        return self.work_dir / "log4j2.yaml"

    @property
    def _console_file(self) -> Path:
        return self._logs_dir / "console.log"

    def _write_configs(self) -> None:
        assert self._ports is not None
        self._logs_dir.mkdir(parents=True, exist_ok=True)
        self._properties_file.write_text(_server_properties(*self._ports, data_dir=self._data_dir))
        self._log4j_file.write_text(LOG4J2_YAML)

    def _java(self, libs: Path, main_class: str, *args: str) -> list[str]:
        return [
            "java",
            "-Xms512m",
            "-Xmx512m",
            f"-Dlog4j2.configurationFile={self._log4j_file}",
            f"-Dkafka.logs.dir={self._logs_dir}",
            "-cp",
            f"{libs}/*",
            main_class,
            *args,
        ]

    def _format_storage(self, libs: Path) -> None:
        command = self._java(
            libs, "kafka.tools.StorageTool", "format", "--standalone",
            "-t", _random_cluster_id(), "-c", str(self._properties_file),
        )  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            output = tail(result.stdout + result.stderr)
            raise KafkaBrokerError(f"formatting {self._data_dir} failed:\n{output}")

    def _launch(self, libs: Path) -> subprocess.Popen[bytes]:
        # stdout/stderr only carry what happens before log4j is up (e.g. a JVM that cannot start).
        with self._console_file.open("ab") as console:
            return subprocess.Popen(
                self._java(libs, "kafka.Kafka", str(self._properties_file)),
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                cwd=self.work_dir,
                # set in the child before the JVM starts, so every thread it makes inherits it
                preexec_fn=None if self.cpus is None else lambda: os.sched_setaffinity(0, self.cpus),
            )

    def _wait_until_ready(self) -> None:
        """Ready means an admin client lists topics: what every test's first call needs."""
        assert self._process is not None and self._ports is not None
        deadline = time.monotonic() + self.start_timeout
        problem = f"did not open {self.bootstrap}"
        while time.monotonic() < deadline:
            if (code := self._process.poll()) is not None:
                raise self._failure(f"exited with code {code} while starting")
            # A KafkaAdminClient that fails to bootstrap leaves its IO thread behind: only try
            # once the port accepts connections.
            if not _port_accepts(self._ports[0]):
                time.sleep(0.2)
                continue
            try:
                _admin_lists_topics(self.bootstrap, timeout_s=min(5.0, max(1.0, deadline - time.monotonic())))
                return
            except KafkaError as error:
                problem = f"did not answer an admin client ({error!r})"
        raise self._failure(f"{problem} within {self.start_timeout:.0f} s")

    def _failure(self, what: str) -> KafkaBrokerError:
        logs = "\n".join(
            f"--- last lines of {path} ---\n{tail(path.read_text(errors='replace'))}"
            for path in (self.log_file, self._console_file)
            if path.exists() and path.stat().st_size
        )
        return KafkaBrokerError(f"Kafka {self.version} broker at {self.bootstrap} {what}\n{logs}")


def _server_properties(port: int, controller_port: int, *, data_dir: Path) -> str:
    listeners = f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}"
    return f"""\
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:{controller_port}
listeners={listeners}
advertised.listeners={listeners}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs={data_dir}
# One node: the internal topics cannot have more than one replica.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# A consumer group's first join would otherwise wait 3 s for more members.
group.initial.rebalance.delay.ms=0
"""


LOG4J2_YAML = """\
Configuration:
  Appenders:
    File:
      name: server
      fileName: "${sys:kafka.logs.dir}/server.log"
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        ref: server
"""


def _random_cluster_id() -> str:
    # What `kafka-storage random-uuid` prints (Uuid.randomUuid), without starting a JVM for it.
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):  # Kafka avoids ids that look like a command-line flag
            return cluster_id


def _port_accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def _admin_lists_topics(bootstrap: str, *, timeout_s: float) -> None:
    timeout_ms = int(timeout_s * 1000)
    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap, bootstrap_timeout_ms=timeout_ms, request_timeout_ms=timeout_ms
    )
    try:
        admin.list_topics()
    finally:
        admin.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.infra.kafka", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("start", help="start a broker; stay in the foreground until SIGTERM/SIGINT")
    start.add_argument("--dir", type=Path, required=True, help="work dir for config, data and logs")
    start.add_argument("--version", default=DEFAULT_VERSION, help=f"default {DEFAULT_VERSION}")
    args = parser.parse_args(argv)
    try:
        broker = LocalKafkaBroker(work_dir=args.dir, version=args.version)
        return serve(broker, lambda: f"KTRACE_TEST_KAFKA={broker.bootstrap}", broker.log_file)
    except KafkaBrokerError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
