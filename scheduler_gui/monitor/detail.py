"""One occurrence in full: why it exists, every attempt with its output, and its history.

:meth:`OccurrenceDetail.show_occurrence` reads the occurrence, its revision,
its attempts and its events off the GUI thread and shows them as one readable
page: times in the schedule's zone (abbreviation and offset) with UTC beside
them, output tails in a monospaced font. It says who decided what: who held
the schedule, each person's decision about the occurrence, and who (or which
engine's user and host) caused each event of its history.
"""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from core.ledger.event_words import actor_text, event_what
from core.ledger.monitor_queries import AttemptView
from core.ledger.monitor_reads import OccurrenceDetails, occurrence_detail
from core.ledger.queries import EventView
from core.time.durations import human_duration, parse_duration
from scheduler_gui.a11y import accessible
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.authors import event_decision_text, held_text
from scheduler_gui.monitor.background import describe_error, ledger_work
from scheduler_gui.monitor.timetext import local_text, run_time_text, utc_seconds_text, utc_text
from scheduler_gui.status_style import look

#: What the pane says while no occurrence is selected.
HINT = "Select an occurrence to see why it exists, how it ran and what happened to it."

_POLICY_WORDS = {
    "gapPolicy": "Missing time",
    "foldPolicy": "Repeated time",
    "invalidDatePolicy": "Invalid dates",
    "misfirePolicy": "Missed runs",
    "maxCatchUp": "Catch up at most",
    "latenessWindow": "Late after",
    "catchUpWindow": "Never run after",
    "overlapPolicy": "Overlap",
    "jitter": "Jitter",
    "retry": "Retries",
    "every": "Every",
    "delay": "Delay",
}


def _row(label: str, value: str) -> str:
    return (
        f"<tr><th align='left' valign='top' style='padding-right:12px; white-space:nowrap'>{escape(label)}</th>"
        f"<td>{value}</td></tr>"
    )


def _mono(text: str) -> str:
    return f"<span style='font-family:monospace'>{escape(text)}</span>"


def _chip(state: str) -> str:
    style = look(state)
    colour = style.colour or "palette(text)"
    return f"<b style='color:{colour}'>{escape(style.label)}</b>"


def _when(instant: Any, zone: str) -> str:
    if instant is None:
        return "—"
    return f"{_mono(local_text(instant, zone))} · {_mono(utc_seconds_text(instant))}"


def render_html(d: OccurrenceDetails) -> str:
    """The page for one occurrence."""
    o, zone = d.origin.occurrence, d.origin.time_zone
    out = [f"<h3>{_chip(o.state.value)} {_mono(o.occurrence_id)}</h3>"]
    if o.reason:
        out.append(f"<p>{escape(o.reason)}</p>")
    if d.held is not None:
        out.append(f"<p>{escape(held_text(d.held))}</p>")
    out.append("<h4>Why it exists</h4><table>")
    out.append(_row("Schedule", f"{escape(o.schedule_id)}, revision {o.revision} ({escape(o.kind.value)})"))
    if d.origin.rule:
        out.append(_row("Rule", _mono(d.origin.rule)))
    out.append(_row("Time zone", f"{escape(zone)} · tzdata {escape(o.tzdb_version)}"))
    fold = " (second reading of a repeated hour)" if o.fold_ordinal == 1 else ""
    out.append(_row("Nominal", _mono(o.nominal_local.replace("T", " ")) + escape(fold)))
    out.append(_row("Scheduled", _when(o.resolved_utc, zone) if o.resolved_utc else "no such local time"))
    if o.due_at is not None and o.due_at != o.resolved_utc:
        out.append(_row("Due", _when(o.due_at, zone)))
    if o.business_period:
        out.append(_row("Business period", escape(o.business_period)))
    for key, value in d.origin.policies.items():
        words = _POLICY_WORDS.get(key, key)
        out.append(_row(words, _mono(_words(value) if not isinstance(value, dict) else _compact(value))))
    task = d.origin.task
    if task:
        argv = " ".join(str(a) for a in task.get("argv", []))
        out.append(_row("Task", _mono(argv)))
        out.append(
            _row("Effect", f"{escape(str(task.get('effect', '')))}, timeout {escape(_words(task.get('timeout', '')))}")
        )
    out.append("</table>")
    out.append(f"<h4>Attempts ({len(d.attempts)})</h4>")
    if not d.attempts:
        out.append("<p>Not started yet.</p>")
    else:
        out.append(f"<p>{_timeline(d.attempts)}</p>")
    for a in d.attempts:
        out.append(_attempt_html(a, zone))
    decided = [text for text in map(event_decision_text, d.events) if text is not None]
    if decided:
        out.append(f"<h4>Decisions ({len(decided)})</h4><ul>")
        out.extend(f"<li>{escape(text)}</li>" for text in decided)
        out.append("</ul>")
    out.append(f"<h4>History ({len(d.events):,} events)</h4><table>")
    for e in d.events:
        out.append(_event_html(e))
    out.append("</table>")
    return "".join(out)


