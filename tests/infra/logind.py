"""The operating system's side of the kubelet's graceful node shutdown: a private system bus
and a stand-in for systemd-logind on it.

These machines run no systemd. The kubelet's node shutdown manager (shutdownGracePeriod > 0,
``pkg/kubelet/nodeshutdown`` at v1.37.2) speaks to logind over the *system* D-Bus, which godbus
finds through ``DBUS_SYSTEM_BUS_ADDRESS``. What it uses of logind, and all this stand-in answers
on ``org.freedesktop.login1`` (object ``/org/freedesktop/login1``):

- the Manager's property ``InhibitDelayMaxUSec`` (Properties.Get), the longest a delay lock may
  hold a shutdown back. The stand-in reports what it is given, as an administrator's
  logind.conf ``InhibitDelayMaxSec`` would: RealNode gives the kubelet's own grace period, so
  the kubelet never writes its override to /etc/systemd/logind.conf.d/ (it does only when the
  property is shorter than its period) nor asks systemd to reload logind;
- ``Inhibit(what, who, why, mode)``: the kubelet's ``delay`` lock on ``shutdown``; the answer
  is a file descriptor, the write end of a pipe; the lock is released when every copy of it is
  closed, as logind's;
- the signal ``PrepareForShutdown(true)``, sent on SIGUSR1, as logind sends it when a shutdown
  is asked for (``systemctl poweroff``). The kubelet then stops its pods and closes its lock.

The stand-in powers nothing off: once the locks are released it logs that logind would now
let the shutdown proceed, and the node goes on until the test stops it. Every call, the signal
and each release are logged, with UTC times, to its log file.

    python -m tests.infra.logind serve --bus unix:path=SOCKET --inhibit-delay-max SECONDS
"""

from __future__ import annotations

import argparse
import datetime
import os
import select
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jeepney import DBusAddress, HeaderFields, Message, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import DBusConnection, open_dbus_connection

from tests.infra.k8s import Component, ControlPlaneError, wait_for

LOGIND_NAME = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"
PROPERTIES = "org.freedesktop.DBus.Properties"
# What the stand-in logs once every delay lock is gone after PrepareForShutdown(true).
RELEASED = "every delay lock released"
READY = "serving org.freedesktop.login1"
# A bus that lets root (everything of the node runs as root) own logind's name and talk.
BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="root"/>
    <allow own="{name}"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""


