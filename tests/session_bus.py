"""A private D-Bus session bus for tests, and a fake freedesktop notification service on it.

``private_bus`` starts ``dbus-daemon --session --print-address --nofork`` (skipped, saying
why, where dbus-daemon is missing) and yields its address; ``notifications`` runs a fake
``org.freedesktop.Notifications`` on it that records every ``Notify`` and can answer with
``ActionInvoked`` as a person's click would.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from queue import Empty, Queue
from typing import Any

import pytest
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


@dataclass(frozen=True)
class NotifyCall:
    """One ``Notify`` the fake service received."""

    id: int
    app_name: str
    replaces_id: int
    icon: str
    summary: str
    body: str
    actions: list[str]
    hints: dict[str, Any]
    timeout: int


#: What the fake says it can do: like GNOME's, KDE's, dunst's and mako's, it reads markup in a body.
CAPABILITIES = ("actions", "body", "body-markup")


class FakeNotifications:
    """``org.freedesktop.Notifications`` on ``address``, in a thread; ``calls`` holds every Notify.
    ``capabilities`` is what GetCapabilities answers (a test may change it)."""

    def __init__(self, address: str) -> None:
        self.conn = open_dbus_connection(bus=address)
        reply = self.conn.send_and_get_reply(message_bus.RequestName(SERVICE, 4))
        assert reply.body[0] == 1, reply.body
        self.capabilities = list(CAPABILITIES)
        self.calls: list[NotifyCall] = []
        self._signals: Queue[tuple[int, str]] = Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="fake-notifications", daemon=True)
        self._thread.start()

    def invoke(self, notification_id: int, action: str = "open") -> None:
        """Send ``ActionInvoked`` for ``notification_id``, as when a person clicks "Open"."""
        self._signals.put((notification_id, action))

    def wait_for_calls(self, n: int, limit: float = 30.0) -> list[NotifyCall]:
        deadline = time.monotonic() + limit
        while len(self.calls) < n:
            assert time.monotonic() < deadline, f"{len(self.calls)} Notify calls, expected {n}"
            time.sleep(0.02)
        return list(self.calls)

    def _serve(self) -> None:
        emitter = DBusAddress(PATH, interface=SERVICE)
        while not self._stop.is_set():
            try:
                notification_id, action = self._signals.get_nowait()
            except Empty:
                pass
            else:
                self.conn.send(new_signal(emitter, "ActionInvoked", "us", (notification_id, action)))
            try:
                msg = self.conn.receive(timeout=0.05)
            except TimeoutError:
                continue
            except OSError:  # the bus went away
                return
            if msg.header.message_type is not MessageType.method_call:
                continue
            member = msg.header.fields.get(HeaderFields.member)
            if member == "Notify":
                call = NotifyCall(len(self.calls) + 1, *msg.body)
                self.calls.append(call)
                self.conn.send(new_method_return(msg, "u", (call.id,)))
            elif member == "GetCapabilities":
                self.conn.send(new_method_return(msg, "as", (list(self.capabilities),)))
            elif member == "GetServerInformation":
                self.conn.send(new_method_return(msg, "ssss", ("fake", "tests", "1", "1.2")))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.conn.close()


@pytest.fixture
def bus_daemon() -> Iterator[subprocess.Popen[str]]:
    """A ``dbus-daemon --session`` of this test alone (its address: :func:`private_bus`)."""
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        pytest.skip("dbus-daemon is not installed (Debian package dbus): no private session bus to test against")
    # Its stderr is left out: as an ordinary user it says it cannot raise its file limit.
    proc = subprocess.Popen(
        [daemon, "--session", "--print-address", "--nofork"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


_ADDRESSES: dict[int, str] = {}


@pytest.fixture
def private_bus(bus_daemon: subprocess.Popen[str]) -> str:
    """The address of the test's own session bus."""
    if bus_daemon.pid not in _ADDRESSES:
        assert bus_daemon.stdout is not None
        address = bus_daemon.stdout.readline().strip()
        assert address, "dbus-daemon printed no address"
        _ADDRESSES[bus_daemon.pid] = address
    return _ADDRESSES[bus_daemon.pid]


@pytest.fixture
def notifications(private_bus: str) -> Iterator[FakeNotifications]:
    """A fake notification service on the private bus."""
    fake = FakeNotifications(private_bus)
    try:
        yield fake
    finally:
        fake.close()
