"""The dialog of the next start after the window closed unexpectedly.

It says when the window was last seen alive, where the crash log is (or that
none was written: the process was ended from outside), and lists the attempts
its engine had started and did not finish itself, with what recovery made of
each (:func:`core.ledger.crash_queries.attempts_left_by`). The list is read
off the GUI thread and read again when the ledger changes, so an attempt the
engine settles while the dialog is open shows its outcome. Activating one
(double-click, Enter, or "Show in Monitor") opens it in the occurrences view.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.counts import counted, times
from core.ledger.crash_queries import LeftAttempt
from scheduler_gui.a11y import accessible
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.timetext import utc_seconds_text
from scheduler_gui.workspace.session_guard import UncleanExit

OccurrenceRole = Qt.ItemDataRole.UserRole + 1


def headline(exits: Sequence[UncleanExit], found: Sequence[LeftAttempt] = ()) -> str:
    """``Tidemark closed unexpectedly at about 14:07 (last seen running at 2027-03-01 12:07:00Z).``

    The moment is the last one the window is known to have been alive: its last beat, or an attempt it
    started after that beat (``found``), so it is never earlier than an event the report lists."""
    last = exits[-1]
    alive, how = last.last_seen, "last seen running"
    later = [f for f in found if f.attempt.started_at > alive]
    if later:
        newest = max(later, key=lambda f: f.attempt.started_at)
        alive = newest.attempt.started_at
        how = f"last known running when it started {newest.schedule_id}'s attempt {newest.attempt.attempt_number},"
    local = alive.astimezone().strftime("%H:%M on %a %d %b")
    text = (
        f"Tidemark closed unexpectedly at about {local} "
        f"({how} at {utc_seconds_text(alive)}; it had started at "
        f"{utc_seconds_text(last.started_at)})."
    )
    if len(exits) > 1:
        text += f" It closed unexpectedly {times(len(exits))} since it last quit normally."
    return text


class CrashReportDialog(QDialog):
    """What happened when the window closed unexpectedly, and what recovery did."""

    occurrenceRequested = Signal(str)
    """The person asked to see this occurrence in the monitor."""

    def __init__(self, exits: Sequence[UncleanExit], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if not exits:
            raise ValueError("a crash report needs at least one unclean exit")
        self.exits = list(exits)
        self.setWindowTitle("Tidemark closed unexpectedly")
        self.setObjectName("crashReport")
        accessible(self, "Tidemark closed unexpectedly", "What happened the last time Tidemark closed unexpectedly")

        self.headline = QLabel(headline(self.exits))
        self.headline.setWordWrap(True)
        accessible(self.headline, "What happened", "When Tidemark closed unexpectedly")
        self.log_label = QLabel(self._log_text())
        self.log_label.setWordWrap(True)
        self.log_label.setTextFormat(Qt.TextFormat.RichText)
        self.log_label.setOpenExternalLinks(True)
        self.log_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        accessible(self.log_label, "Crash log", "Where the crash log is, with what it recorded")
        self.summary = QLabel("Reading the ledger for the tasks it was running…")
        self.summary.setWordWrap(True)
        accessible(self.summary, "Recovery", "The tasks Tidemark was running when it closed, and what recovery did")
        self.attempts = QListWidget()
        self.attempts.setWordWrap(True)
        self.attempts.setMinimumHeight(120)
        accessible(
            self.attempts,
            "Attempts found after the crash",
            "The attempts Tidemark was running when it closed, and what recovery made of each; "
            "press Enter to show one in the monitor",
        )
        self.attempts.itemActivated.connect(self._activated)
        self.attempts.currentItemChanged.connect(lambda *_: self._update_show())

        self.buttons = QDialogButtonBox()
        self.show_button = QPushButton("Show in Monitor")
        accessible(self.show_button, "Show in Monitor", "Show the selected attempt's occurrence in the monitor")
        self.buttons.addButton(self.show_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        accessible(self.close_button, "Close", "Close this report")
        self.show_button.clicked.connect(lambda: self._activated(self.attempts.currentItem()))
        self.buttons.rejected.connect(self.reject)
        self.show_button.setAutoDefault(False)
        self.close_button.setDefault(True)

        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(self.log_label)
        layout.addWidget(self.summary)
        layout.addWidget(self.attempts, 1)
        layout.addWidget(self.buttons)
        self.resize(640, 400)
        self._update_show()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Enter on an attempt opens it (itemActivated); it must not also press Close and end the report.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.attempts.hasFocus():
            event.accept()
            return
        super().keyPressEvent(event)

    def _log_text(self) -> str:
        last = self.exits[-1]
        link = f'<a href="{QUrl.fromLocalFile(str(last.crash_log)).toString()}">{_escape(str(last.crash_log))}</a>'
        recorded = last.crash_log_text()
        if recorded is None:
            return (
                f"No fatal error was recorded in the crash log ({link}): the process was probably ended "
                "from outside (killed, out of memory, or the computer shut down)."
            )
        first = next((line for line in recorded.splitlines() if line.strip()), "")
        return f"The crash log recorded: <i>{_escape(first)}</i>. Full stacks of every thread: {link}"

    def set_attempts(self, found: Sequence[LeftAttempt]) -> None:
        """Show the attempts left behind (replacing the list; the selection is kept)."""
        current = self.attempts.currentItem()
        keep = current.data(OccurrenceRole) if current is not None else None
        self.attempts.clear()
        for left in found:
            item = QListWidgetItem(left.describe())
            item.setData(OccurrenceRole, left.attempt.occurrence_id)
            self.attempts.addItem(item)
            if left.attempt.occurrence_id == keep:
                self.attempts.setCurrentItem(item)
        if self.attempts.currentItem() is None and self.attempts.count():
            self.attempts.setCurrentRow(0)
        self.summary.setText(_summary(found))
        self.headline.setText(headline(self.exits, found))
        self.attempts.setVisible(bool(found))
        self._update_show()

    def show_error(self, message: str) -> None:
        self.summary.setText(f"The ledger could not be read for the tasks it was running: {message}")
        self.attempts.hide()
        self._update_show()

    def _update_show(self) -> None:
        self.show_button.setEnabled(self.attempts.isVisible() and self.attempts.currentItem() is not None)

    def _activated(self, item: QListWidgetItem | None) -> None:
        if item is not None:
            self.occurrenceRequested.emit(str(item.data(OccurrenceRole)))


def _summary(found: Sequence[LeftAttempt]) -> str:
    if not found:
        return "It was running no task, so nothing needed recovering."
    settled = sum(1 for f in found if f.recovered)
    n = len(found)
    text = f"It was running {counted(n, 'task')}. "
    if settled == n:
        return text + "The engine recovered each one by its rules (a retry, or a decision left to you):"
    return text + (
        f"{settled:,} recovered so far; the engine settles the rest once their claims lapse (this list follows):"
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class CrashReport(QObject):
    """Reads what the crashed sessions left (off the GUI thread) into a :class:`CrashReportDialog`,
    again whenever the ledger watcher sees events, and opens occurrences in the window."""

    def __init__(self, ctx: AppContext, exits: Sequence[UncleanExit], window: Any, watcher: Any = None) -> None:
        super().__init__(window)
        self.ctx = ctx
        self.exits = list(exits)
        self.dialog = CrashReportDialog(self.exits, window)
        self.dialog.occurrenceRequested.connect(window.show_occurrence)
        self._reader = LatestOnly(self)
        self._reader.done.connect(self.dialog.set_attempts)
        self._reader.failed.connect(self.dialog.show_error)
        if watcher is not None:
            watcher.eventsArrived.connect(self._on_events)  # bound: dropped when this report is deleted
        self.dialog.finished.connect(lambda _r: self._reader.cancel())

    def _on_events(self, _events: object) -> None:
        self.reload()

    def reload(self) -> None:
        """Read the attempts again (only while the dialog is open)."""
        if not self.dialog.isVisible():
            return
        exits = self.exits

        def work() -> list[LeftAttempt]:
            from core.ledger.monitor_reads import ProcessSpan, attempts_left

            return attempts_left(self.ctx.ledger, [ProcessSpan(e.host, e.pid, e.started_at, e.died_by) for e in exits])

        self._reader.submit(work)

    def open(self) -> CrashReportDialog:
        """Show the dialog (not modal: the window stays usable) and read the attempts."""
        self.dialog.show()
        self.reload()
        return self.dialog

    def wait(self, msecs: int = 30_000) -> bool:
        return self._reader.wait(msecs)
