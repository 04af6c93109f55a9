"""The window's tray icon: a notification when something newly needs a person,
"Open" and "Quit" in its menu, and where the window hides when it is closed
while the engine runs (:mod:`scheduler_gui.monitor.hide_to_tray`).

What needs a person and the text it is told in are the core's
(:func:`core.ledger.monitor_reads.person_needs`, :class:`core.desktop.notify.needs.NoticeBook`),
the same four kinds and the same words as the headless engine's notifications:
an unknown effect, a failure with its attempts used up, a schedule waiting for
an engine, a drifted schedule. What already waits when the ledger opens is
known (the Attention badge shows it); each later batch is one message.

While the tray follows a ledger, the window owns that ledger's name on the
session bus (:func:`core.desktop.notify.desktop_bus.window_name`), so that the engine
service on the same ledger leaves the notifying to it.

Where the desktop has no system tray (or the app runs offscreen) there is no
icon and no message: the Attention badge says the same. Whether a tray exists
is asked through ``available`` (tests pass their own).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon

from core.desktop.notify.desktop_bus import body
from core.desktop.notify.needs import FirstLook, Need, Notice, NoticeBook
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.status_style import REDDISH_PURPLE

#: Milliseconds a notification stays up.
MESSAGE_MS = 8000
#: Milliseconds between two looks at what needs a person (also after every new attention).
LOOK_MS = 5000
#: Settings key: whether the tray tells what needs a person (Engine ▸ Engine Settings…).
NOTIFY_KEY = "tray/notify"
#: Whether Qt hands a tray message to the desktop's notification service as its body, where markup
#: may be read (Linux, the BSDs); Qt does not let us ask the service, so the body is escaped there.
#: Windows and macOS show it as plain text.
MARKUP_BODY = not sys.platform.startswith(("win32", "cygwin", "darwin"))


def tray_available() -> bool:
    """Whether the desktop shows tray icons (never offscreen)."""
    return bool(QSystemTrayIcon.isSystemTrayAvailable())


def _icon() -> QIcon:
    app = QApplication.instance()
    icon = app.windowIcon() if isinstance(app, QApplication) else QIcon()
    if not icon.isNull():
        return icon
    pixmap = QPixmap(64, 64)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(REDDISH_PURPLE))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(4, 4, 56, 56)
    painter.setPen(QColor("white"))
    font = painter.font()
    font.setPixelSize(40)
    font.setBold(True)
    painter.setFont(font)
    painter.drawText(pixmap.rect(), Qt.AlignmentFlag.AlignCenter, "?")
    painter.end()
    return QIcon(pixmap)


def notify_on(settings: Any) -> bool:
    """Whether the tray's notifications are on (they are unless turned off)."""
    return settings.value(NOTIFY_KEY, True) not in (False, "false", "0", 0)


