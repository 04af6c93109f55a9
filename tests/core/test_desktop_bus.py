"""The freedesktop notification service on a private session bus (``core.desktop.notify.desktop_bus``):
one Notify per call with the title, the text and the "Open" action; ActionInvoked for one of
ours opens the window, for another's does nothing; a window's name is seen while it is owned;
no bus and no service are errors in a person's words."""

from __future__ import annotations

import threading

import pytest

from core.desktop.notify.desktop_bus import ACTIONS, BusUnavailable, DesktopBus, claim_name, window_name
from tests.session_bus import FakeNotifications, bus_daemon, notifications, private_bus

__all__ = ["bus_daemon", "notifications", "private_bus"]


def test_notify_sends_the_title_text_and_open(notifications: FakeNotifications, private_bus: str) -> None:
    bus = DesktopBus.connect(lambda: None, private_bus)
    try:
        first = bus.notify("Tidemark: needs attention", "1 run needs a decision: backup unknown effect")
    finally:
        bus.close()
    (call,) = notifications.calls
    assert first == call.id
    assert (call.app_name, call.summary, call.body) == (
        "Tidemark",
        "Tidemark: needs attention",
        "1 run needs a decision: backup unknown effect",
    )
    assert call.actions == list(ACTIONS) == ["default", "Open", "open", "Open"]
    assert call.hints["desktop-entry"] == ("s", "io.github.tidemark.Tidemark")


MARKUP_TEXT = '1 run needs a decision: <a href="file:///etc/passwd">x</a><b>y</b>&amp; unknown effect'


@pytest.mark.parametrize(
    ("capabilities", "body"),
    [
        pytest.param(
            ["actions", "body", "body-markup"],
            '1 run needs a decision: &lt;a href="file:///etc/passwd"&gt;x&lt;/a&gt;&lt;b&gt;y&lt;/b&gt;&amp;amp; '
            "unknown effect",
            id="markup_read_escaped",
        ),
        pytest.param(["actions", "body"], MARKUP_TEXT, id="plain_text_as_it_is"),
    ],
)
def test_a_body_with_markup_shows_as_written(
    notifications: FakeNotifications, private_bus: str, capabilities: list[str], body: str
) -> None:
    """Where the service reads markup in a body, ``&<>`` are escaped: no link, no bold, ``&amp;`` as written.
    The summary is plain text by the specification: it goes as it is."""
    notifications.capabilities = capabilities
    bus = DesktopBus.connect(lambda: None, private_bus)
    try:
        bus.notify("<b>title</b>", MARKUP_TEXT)
    finally:
        bus.close()
    (call,) = notifications.calls
    assert (call.summary, call.body) == ("<b>title</b>", body)


@pytest.mark.parametrize(("action", "opens"), [("open", 1), ("default", 1), ("dismissed", 0)])
def test_action_invoked_opens_the_window(
    notifications: FakeNotifications, private_bus: str, action: str, opens: int
) -> None:
    opened: list[str] = []
    marker = threading.Event()

    def on_open() -> None:
        opened.append("window")
        if len(opened) == opens + 1:
            marker.set()

    bus = DesktopBus.connect(on_open, private_bus)
    try:
        ours = bus.notify("t", "x")
        notifications.invoke(ours + 100, "open")  # another program's notification: not ours to open
        notifications.invoke(ours, action)
        notifications.invoke(ours, "open")  # a marker: every signal before it was handled when it is
        assert marker.wait(10)
    finally:
        bus.close()
    assert opened == ["window"] * (opens + 1)


def test_a_window_owns_its_ledgers_name(private_bus: str) -> None:
    name = window_name("/home/ann/.local/share/tidemark/ledger.db")
    assert name.startswith("io.github.tidemark.Tidemark.Ledger_")
    assert window_name("/other.db") != name
    bus = DesktopBus.connect(lambda: None, private_bus)
    try:
        assert not bus.window_running(name)
        claim = claim_name(name, private_bus)
        assert bus.window_running(name)
        with pytest.raises(BusUnavailable, match="another process owns"):
            claim_name(name, private_bus)
        claim.close()
        assert not bus.window_running(name)
    finally:
        bus.close()


def test_no_session_bus_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    with pytest.raises(BusUnavailable, match=r"^no session bus \(DBUS_SESSION_BUS_ADDRESS is not set\)$"):
        DesktopBus.connect(lambda: None)


def test_a_bus_that_is_gone_is_said(tmp_path: object) -> None:
    with pytest.raises(BusUnavailable, match="the session bus cannot be reached"):
        DesktopBus.connect(lambda: None, f"unix:path={tmp_path}/nothing-here")


def test_no_notification_service_is_said(private_bus: str) -> None:
    bus = DesktopBus.connect(lambda: None, private_bus)
    try:
        with pytest.raises(BusUnavailable, match=r"no notification service on the session bus \(.*ServiceUnknown\)"):
            bus.notify("t", "x")
    finally:
        bus.close()