def _timeline(attempts: list[AttemptView]) -> str:
    """One line, oldest first: ``#1 ↻ exit 3 12:05:30Z → #2 ✖ exit 3 12:06:30Z``."""
    steps = []
    for a in attempts:
        state = a.outcome.value if a.outcome is not None else "RUNNING"
        style = look(state)
        colour = style.colour or "palette(text)"
        steps.append(
            f"#{a.attempt_number} <b style='color:{colour}'>{escape(style.glyph)}</b> {escape(a.ending())} "
            f"{_mono(f'{a.started_at:%H:%M:%S}Z')}"
        )
    return " → ".join(steps)


def _compact(value: dict[str, Any]) -> str:
    return ", ".join(f"{k} {_words(v)}" for k, v in value.items())


def _words(value: Any) -> str:
    """A duration (``PT5M``) in words (``5 min``); any other value as it is."""
    text = str(value)
    if not text.upper().startswith("P"):
        return text
    try:
        return human_duration(parse_duration(text))
    except ValueError:
        return text


def _attempt_html(a: AttemptView, zone: str) -> str:
    outcome = a.outcome.value if a.outcome is not None else "RUNNING"
    head = f"<p><b>Attempt {a.attempt_number}</b> · {_chip(outcome)} · {escape(a.ending())}"
    if a.duration is not None:
        head += f" after {escape(run_time_text(a.duration))}"
    head += "</p><table>"
    rows = [
        _row("Worker", _mono(a.worker)),
        _row("Claim generation", f"{a.claim_generation} (execution epoch {a.execution_epoch})"),
        _row("Started", _when(a.started_at, zone)),
        _row("Finished", _when(a.finished_at, zone)),
        _row("Exit status", "—" if a.exit_status is None else str(a.exit_status)),
        _row("Error class", escape(a.error_class or "—")),
        _row("Input digest", _mono(a.input_digest)),
    ]
    tails = []
    for name, tail in (("stdout", a.stdout_tail), ("stderr", a.stderr_tail)):
        body = escape(tail) if tail else "(empty)"
        tails.append(f"<p><i>{name}</i></p><pre style='font-family:monospace'>{body}</pre>")
    return head + "".join(rows) + "</table>" + "".join(tails)


def _event_html(e: EventView) -> str:
    data = e.data
    if "from" in data and "to" in data:
        what = f"{_chip(str(data['from']))} → {_chip(str(data['to']))}"
    else:
        what = escape(event_what(e.kind, data))
    why = data.get("reason") or data.get("note") or ""
    return (
        f"<tr><td style='padding-right:12px'>{_mono(utc_text(e.at))}</td>"
        f"<td style='padding-right:12px'>{what}</td>"
        f"<td style='padding-right:12px'>{escape(actor_text(e.actor))}</td><td>{escape(str(why))}</td></tr>"
    )


class OccurrenceDetail(QWidget):
    """The detail panel beside the occurrences table."""

    loaded = Signal(str)
    """The id of the occurrence now shown."""
    errorOccurred = Signal(str)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("occurrenceDetail")
        self._ctx = ctx
        self._background = LatestOnly(self, describe=describe_error)
        self._background.done.connect(lambda result: self._show(*result))
        self._background.failed.connect(self._failed)
        self._current: str | None = None
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        accessible(
            self.browser,
            "Occurrence detail",
            "Why this occurrence exists, its attempts with their output, and its history",
        )
        self._show_hint()
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {look('FAILED').colour};")
        self.error_label.setAccessibleName("Detail problem")
        self.error_label.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.error_label)
        layout.addWidget(self.browser, 1)
        self.setMinimumWidth(240)  # beside the occurrences in a 1024 px window
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setFocusProxy(self.browser)

    @property
    def occurrence_id(self) -> str | None:
        return self._current

    def show_occurrence(self, occurrence_id: str) -> None:
        """Read and show one occurrence (off the GUI thread)."""
        self._current = occurrence_id

        def work() -> tuple[str, OccurrenceDetails | None]:
            return occurrence_id, occurrence_detail(self._ctx.ledger, occurrence_id)

        self._background.submit(ledger_work(work))

    def refresh(self) -> None:
        if self._current is not None:
            self.show_occurrence(self._current)

    def clear(self) -> None:
        self._current = None
        self._show_hint()

    def _show_hint(self) -> None:
        """What to do while nothing is shown, wrapped in the pane's width and greyed. (As the text,
        not Qt's placeholder: that one is drawn on one line and cut off at the pane's edge.)"""
        colour = self.browser.palette().placeholderText().color().name()
        self.browser.setHtml(f'<p style="color: {colour};">{escape(HINT)}</p>')

    def wait(self, msecs: int = 30_000) -> bool:
        return self._background.wait(msecs)

    def text(self) -> str:
        """What the panel shows, as plain text (tests, accessibility)."""
        return self.browser.toPlainText()

    def _show(self, occurrence_id: str, details: OccurrenceDetails | None) -> None:
        self.error_label.hide()
        if details is None:
            self.browser.setPlainText(f"{occurrence_id} is not in this ledger.")
        else:
            self.browser.setHtml(render_html(details))
        self.loaded.emit(occurrence_id)

    def _failed(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()
        self.errorOccurred.emit(message)