class AttentionTray(QObject):
    """The tray icon, its menu, and one message for every batch of what newly needs a person."""

    openRequested = Signal()
    """The person clicked a message, the icon, or "Open": show the window on Needs attention."""
    quitRequested = Signal()
    """The person chose "Quit" in the tray's menu."""

    def __init__(
        self,
        ctx: AppContext,
        parent: QObject | None = None,
        *,
        available: Callable[[], bool] = tray_available,
        look_ms: int = LOOK_MS,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.icon: QSystemTrayIcon | None = None
        self.menu: QMenu | None = None
        #: Every text the tray showed, oldest first.
        self.messages: list[str] = []
        self.book = NoticeBook(first_look=FirstLook.QUIET)
        self._claim: Any = None
        self._claiming: threading.Thread | None = None
        self._background = LatestOnly(self, describe=_describe)
        self._background.done.connect(self.see)
        self._timer = QTimer(self)
        self._timer.setInterval(look_ms)
        self._timer.timeout.connect(self.look)
        if not available():
            return
        self.icon = QSystemTrayIcon(_icon(), self)
        self.icon.setToolTip("Tidemark")
        self.menu = QMenu()
        self.menu.setObjectName("trayMenu")
        self.menu.setAccessibleName("Tidemark tray menu")
        open_action = self.menu.addAction("&Open Tidemark")
        open_action.setToolTip("Show the window on Needs attention")
        open_action.triggered.connect(self.openRequested)
        self.menu.addSeparator()
        quit_action = self.menu.addAction("&Quit")
        quit_action.setToolTip("Close Tidemark and stop its engine")
        quit_action.triggered.connect(self.quitRequested)
        self.icon.setContextMenu(self.menu)
        self.icon.messageClicked.connect(self.openRequested)
        self.icon.activated.connect(self._activated)
        self.icon.show()

    @property
    def available(self) -> bool:
        return self.icon is not None

    @property
    def notifying(self) -> bool:
        """Whether the person wants the tray's notifications (Engine ▸ Engine Settings…)."""
        return notify_on(self.ctx.settings)

    def follow(self, watcher: Any) -> None:
        """Start looking at the open ledger: now, every :data:`LOOK_MS` and after each new attention;
        and own the ledger's name on the session bus (the service then leaves notifying to this tray)."""
        if self.icon is None:
            return
        if watcher is not None:
            watcher.newAttention.connect(lambda _ids: self.look())
        if self._claiming is None:  # the ledger opened again (F5 after a failure): the name is ours already
            # Off the GUI thread: a session bus that does not answer must not hold the window.
            where = self.ctx.ledger.where
            self._claiming = threading.Thread(target=self._own, args=(where,), name="tidemark-bus-name", daemon=True)
            self._claiming.start()
        self._timer.start()
        self.look()

    def _own(self, where: str) -> None:
        self._claim = _own_window_name(where)

    def look(self) -> None:
        """Read what needs a person, off the GUI thread; :meth:`see` gets the answer."""
        if self.icon is None:
            return
        from core.engine.presence import STALE_AFTER
        from core.ledger.monitor_reads import person_needs
        from scheduler_gui.monitor.background import ledger_work

        ledger, now = self.ctx.ledger, self.ctx.clock.now()
        self._background.submit(ledger_work(lambda: person_needs(ledger, now, STALE_AFTER)))

    def see(self, needs: list[Need]) -> Notice | None:
        """Tell what is new in ``needs`` (everything that needs a person now) in one message."""
        notice = self.book.look(needs, self.ctx.clock.now(), quiet=self.icon is None or not self.notifying)
        if notice is not None:
            self.say(notice.title, notice.text, QSystemTrayIcon.MessageIcon.Warning)
        return notice

    def say(
        self, title: str, text: str, kind: QSystemTrayIcon.MessageIcon = QSystemTrayIcon.MessageIcon.Information
    ) -> None:
        """Show one message from the tray (nothing without a tray); ``text`` is plain text."""
        if self.icon is None:
            return
        self.messages.append(text)
        self.icon.showMessage(title, body(text, markup=MARKUP_BODY), kind, MESSAGE_MS)

    @property
    def busy(self) -> bool:
        """Whether a look at the ledger waits for its answer."""
        return self._background.busy

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the look in flight is read (tests); its answer arrives through the event loop."""
        return self._background.wait(msecs)

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.openRequested.emit()

    def stop(self) -> None:
        """Stop looking, give the bus name back and take the icon away."""
        self._timer.stop()
        self._background.wait()
        if self._claiming is not None:
            self._claiming.join()
            self._claiming = None
        if self._claim is not None:
            self._claim.close()
            self._claim = None
        if self.icon is not None:
            self.icon.hide()


def _describe(exc: BaseException) -> str:
    # The ledger's modules load with the ledger, off the GUI thread, not with the window.
    from scheduler_gui.monitor.background import describe_error

    return describe_error(exc)


def _own_window_name(where: str) -> Any:
    """The window's name for ledger ``where`` on the session bus, or None where there is no bus."""
    from core.desktop.notify.desktop_bus import BusUnavailable, claim_name, window_name

    try:
        return claim_name(window_name(where))
    except BusUnavailable:
        return None