class Logind:
    """A dbus-daemon on a socket in WORK_DIR and the logind stand-in on it, for one node."""

    def __init__(self, work_dir: Path, *, inhibit_delay_max: float) -> None:
        self.work_dir = Path(work_dir)
        self.socket = self.work_dir / "system_bus_socket"
        self.config = self.work_dir / "system-bus.conf"
        self.inhibit_delay_max = inhibit_delay_max
        self.bus: Component | None = None
        self.standin: Component | None = None

    @property
    def address(self) -> str:
        """The kubelet's DBUS_SYSTEM_BUS_ADDRESS."""
        return f"unix:path={self.socket}"

    @property
    def log(self) -> Path:
        return self.work_dir / "logind.log"

    def start(self) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.config.write_text(BUS_CONFIG.format(socket=self.socket, name=LOGIND_NAME))
        self.log.write_text("")  # _serving and released() read this start's lines only
        self.bus = Component("dbus-daemon", ["dbus-daemon", f"--config-file={self.config}", "--nofork",
                                             "--nopidfile", "--nosyslog"],
                             self.work_dir / "dbus-daemon.log", ready=self.socket.exists)
        self.bus.start()
        wait_for(self.bus, "the system bus", self.socket.exists, timeout=10)
        self.standin = Component("logind stand-in", [
            sys.executable, "-m", "tests.infra.logind", "serve", "--bus", self.address,
            "--inhibit-delay-max", str(self.inhibit_delay_max)], self.log, ready=self._serving,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
        self.standin.start()
        wait_for(self.standin, "the logind stand-in", self._serving, timeout=10)

    def shut_down(self) -> None:
        """Ask for a shutdown: the stand-in sends PrepareForShutdown(true)."""
        if self.standin is None or self.standin.process is None:
            raise ControlPlaneError("the logind stand-in is not running")
        self.standin.check_alive()
        os.kill(self.standin.process.pid, signal.SIGUSR1)

    def _serving(self) -> bool:
        return self.log.exists() and READY in self.log.read_text()

    def released(self) -> bool:
        """Whether every delay lock was released after the shutdown was asked for."""
        return RELEASED in self.log.read_text()

    def stop(self) -> None:
        for component in (self.standin, self.bus):
            if component is not None:
                component.stop(timeout=10)
        for path in (self.socket, self.config):
            path.unlink(missing_ok=True)


# --- the stand-in itself ------------------------------------------------------


@dataclass
class DelayLock:
    who: str
    why: str
    read_end: int  # readable (end of file) once the holder's write end is closed


def serve(address: str, inhibit_delay_max: float) -> None:
    shutdown_asked = False
    pending = _SignalFlag(signal.SIGUSR1)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    conn = open_dbus_connection(address, enable_fds=True)
    conn.send_and_get_reply(message_bus.RequestName(LOGIND_NAME))
    locks: list[DelayLock] = []
    said(f"{READY} as {conn.unique_name}; InhibitDelayMaxUSec {int(inhibit_delay_max * 1e6)}")
    while True:
        if pending.take() and not shutdown_asked:
            shutdown_asked = True
            conn.send(new_signal(DBusAddress(LOGIND_PATH, interface=MANAGER), "PrepareForShutdown", "b", (True,)))
            said(f"PrepareForShutdown(true) sent; {len(locks)} delay lock(s) held")
        for lock in _released(locks):
            locks.remove(lock)
            said(f"delay lock of {lock.who!r} released")
            if shutdown_asked and not locks:
                said(f"{RELEASED}: logind would let the shutdown proceed now")
        try:
            message = conn.receive(timeout=0.2)
        except TimeoutError:
            continue
        if message.header.message_type is MessageType.method_call:
            answer(conn, message, locks, inhibit_delay_max)


class _SignalFlag:
    """Set by a signal's handler, taken by the loop (signals interrupt only the main thread)."""

    def __init__(self, signum: int) -> None:
        self.set = False
        signal.signal(signum, self._handle)

    def _handle(self, *_: object) -> None:
        self.set = True

    def take(self) -> bool:
        was, self.set = self.set, False
        return was


def answer(conn: DBusConnection, call: Message, locks: list[DelayLock], inhibit_delay_max: float) -> None:
    fields = call.header.fields
    interface, member = fields.get(HeaderFields.interface), fields.get(HeaderFields.member)
    if fields.get(HeaderFields.path) != LOGIND_PATH:
        conn.send(new_error(call, "org.freedesktop.DBus.Error.UnknownObject"))
    elif (interface, member) == (PROPERTIES, "Get") and call.body == (MANAGER, "InhibitDelayMaxUSec"):
        said(f"Get InhibitDelayMaxUSec from {fields.get(HeaderFields.sender)}")
        conn.send(new_method_return(call, "v", (("t", int(inhibit_delay_max * 1e6)),)))
    elif (interface, member) == (MANAGER, "Inhibit") and call.body[3] == "delay":
        what, who, why, mode = call.body
        read_end, write_end = os.pipe()
        locks.append(DelayLock(who, why, read_end))
        said(f"Inhibit({what!r}, {who!r}, {why!r}, {mode!r}) from {fields.get(HeaderFields.sender)}")
        conn.send(new_method_return(call, "h", (write_end,)))
        os.close(write_end)  # the holder's copy is now the only one
    else:
        said(f"not served: {interface}.{member} {call.body!r}")
        conn.send(new_error(call, "org.freedesktop.DBus.Error.UnknownMethod", "s",
                            (f"the logind stand-in serves no {interface}.{member}",)))


def _released(locks: list[DelayLock]) -> list[DelayLock]:
    if not locks:
        return []
    readable, _, _ = select.select([lock.read_end for lock in locks], [], [], 0)
    gone = [lock for lock in locks if lock.read_end in readable]
    for lock in gone:
        os.close(lock.read_end)
    return gone


def said(line: str) -> None:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    print(f"{now} {line}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.infra.logind", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="answer as org.freedesktop.login1 until SIGTERM")
    run.add_argument("--bus", required=True, help="the bus address (unix:path=…)")
    run.add_argument("--inhibit-delay-max", type=float, required=True, help="InhibitDelayMaxUSec, in seconds")
    args = parser.parse_args(argv)
    serve(args.bus, args.inhibit_delay_max)
    return 0


if __name__ == "__main__":
    sys.exit(main())
