"""Schedule actions from the window: pause, resume, disable (a note is required),
run now, and backfill a past range with a preview of how many would run.

Each action is a small dialog whose Accept calls the core
(``core.ledger.publish`` gates, ``core.engine.admin``) off the GUI thread
(:class:`DialogWrite`); a refusal is shown in words next to the field it
concerns and the dialog stays open, having changed nothing.
``pause(ctx, schedule_id, parent)`` and its siblings open the dialog and
return whether it was done.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import QDate, QDateTime, QObject, QTime, QTimer, QTimeZone
from PySide6.QtWidgets import (
    QAbstractButton,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from core.errors import LedgerUnavailable, UnknownScheduleError, UserError
from core.time.zones import get_zone
from scheduler_gui.a11y import accessible, explain
from scheduler_gui.background import LatestOnly
from scheduler_gui.preview.text import offset_text, tabular_font, utc_text, wall_in_zone
from scheduler_gui.status_style import VERMILLION

if TYPE_CHECKING:
    from scheduler_gui.context import AppContext

#: Wall times in the pickers are floating values of the schedule's zone, held with Qt's UTC spec.
_FLOATING = QTimeZone(QTimeZone.Initialization.UTC)
#: Milliseconds of quiet before the backfill preview is recounted.
PREVIEW_DEBOUNCE_MS = 250


def problem_text(exc: BaseException) -> str:
    """Words for a refusal: a user error's own message; a database that refuses, said plainly."""
    if isinstance(exc, UnknownScheduleError):  # its message names the command line; say it in the window's words
        return "This schedule is not published in this ledger: publish it first (Schedule ▸ Publish…, Ctrl+Enter)"
    if isinstance(exc, LedgerUnavailable):
        if exc.refused is not None:  # a write the role may not make: the role, what it lacks, the grant
            return exc.refused
        if exc.busy:
            return f"the ledger is locked by another program ({exc.detail}); try again in a moment"
        if exc.full:  # its disk, or the database's size limit: the core's words name both
            return str(exc)
        return f"the ledger cannot be used ({exc.detail})"
    if isinstance(exc, UserError):
        return str(exc)
    return f"unexpected error: {type(exc).__name__}: {exc}"


def zone_time(instant: datetime, zone_name: str) -> str:
    """``Sun 2027-03-14 03:30 EDT −04:00 · 2027-03-14 07:30Z``."""
    local = instant.astimezone(get_zone(zone_name))
    offset = local.utcoffset() or timedelta(0)
    text = wall_in_zone(local.replace(tzinfo=None), local.tzname(), offset)
    if not text.rsplit(" ", 1)[-1].startswith("UTC"):  # letters: add the offset ("UTC+10:30" already says it)
        text += " " + offset_text(offset)
    return f"{text} · {utc_text(instant)}"


def schedule_zone(ctx: AppContext, schedule_id: str) -> str:
    from core.ledger.monitor_reads import schedule_zone as zone_of

    return zone_of(ctx.ledger, schedule_id)


# --- the dialogs -------------------------------------------------------------------


def error_label() -> QLabel:
    label = QLabel()
    label.setObjectName("problem")
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {VERMILLION};")
    label.setAccessibleName("Problem")
    label.hide()
    return label


