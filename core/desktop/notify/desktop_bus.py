"""The freedesktop notification service (``org.freedesktop.Notifications``) on the
session bus, spoken with jeepney; and the name a window owns there.

:class:`DesktopBus` sends one ``Notify`` per notice, with an "Open" action (and
``default``, a click on the notification itself); when the notification service
answers with ``ActionInvoked`` for one of ours, ``on_open`` runs (the headless
engine starts ``scheduler-gui --view attention``).

A window that runs owns :func:`window_name` for its ledger on the session bus
(:func:`claim_name`; the bus releases it when the window's process ends, however
it ends); the headless engine on the same ledger sees the name owned and leaves
the notifying to the window's tray (:meth:`DesktopBus.window_running`).

Where there is no session bus, or nothing owns the notification service, the
errors are :class:`BusUnavailable` with the reason in a person's words: the
caller says it once and carries on.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import sys
import threading
from collections.abc import Callable
from queue import Empty, Queue
from typing import Any

from core.desktop.entry import APP_ID

#: The notification service's name, object and interface.
SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
#: The actions each notification offers: a click on it (``default``) and its "Open" button.
ACTIONS = ("default", "Open", "open", "Open")
OPENING = frozenset({"default", "open"})
#: Seconds to wait for the bus's answer.
TIMEOUT = 5.0
#: The application name the notification service shows.
APP_NAME = "Tidemark"


#: The capability of a notification service that reads markup in a body (``<b>``, ``<a href>``, ``&amp;``).
MARKUP = "body-markup"


def body(text: str, *, markup: bool) -> str:
    """``text`` as a notification's body: where the service reads markup, ``&``, ``<`` and ``>``
    escaped, so that a schedule id written into the ledger as ``<a href="file:///">`` shows as
    written and is neither a link nor bold."""
    return html.escape(text, quote=False) if markup else text


class BusUnavailable(Exception):
    """No session bus, or no notification service on it (the message says which)."""


def window_name(where: str) -> str:
    """The well-known bus name a window on the ledger ``where`` (:attr:`core.ledger.db.Ledger.where`) owns."""
    digest = hashlib.sha256(where.encode()).hexdigest()[:16]
    return f"{APP_ID}.Ledger_{digest}"


def _open_router(address: str) -> Any:
    from jeepney.io.threading import DBusRouter, open_dbus_connection

    class Router(DBusRouter):  # type: ignore[misc]
        """jeepney's router, whose receiving thread ends quietly when the bus goes away (the
        session ended): the next call then fails, and its caller says so once."""

        def _receiver(self) -> None:
            with contextlib.suppress(OSError, ValueError):
                super()._receiver()

    try:
        return Router(open_dbus_connection(bus=address))
    except KeyError:
        raise BusUnavailable("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)") from None
    except (OSError, RuntimeError, TimeoutError) as exc:
        raise BusUnavailable(f"the session bus cannot be reached ({exc})") from None


class NameClaim:
    """A well-known name owned on the session bus while this object is open."""

    def __init__(self, router: Any, name: str) -> None:
        self._router = router
        self.name = name

    def close(self) -> None:
        """Give the name back (closing the connection)."""
        self._router.close()
        self._router.conn.close()


def claim_name(name: str, address: str = "SESSION") -> NameClaim:
    """Own ``name`` on the bus at ``address`` (``SESSION``: ``$DBUS_SESSION_BUS_ADDRESS``);
    :class:`BusUnavailable` without a bus, or when another process owns it already."""
    from jeepney.bus_messages import message_bus
    from jeepney.wrappers import DBusErrorResponse, unwrap_msg

    router = _open_router(address)
    try:  # flag 4: do not queue behind another owner
        code = unwrap_msg(router.send_and_get_reply(message_bus.RequestName(name, 4), timeout=TIMEOUT))[
            0
        ]  # 4: no queue
    except (DBusErrorResponse, TimeoutError, OSError) as exc:
        router.close()
        router.conn.close()
        raise BusUnavailable(f"cannot own {name} on the session bus ({exc})") from None
    if code not in (1, 4):  # 1: now the owner; 4: already was
        router.close()
        router.conn.close()
        raise BusUnavailable(f"another process owns {name} on the session bus")
    return NameClaim(router, name)


class DesktopBus:
    """A connection to the session bus that sends notifications and hears their "Open"."""

    def __init__(self, router: Any, on_open: Callable[[], object]) -> None:
        from jeepney import MatchRule
        from jeepney.bus_messages import message_bus
        from jeepney.wrappers import unwrap_msg

        self._router = router
        self._on_open = on_open
        self._sent: set[int] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        rule = MatchRule(type="signal", interface=SERVICE, member="ActionInvoked", path=PATH)
        self._queue: Queue[Any] = Queue()
        self._filter = router.filter(rule, queue=self._queue)
        unwrap_msg(router.send_and_get_reply(message_bus.AddMatch(rule), timeout=TIMEOUT))
        self._listener = threading.Thread(target=self._listen, name="tidemark-notify-actions", daemon=True)
        self._listener.start()

    @classmethod
    def connect(cls, on_open: Callable[[], object], address: str = "SESSION") -> DesktopBus:
        """Connect to the bus at ``address``; :class:`BusUnavailable` when there is none."""
        from jeepney.wrappers import DBusErrorResponse

        router = _open_router(address)
        try:
            return cls(router, on_open)
        except (DBusErrorResponse, TimeoutError, OSError) as exc:
            router.close()
            router.conn.close()
            raise BusUnavailable(f"the session bus refused to listen for notification actions ({exc})") from None

    def window_running(self, name: str) -> bool:
        """Whether a window owns ``name`` (:func:`window_name`) on the bus."""
        from jeepney.bus_messages import message_bus
        from jeepney.wrappers import unwrap_msg

        return bool(unwrap_msg(self._router.send_and_get_reply(message_bus.NameHasOwner(name), timeout=TIMEOUT))[0])

    def notify(self, title: str, text: str) -> int:
        """Send one notification; its id. :class:`BusUnavailable` when no notification service answers.

        ``title`` and ``text`` are plain text. The title goes as the summary, which the
        specification keeps plain; the text goes as the body, escaped (:func:`body`) when the
        service says it reads markup there (``body-markup`` among its capabilities, asked each
        time: the service may have been replaced since)."""
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.common import RouterClosed
        from jeepney.wrappers import DBusErrorResponse, unwrap_msg

        address = DBusAddress(PATH, bus_name=SERVICE, interface=SERVICE)
        hints = {"urgency": ("y", 1), "desktop-entry": ("s", APP_ID)}
        try:
            said = body(text, markup=self._reads_markup(address))
            message = new_method_call(
                address, "Notify", "susssasa{sv}i", (APP_NAME, 0, APP_ID, title, said, list(ACTIONS), hints, -1)
            )
            notification_id = int(unwrap_msg(self._router.send_and_get_reply(message, timeout=TIMEOUT))[0])
        except DBusErrorResponse as exc:
            raise BusUnavailable(f"no notification service on the session bus ({exc.name})") from None
        except TimeoutError:
            raise BusUnavailable("the notification service did not answer") from None
        except (RouterClosed, OSError) as exc:
            raise BusUnavailable(f"the session bus went away ({exc or type(exc).__name__})") from None
        with self._lock:
            self._sent.add(notification_id)
        return notification_id

    def _reads_markup(self, address: Any) -> bool:
        """Whether the notification service reads markup in a body; yes when it does not say
        (an escaped body is then the safe side). Without a service, :meth:`notify`'s own call says so."""
        from jeepney import new_method_call
        from jeepney.wrappers import DBusErrorResponse, unwrap_msg

        asked = new_method_call(address, "GetCapabilities")
        try:
            capabilities = unwrap_msg(self._router.send_and_get_reply(asked, timeout=TIMEOUT))[0]
        except DBusErrorResponse:
            return True
        return MARKUP in capabilities

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                message = self._queue.get(timeout=0.2)
            except Empty:
                continue
            notification_id, action = message.body
            with self._lock:
                ours = notification_id in self._sent
            if ours and action in OPENING:
                try:
                    self._on_open()
                except OSError as exc:  # the window could not be started: say so, keep listening
                    print(f"tidemark: the window could not be opened ({exc})", file=sys.stderr, flush=True)

    def close(self) -> None:
        self._stop.set()
        self._listener.join(timeout=2)
        self._filter.close()
        self._router.close()
        self._router.conn.close()
