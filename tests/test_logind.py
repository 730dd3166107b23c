"""The logind stand-in (tests/infra/logind.py) answers as systemd-logind does the calls the
kubelet's node shutdown manager makes, here from an independent D-Bus client (jeepney's): its
twin against the real kubelet is tests/data/node/shutdown (its logind.txt). Marked ``node``:
dbus-daemon comes with the real node's packages (compose/node/install.sh)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from jeepney import DBusAddress, HeaderFields, MatchRule, MessageType, Properties, new_method_call
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import DBusConnection, open_dbus_connection

from tests.infra.logind import LOGIND_NAME, LOGIND_PATH, MANAGER, Logind

pytestmark = pytest.mark.node
LOGIND = DBusAddress(LOGIND_PATH, bus_name=LOGIND_NAME, interface=MANAGER)


@pytest.fixture
def logind(tmp_path: Path) -> Iterator[Logind]:
    standin = Logind(tmp_path / "logind", inhibit_delay_max=12)
    standin.start()
    yield standin
    standin.stop()


@pytest.fixture
def client(logind: Logind) -> Iterator[DBusConnection]:
    with open_dbus_connection(logind.address, enable_fds=True) as conn:
        yield conn


def test_a_delay_lock_holds_the_shutdown_until_its_holder_closes_it(logind: Logind, client: DBusConnection) -> None:
    delay = client.send_and_get_reply(Properties(LOGIND).get("InhibitDelayMaxUSec")).body
    assert delay == (("t", 12_000_000),)
    reply = client.send_and_get_reply(new_method_call(LOGIND, "Inhibit", "ssss", (
        "shutdown", "kubelet", "Kubelet needs time to handle node shutdown", "delay")))
    (lock,) = reply.body
    client.send_and_get_reply(message_bus.AddMatch(MatchRule(
        type="signal", interface=MANAGER, member="PrepareForShutdown", path=LOGIND_PATH)))

    logind.shut_down()
    signal = client.receive(timeout=5)
    assert (signal.header.message_type, signal.body) == (MessageType.signal, (True,))
    time.sleep(0.5)  # the stand-in looks at its locks every 0.2 s
    assert not logind.released()
    lock.close()
    deadline = time.monotonic() + 5
    while not logind.released():
        assert time.monotonic() < deadline, logind.log.read_text()
        time.sleep(0.1)


def test_what_it_does_not_serve_is_an_error(client: DBusConnection) -> None:
    reply = client.send_and_get_reply(new_method_call(LOGIND, "PowerOff", "b", (False,)))
    assert (reply.header.message_type, reply.header.fields[HeaderFields.error_name]) == (
        MessageType.error, "org.freedesktop.DBus.Error.UnknownMethod")


def test_stopping_it_leaves_no_socket_or_config(tmp_path: Path) -> None:
    standin = Logind(tmp_path / "logind", inhibit_delay_max=1)
    standin.start()
    processes = [c.process for c in (standin.bus, standin.standin) if c is not None and c.process is not None]
    standin.stop()
    assert [p.poll() is not None for p in processes] == [True, True]
    assert sorted(p.name for p in (tmp_path / "logind").iterdir()) == ["dbus-daemon.log", "logind.log"]