class DialogWrite(QObject):
    """A dialog's write to the ledger, run off the GUI thread.

    While it runs the dialog's buttons are disabled (a locked ledger can make
    it wait seconds, and the window must not freeze meanwhile); then ``done``
    gets what the write returned, or ``failed`` one line saying why nothing
    was written, and the buttons are as they were.
    """

    def __init__(
        self,
        buttons: QDialogButtonBox,
        done: Callable[[object], None],
        failed: Callable[[str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._buttons = buttons
        self._were: list[tuple[QAbstractButton, bool]] = []
        self._worker = LatestOnly(self, describe=problem_text)
        self._worker.done.connect(lambda value: self._end(done, value))
        self._worker.failed.connect(lambda message: self._end(failed, message))

    @property
    def busy(self) -> bool:
        return self._worker.busy

    def start(self, work: Callable[[], object]) -> None:
        if self.busy:
            return
        self._were = [(button, button.isEnabled()) for button in self._buttons.buttons()]
        for button, _ in self._were:
            button.setEnabled(False)
        self._worker.submit(work)  # the core commands say a database's failure as LedgerUnavailable

    def wait(self, msecs: int = 30_000) -> bool:
        return self._worker.wait(msecs)

    def _end(self, then: Callable[[Any], None], answer: object) -> None:
        for button, was in self._were:
            button.setEnabled(was)
        then(answer)


class _ActionDialog(QDialog):
    """A title, what the action does, a note field, a problem line and OK / Cancel."""

    ctx: AppContext

    def __init__(self, title: str, what: str, ok_text: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setAccessibleName(title)
        self.setMinimumWidth(460)
        self.layout_ = QVBoxLayout(self)
        intro = QLabel(what)
        intro.setWordWrap(True)
        self.layout_.addWidget(intro)
        self.form = QFormLayout()
        self.layout_.addLayout(self.form)
        self.note = QLineEdit()
        accessible(self.note, "Note", "Why: recorded in the ledger's events with this change")
        self.note.setPlaceholderText("why (recorded in the ledger)")
        self.problem = error_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText(ok_text)
        accessible(ok, ok_text, f"{ok_text} and record it")
        cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        accessible(cancel, "Cancel", "Close without changing anything")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self._write = DialogWrite(self.buttons, self._written, self.show_problem, self)
        #: What the core returned when the action was done.
        self.result_value: object = None

    def finish_layout(self) -> None:
        self.form.addRow("&Note", self.note)
        self.layout_.addWidget(self.problem)
        self.layout_.addWidget(self.buttons)

    def show_problem(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.show()

    def note_text(self) -> str | None:
        return self.note.text().strip() or None

    @property
    def writing(self) -> bool:
        """The action's write is running (off the GUI thread)."""
        return self._write.busy

    def planned_write(self) -> Callable[[], object]:  # pragma: no cover - each dialog defines it
        """Check the fields (a UserError names what is wrong) and return the write to run."""
        raise NotImplementedError

    def accept(self) -> None:
        if self.writing:
            return
        try:
            work = self.planned_write()
        except UserError as exc:
            self.show_problem(str(exc))
            return
        self.problem.hide()
        self._write.start(work)

    def _written(self, value: object) -> None:
        self.result_value = value
        super().accept()

    def reject(self) -> None:
        if not self.writing:  # a write under way finishes first: it cannot be taken back half done
            super().reject()

    def done(self, result: int) -> None:
        self._write.wait()
        super().done(result)


class GateDialog(_ActionDialog):
    """Pause, resume or disable a schedule, with a note (required to disable)."""

    TEXT: ClassVar[dict[str, tuple[str, str]]] = {
        "pause": (
            "Pause",
            "Stop dispatching {sid}. Occurrences are still materialized, so a resume sees what was missed.",
        ),
        "resume": ("Resume", "Make {sid} active again: the engine dispatches it at its next pass."),
        "disable": (
            "Disable",
            "Stop materializing and dispatching {sid}. Occurrences already running finish or wait for a "
            "decision; nothing is cancelled. Say why in the note: it is required.",
        ),
    }

    def __init__(self, ctx: AppContext, schedule_id: str, action: str, parent: QWidget | None = None) -> None:
        verb, words = self.TEXT[action]
        super().__init__(f"{verb} {schedule_id}", words.format(sid=schedule_id), verb, parent)
        self.ctx, self.schedule_id, self.action = ctx, schedule_id, action
        if action == "disable":
            self.note.setPlaceholderText("required: why it is disabled")
            explain(self.note, "Required: why the schedule is disabled (recorded in the ledger)")
        self.finish_layout()

    def planned_write(self) -> Callable[[], object]:
        from core.ledger.publish import Gate, change_gate

        note = self.note_text()
        if self.action == "disable" and note is None:
            self.note.setFocus()
            raise UserError("Note: required to disable a schedule; say why it is disabled")
        gate = Gate(self.action)
        ledger, sid, clock = self.ctx.ledger, self.schedule_id, self.ctx.clock

        def write() -> object:
            return change_gate(ledger, sid, gate, clock, note)

        return write


class RunNowDialog(_ActionDialog):
    """A manual occurrence of the schedule, due at once."""

    def __init__(self, ctx: AppContext, schedule_id: str, parent: QWidget | None = None) -> None:
        super().__init__(
            f"Run {schedule_id} now",
            f"Create a manual occurrence of {schedule_id}, due now: the engine runs its task at the next pass. "
            "It is an occurrence of its own and never replaces a scheduled one.",
            "Run now",
            parent,
        )
        self.ctx, self.schedule_id = ctx, schedule_id
        self.finish_layout()

    def planned_write(self) -> Callable[[], object]:
        from core.engine.admin import run_now

        ledger, sid, clock, note = self.ctx.ledger, self.schedule_id, self.ctx.clock, self.note_text()
        return lambda: run_now(ledger, sid, clock, note)


class BackfillDialog(_ActionDialog):
    """Run a past range's occurrences that never ran, with a count of what would run."""

    def __init__(
        self, ctx: AppContext, schedule_id: str, parent: QWidget | None = None, zone: str | None = None
    ) -> None:
        super().__init__(
            f"Backfill {schedule_id}",
            "Run, oldest first, each occurrence in the range that never ran. Occurrences that succeeded, are "
            "running or wait for a person are left alone: a backfill never repeats an effect that happened.",
            "Backfill",
            parent,
        )
        self.ctx, self.schedule_id = ctx, schedule_id
        self.zone = zone or schedule_zone(ctx, schedule_id)
        now = ctx.clock.now()
        self.from_edit = self._picker("From", now - timedelta(days=1))
        self.to_edit = self._picker("To (excluded)", now)
        self.from_label = QLabel()
        self.to_label = QLabel()
        for label in (self.from_label, self.to_label):
            label.setFont(tabular_font())
        self.form.addRow("&From", self.from_edit)
        self.form.addRow("", self.from_label)
        self.form.addRow("&To (excluded)", self.to_edit)
        self.form.addRow("", self.to_label)
        self.preview = QLabel("counting…")
        accessible(
            self.preview,
            "Backfill preview",
            "How many occurrences of the range the backfill would run, and leave alone",
        )
        self.form.addRow("Would run", self.preview)
        self.finish_layout()
        self._reader = LatestOnly(self, describe=problem_text)
        self._reader.done.connect(self._on_preview)
        self._reader.failed.connect(self._on_preview_failed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(PREVIEW_DEBOUNCE_MS)
        self._timer.timeout.connect(self.refresh_preview)
        self.from_edit.dateTimeChanged.connect(self._changed)
        self.to_edit.dateTimeChanged.connect(self._changed)
        self._changed()

    def _picker(self, what: str, instant: datetime) -> QDateTimeEdit:
        edit = QDateTimeEdit()
        edit.setTimeZone(_FLOATING)
        edit.setDisplayFormat("yyyy-MM-dd HH:mm")
        edit.setCalendarPopup(True)
        accessible(edit, what, f"{what}: a wall-clock time in {self.zone}; pick the day from the calendar button")
        edit.setFont(tabular_font())
        self.set_instant(edit, instant)
        return edit

    def set_instant(self, edit: QDateTimeEdit, instant: datetime) -> None:
        self.set_wall(edit, instant.astimezone(get_zone(self.zone)).replace(tzinfo=None))

    @staticmethod
    def set_wall(edit: QDateTimeEdit, local: datetime) -> None:
        """Show a wall time of the schedule's zone. The editor holds it as a floating value
        (Qt's UTC spec), so the machine's own zone never shifts it."""
        edit.setDateTime(
            QDateTime(QDate(local.year, local.month, local.day), QTime(local.hour, local.minute), _FLOATING)
        )

    def instant(self, edit: QDateTimeEdit) -> datetime:
        """The picked wall time read in the schedule's zone (a repeated time: its first reading;
        a time in a gap: read with the offset before the gap, like the command line)."""
        value = edit.dateTime()
        d, t = value.date(), value.time()
        local = datetime(d.year(), d.month(), d.day(), t.hour(), t.minute())
        return local.replace(tzinfo=get_zone(self.zone)).astimezone(UTC)

    def span(self) -> tuple[datetime, datetime]:
        return self.instant(self.from_edit), self.instant(self.to_edit)

    def _changed(self) -> None:
        start, end = self.span()
        self.from_label.setText(zone_time(start, self.zone))
        self.to_label.setText(zone_time(end, self.zone))
        self.preview.setText("counting…")
        self._timer.start()

    def refresh_preview(self) -> None:
        from core.ledger.monitor_reads import backfill_outlook

        start, end = self.span()
        ctx, sid, now = self.ctx, self.schedule_id, self.ctx.clock.now()

        def work() -> object:
            return backfill_outlook(ctx.ledger, sid, start, end, now)

        self._reader.submit(work)

    def _on_preview(self, preview: Any) -> None:
        if preview.problem:
            self.preview.setText("—")
            self.show_problem(preview.problem)
            return
        self.problem.hide()
        self.preview.setText(f"{preview.would_run:,} would run · {preview.left_alone:,} left alone")

    def _on_preview_failed(self, message: str) -> None:
        self.preview.setText("—")
        self.show_problem(message)

    def planned_write(self) -> Callable[[], object]:
        from core.engine.admin import backfill

        start, end = self.span()
        ledger, sid, clock, note = self.ctx.ledger, self.schedule_id, self.ctx.clock, self.note_text()
        return lambda: backfill(ledger, sid, start, end, clock, note)

    def done(self, result: int) -> None:
        self._timer.stop()
        self._reader.wait()
        super().done(result)


# --- what the window calls ---------------------------------------------------------------


def _run(dialog: QDialog) -> bool:
    return dialog.exec() == QDialog.DialogCode.Accepted


def pause(ctx: AppContext, schedule_id: str, parent: QWidget | None = None) -> bool:
    return _run(GateDialog(ctx, schedule_id, "pause", parent))


def resume(ctx: AppContext, schedule_id: str, parent: QWidget | None = None) -> bool:
    return _run(GateDialog(ctx, schedule_id, "resume", parent))


def disable(ctx: AppContext, schedule_id: str, parent: QWidget | None = None) -> bool:
    return _run(GateDialog(ctx, schedule_id, "disable", parent))


def run_now(ctx: AppContext, schedule_id: str, parent: QWidget | None = None) -> bool:
    return _run(RunNowDialog(ctx, schedule_id, parent))


def backfill(ctx: AppContext, schedule_id: str, parent: QWidget | None = None) -> bool:
    return _run(BackfillDialog(ctx, schedule_id, parent))
