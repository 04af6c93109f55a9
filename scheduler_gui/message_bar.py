"""The window's status bar and its one way of showing a temporary message: :meth:`MessageBar.say`.

Qt's own ``QStatusBar.showMessage`` paints the text clipped at the first permanent item, in the
middle of a word, and a long message at 1024 px is gone entirely. Here a message is a label that
shows the words that fit and "…" (whole words only, fitted again when the window is resized), with
all of it in the label's tooltip and accessible description; :meth:`MessageBar.currentMessage`
stays the whole text. While a message shows, the items the toolbar repeats (the engine's state and
the next due run) step aside to give it their room.

An action's status tip (a menu item under the mouse) shows in the same label over the message and
gives the message back when the mouse moves on: :meth:`MessageBar.take_status_tips` catches the
tips on their way to the window, which would hand them to ``QStatusBar.showMessage``. (An event
filter, not an override of the window's ``event``: a Python ``event`` calling the base class holds
the interpreter's lock through whatever Qt does there, such as deleting a window whose worker
thread is emitting a signal, and the two then wait for each other.)
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QStatusTipEvent
from PySide6.QtWidgets import QStatusBar, QWidget

from scheduler_gui.a11y import explain
from scheduler_gui.elide import WholeWordsLabel

#: The message label's accessible name while it shows nothing.
TITLE = "Message"


class MessageLabel(WholeWordsLabel):
    """The message as it fits, on one line; its accessible name, description and tooltip are all of it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusMessage")
        self.setContentsMargins(6, 0, 6, 0)
        self.say("")

    def say(self, text: str) -> None:
        """Show ``text`` (its lines joined into one), all of it reachable by tooltip and screen reader."""
        self.setText(" ".join(text.split()))
        self.setAccessibleName(text or TITLE)
        explain(self, text)


class MessageBar(QStatusBar):
    """A status bar whose temporary messages end at a whole word: see the module's docstring."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusBar")
        self.label = MessageLabel(self)
        self.addWidget(self.label, 1)
        self._message = ""
        self._tip = ""
        self._shown = ""
        self._aside: list[QWidget] = []
        #: Ends a message shown for a while; single shot, restarted by each message.
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.expire)

    def say(self, text: str, timeout_ms: int = 0) -> None:
        """Show ``text`` until the next message, or for ``timeout_ms`` milliseconds when that is above 0."""
        self._message = text
        if timeout_ms > 0 and text:
            self.timer.start(timeout_ms)
        else:
            self.timer.stop()
        self._show()

    def showMessage(self, text: str, timeout: int | None = 0) -> None:
        """Qt's name for :meth:`say`, for a caller that knows only ``QStatusBar``."""
        self.say(text, timeout or 0)

    def clearMessage(self) -> None:
        self.say("")

    def currentMessage(self) -> str:
        """The whole message (or the status tip over it), however few of its words fit."""
        return self._tip or self._message

    def expire(self) -> None:
        """The shown message's time is up."""
        self.say("")

    def show_tip(self, tip: str) -> None:
        """An action's status tip over the message; an empty tip gives the message back."""
        self._tip = tip
        self._show()

    def take_status_tips(self, window: QWidget) -> None:
        """Show the status tips that reach ``window`` (its actions' and widgets') with :meth:`show_tip`."""
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.StatusTip and isinstance(event, QStatusTipEvent):
            self.show_tip(event.tip())
            return True
        return False

    def step_aside(self, *widgets: QWidget) -> None:
        """Permanent ``widgets`` to hide while a message shows, giving it their room."""
        self._aside.extend(widgets)

    def _show(self) -> None:
        shown = self.currentMessage()
        if shown == self._shown:
            return
        self._shown = shown
        self.label.say(shown)
        for widget in self._aside:
            widget.setVisible(not shown)
        self.messageChanged.emit(shown)
