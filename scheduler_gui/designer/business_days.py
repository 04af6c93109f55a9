"""The designer's "Business days" section: the schedule's business calendar (``businessCalendar``)
and what happens to a run that falls on a closed day (``holidayPolicy``), docs/spec.md.

Off by default. Turning it on writes a calendar with the default weekend (Saturday and Sunday) and
asks for the policy: none is chosen for the person, and Save waits until one is (as for the gap and
fold policies). Then: the public holidays of countries and regions (a search over the codes of the
``holidays`` package: "berlin" or "DE-BE"), the weekend days, a company's own closed dates and the
dates that are business days despite the rest, and the policy with its consequence in words. Every
edit is one undo step; the file gets exactly the spec's keys.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from PySide6.QtCore import QLocale, Qt, QTimer
from PySide6.QtWidgets import (
    QBoxLayout,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.calendar.business_words import next_touch, policy_line
from core.calendar.holiday_codes import code_info, code_problem
from core.enums import HolidayPolicy, Kind
from core.errors import SpecError
from core.spec.model import WEEKDAY_CODES
from core.spec.validation import parse_spec
from scheduler_gui.a11y import accessible
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.designer.business_lists import DateAdder, HolidayPicker, RemovableList
from scheduler_gui.designer.business_state import (
    CALENDAR,
    DEFAULT_WEEKEND,
    POLICY,
    POLICY_CHOICES,
    added_date,
    calendar_of,
    in_week_order,
    items,
    weekend_of,
    with_list,
)
from scheduler_gui.designer.business_year import MONTHS_PER_ROW, NARROW_MONTHS_PER_ROW, YearView
from scheduler_gui.designer.notes import meaning_label, problem_label, show_problems
from scheduler_gui.designer.when_fields import add_row, form_layout, stack
from scheduler_gui.preview.service import PreviewService
from scheduler_gui.reflow import Reflow, widths
from scheduler_gui.workspace.document import SpecDocument

_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
OFF_MEANING = (
    "Runs on every date its rule names. Turn this on to skip or move the runs that fall on public holidays, "
    "on the weekend or on your own closed dates."
)
#: How long the consequence waits for edits to pause (ms).
DEBOUNCE_MS = 60
INCOMPLETE = "Complete the schedule above to see what each choice does."
NO_TOUCH = "touches no run in the next year"
NOT_CALENDAR = (
    "Business days apply to calendar schedules: an interval or an after-completion schedule follows elapsed "
    "time and has no dates to keep off holidays."
)


def choice_lines(data: dict[str, Any], now: datetime) -> dict[str, tuple[str, str]] | None:
    """For each policy: the core's line for the schedule with that policy (``policy_line``) and the next
    holiday it touches (``next_touch``), or None while the rest of the schedule is not valid."""
    out: dict[str, tuple[str, str]] = {}
    for policy in HolidayPolicy:
        try:
            spec = parse_spec({**data, POLICY: policy.value})
        except SpecError:
            return None
        touch = next_touch(spec, now)
        out[policy.value] = (policy_line(spec, now) or "", touch.removeprefix("Next: ") if touch else NO_TOUCH)
    return out


def _date_row(text: str) -> tuple[str, str, str]:
    """A stored date as a row: its value, "Fri 2027-12-24", and the date in words."""
    try:
        day = date.fromisoformat(text)
    except ValueError:
        return text, f"{text} (not a date)", f"{text} is not a date like 2027-12-24"
    return text, f"{day:%a} {text}", f"{day:%A %d %B %Y}"


def _code_row(code: str) -> tuple[str, str, str]:
    """A stored holiday code as a row: its value, "Germany: Berlin (DE-BE)", and what it means."""
    info = code_info(code)
    if info is None:
        problem = code_problem(code) or f"{code} is not a holiday code"
        return code, f"{code} ⚠ not known", problem
    return code, f"{info.name} ({code})", f"The public holidays the holidays package lists for {info.name} ({code})"


class BusinessDaysBox(QWidget):
    """Edits ``businessCalendar`` and ``holidayPolicy``; says what the chosen policy does."""

    #: Lays the two columns side by side or one under the other (:meth:`reflow_in`).
    columns: Reflow | None

    def __init__(
        self,
        document: SpecDocument,
        ctx: AppContext,
        parent: QWidget | None = None,
        preview: PreviewService | None = None,
    ) -> None:
        super().__init__(parent)
        self._doc = document
        self._ctx = ctx
        self._preview = preview
        self._syncing = False
        self.setAccessibleName("Business days")
        self.use = QCheckBox("Use a business calendar", self)
        accessible(
            self.use,
            "Use a business calendar",
            "Runs that fall on a public holiday, the weekend or a closed date are skipped or moved "
            "(businessCalendar and holidayPolicy)",
        )
        self.use.clicked.connect(self._turned)
        self.off_meaning = meaning_label(self, "Business days: meaning")
        self.off_meaning.setText(OFF_MEANING)
        self._build_fields()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 0, 4)
        layout.setSpacing(4)
        layout.addWidget(self.use)
        layout.addWidget(self.off_meaning)
        layout.addWidget(self.fields)
        layout.addStretch(1)
        self._build_consequence()
        document.changed.connect(self.sync)
        document.problemsChanged.connect(self._show_problems)
        if preview is not None:
            preview.startChanged.connect(self._timer.start)
            preview.startChanged.connect(self._follow_start)
        self.sync()
        self.refresh_now()

    def reflow_in(self, room: QWidget) -> None:
        """Where the two columns do not fit side by side in ``room`` (the settings' scroll area, in a
        1024 px window), the dates go under the holidays: neither the holiday matches nor the dates
        are cut off at the right. (The section's own width cannot say: side by side, it is held wide.)"""
        box, left, right = self._columns
        margins = 40  # the section's indent and the scroll bar
        grid = self.year_view.grid
        reflow = Reflow(
            room,
            box,
            widths(left, right, spacing=16 + margins),
            lambda stacked: grid.set_per_row(NARROW_MONTHS_PER_ROW if stacked else MONTHS_PER_ROW),
        )
        reflow.apply()
        self.columns = reflow

    def _follow_start(self) -> None:
        """The preview's From moved: the year view goes to its year (unless the person turned it)."""
        self.year_view.follow(self._now().year)

    def _now(self) -> datetime:
        """The instant the section speaks from: the preview's start, else the clock's now."""
        return self._preview.start if self._preview is not None else self._ctx.clock.now()

    # --- building -------------------------------------------------------------------
    def _build_fields(self) -> None:
        """What shows while the section is on: two columns of fields, the calendar's problems, the year."""
        self.fields = QWidget(self)
        left, right = QWidget(self.fields), QWidget(self.fields)
        left_form = form_layout(left)
        self._build_holidays(left_form)
        self._build_weekend(left_form)
        self._build_policy(left_form)
        self._build_dates(form_layout(right))
        columns = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        columns.setContentsMargins(0, 0, 0, 0)
        columns.setSpacing(16)
        # At the top of their column, at their own height: a list never takes the other column's room.
        columns.addWidget(left, 3, Qt.AlignmentFlag.AlignTop)
        columns.addWidget(right, 2, Qt.AlignmentFlag.AlignTop)
        self._columns = (columns, left, right)
        self.columns = None
        self.problem = problem_label(self.fields, "Business days: problem")
        self.year_view = YearView(self._now().year, self.fields)
        outer = QVBoxLayout(self.fields)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(8)
        outer.addLayout(columns)
        outer.addWidget(self.problem)
        outer.addWidget(self.year_view)

    def _build_consequence(self) -> None:
        """The policy's line is worked out off the GUI thread once the edits pause."""
        self.lines: dict[str, tuple[str, str]] | None = None
        self._worker = LatestOnly(self)
        self._worker.done.connect(self._show_lines)
        self._worker.failed.connect(lambda message: self._say(f"→ {message}"))
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.refresh_now)

    def _build_holidays(self, form: QFormLayout) -> None:
        """Public holidays: the search, its matches, and the codes chosen."""
        self.picker = HolidayPicker(self.fields)
        self.picker.picked.connect(self._add_code)
        self.codes = RemovableList(
            "Public holidays of", "The countries and regions whose public holidays are closed days", 3, self.fields
        )
        self.codes.removed.connect(self._remove_code)
        add_row(form, "Public holidays", stack(self.picker, self.codes), self.picker.search)

    def _build_weekend(self, form: QFormLayout) -> None:
        """Weekend: a toggle per weekday, Monday first."""
        locale = QLocale()
        row = QWidget(self.fields)
        row_layout = QHBoxLayout(row)
        row_layout.setContentsMargins(0, 0, 0, 0)
        row_layout.setSpacing(2)
        self.weekend_buttons: dict[str, QToolButton] = {}
        for i, code in enumerate(WEEKDAY_CODES):
            button = QToolButton(row)
            button.setCheckable(True)
            button.setText(locale.dayName(i + 1, QLocale.FormatType.ShortFormat))
            accessible(
                button,
                f"Weekend: {locale.dayName(i + 1, QLocale.FormatType.LongFormat)}",
                f"{_DAY_NAMES[i]}s are closed days (press again to make them business days)",
            )
            button.clicked.connect(self._weekend_clicked)
            row_layout.addWidget(button)
            self.weekend_buttons[code] = button
        row_layout.addStretch(1)
        add_row(form, "Weekend", row, self.weekend_buttons["MO"])

    def _build_dates(self, form: QFormLayout) -> None:
        """Closed dates and open dates: a date field that adds, and the list."""
        self.closed_add = DateAdder("Closed on", "A date your business is closed, beside the public holidays", self)
        self.closed = RemovableList(
            "Closed on: dates",
            "Your own closed dates (businessCalendar.closed)",
            3,
            self,
            remove_name="Closed on: remove the date",
        )
        self.open_add = DateAdder("Open on", "A date that is a business day despite a holiday or the weekend", self)
        self.open = RemovableList(
            "Open on: dates",
            "Business days despite the above (businessCalendar.open)",
            2,
            self,
            remove_name="Open on: remove the date",
        )
        self.closed_add.added.connect(lambda day: self._add_date("closed", day))
        self.open_add.added.connect(lambda day: self._add_date("open", day))
        self.closed.removed.connect(lambda value: self._remove_date("closed", value))
        self.open.removed.connect(lambda value: self._remove_date("open", value))
        add_row(form, "Closed on", stack(self.closed_add, self.closed), self.closed_add.field.edit)
        add_row(form, "Open on", stack(self.open_add, self.open), self.open_add.field.edit)

    def _build_policy(self, form: QFormLayout) -> None:
        """On a closed day: the policy, and what it does."""
        self.policy = QComboBox(self.fields)
        self.policy.setPlaceholderText("Choose…")
        for value, words, _meaning in POLICY_CHOICES:
            self.policy.addItem(words, value)
        accessible(
            self.policy,
            "On a closed day",
            "What happens to a run whose date is not a business day: skipped, or moved to the next or previous "
            "business day at the same time (holidayPolicy)",
        )
        self.policy.activated.connect(self._policy_chosen)
        self.consequence = QLabel(self.fields)
        self.consequence.setWordWrap(True)
        self.consequence.setAccessibleName("On a closed day: what it does")
        self.policy_problem = problem_label(self.fields, "On a closed day: problem")
        add_row(form, "On a closed day", stack(self.policy, self.consequence, self.policy_problem), self.policy)

    # --- writing --------------------------------------------------------------------
    def _calendar(self) -> dict[str, Any]:
        return calendar_of(self._doc.data) or {}

    def _write(self, key: str, values: list[str], label: str) -> None:
        self._doc.set_value(CALENDAR, with_list(self._calendar(), key, values), label=label)

    def _turned(self, on: bool) -> None:
        if on:
            self._doc.set_value(CALENDAR, {"weekend": list(DEFAULT_WEEKEND)}, label="Business days: on")
        else:
            self._doc.set_values({CALENDAR: None, POLICY: None}, label="Business days: off")

    def _add_code(self, code: str) -> None:
        codes = items(self._calendar().get("holidays"))
        if code not in codes:
            self._write("holidays", [*codes, code], f"Public holidays of {code}")

    def _remove_code(self, code: str) -> None:
        codes = [c for c in items(self._calendar().get("holidays")) if c != code]
        self._write("holidays", codes, f"No public holidays of {code}")

    def _weekend_clicked(self) -> None:
        days = in_week_order([code for code, button in self.weekend_buttons.items() if button.isChecked()])
        self._write("weekend", days, "Weekend days")

    def _add_date(self, key: str, day: date) -> None:
        dates = items(self._calendar().get(key))
        word = "Closed" if key == "closed" else "Open"
        self._write(key, added_date(dates, day.isoformat()), f"{word} on {day.isoformat()}")

    def _remove_date(self, key: str, value: str) -> None:
        dates = [d for d in items(self._calendar().get(key)) if d != value]
        word = "closed" if key == "closed" else "open"
        self._write(key, dates, f"Not {word} on {value}")

    def _policy_chosen(self, index: int) -> None:
        if self._syncing:
            return
        self._doc.set_value(
            POLICY, self.policy.itemData(index), label=f"On a closed day: {self.policy.itemText(index)}"
        )

    # --- reading --------------------------------------------------------------------
    def sync(self) -> None:
        """Show the document's calendar and policy (writes nothing back)."""
        calendar = calendar_of(self._doc.data)
        on = calendar is not None
        self._syncing = True
        try:
            self.use.setChecked(on)
            calendar_kind = self._doc.value("kind", Kind.CALENDAR.value) == Kind.CALENDAR.value
            self.use.setEnabled(on or calendar_kind)  # a calendar on another kind can still be turned off
            self.off_meaning.setText(OFF_MEANING if calendar_kind else NOT_CALENDAR)
            self.off_meaning.setVisible(not on)
            self.fields.setVisible(on)
            calendar = calendar or {}
            self.codes.set_rows([_code_row(code) for code in items(calendar.get("holidays"))])
            weekend = weekend_of(calendar)
            for code, button in self.weekend_buttons.items():
                button.setChecked(code in weekend)
            self.closed.set_rows([_date_row(d) for d in items(calendar.get("closed"))])
            self.open.set_rows([_date_row(d) for d in items(calendar.get("open"))])
            self.policy.setCurrentIndex(self.policy.findData(self._doc.value(POLICY)))
            self.year_view.show_calendar(calendar)
        finally:
            self._syncing = False
        self._show_problems()
        self._show_lines(self.lines)
        self._timer.start()

    # --- the consequence ------------------------------------------------------------
    @property
    def pending(self) -> bool:
        """True from an edit until its consequence is shown (tests, screenshots)."""
        return self._timer.isActive() or self._worker.busy

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the consequence being computed is ready (tests, screenshots)."""
        return self._worker.wait(msecs)

    def refresh_now(self) -> None:
        """Work out, off the GUI thread, what each policy does from the preview's instant."""
        self._timer.stop()
        if calendar_of(self._doc.data) is None:
            self._worker.cancel()
            self.lines = None
            return
        data, now = dict(self._doc.data), self._now()
        self._worker.submit(lambda: choice_lines(data, now))

    def _show_lines(self, lines: object) -> None:
        """The chosen policy's line (each choice's in its tooltip); with none chosen, what each would do."""
        self.lines = lines if isinstance(lines, dict) else None
        for i in range(self.policy.count()):
            value, meaning = self.policy.itemData(i), POLICY_CHOICES[i][2]
            tip = self.lines[value][0] if self.lines else meaning
            self.policy.setItemData(i, tip, Qt.ItemDataRole.ToolTipRole)
        chosen = self._doc.value(POLICY)
        if self.lines is None:
            said = next((m for v, _w, m in POLICY_CHOICES if v == chosen), None)
            self._say(f"→ {said} {INCOMPLETE}" if said else f"→ Not chosen yet. {INCOMPLETE}")
        elif chosen in self.lines:
            self._say(f"→ {self.lines[chosen][0]}")
        else:
            each = "; ".join(f"{words}: {self.lines[value][1]}" for value, words, _m in POLICY_CHOICES)
            self._say(f"→ Not chosen yet. {each}.")

    def _say(self, text: str) -> None:
        self.consequence.setText(text)
        self.consequence.setAccessibleDescription(text)

    def _show_problems(self) -> None:
        show_problems(self.problem, self._doc.problems_for(CALENDAR))
        show_problems(self.policy_problem, self._doc.problems_for(POLICY))
