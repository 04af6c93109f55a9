"""The calendar form of the "When" box.

The form reads like a calendar app's custom recurrence (repeats every N
units, on weekdays, in months, on a day of the month, at times of day, from a
start). It is derived from the rule text on every change
(``core.recurrence.form``), and every edit writes the rule text back, so the
text (``rule_field``), the form, undo and redo can never disagree. A rule the
form cannot show leaves the form disabled.

The typed fields (repeat every, days of the month, times of day, minutes,
hours, the start) write the rule only when their whole text is a value the
rule can hold; until then the message sits on the line under the field and
Save waits (:mod:`scheduler_gui.designer.field_problem`). Times of day are
complete as ``H:MM`` or ``HH:MM``: "2" on the way to "25:61" is no time yet.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QLocale
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
    QWidget,
)

from core.recurrence.describe import MONTH_NAMES
from core.recurrence.form import (
    FREQUENCIES,
    NTH_CHOICES,
    FormError,
    RuleForm,
    form_from_rule,
    format_numbers,
    format_times,
    parse_numbers,
    parse_times,
    rule_text,
    switch_frequency,
    times_parts,
)
from core.recurrence.rules import WEEKDAYS, RuleError
from core.time.zone_info import wall_time_hint
from scheduler_gui.a11y import accessible, buddy
from scheduler_gui.designer.field_problem import FieldProblem, TypedField
from scheduler_gui.designer.typed_inputs import CountSpin, DateTimeField
from scheduler_gui.designer.when_fields import add_row, as_local, field_row, form_layout, row_label, stack
from scheduler_gui.designer.when_state import WhenState
from scheduler_gui.designer.zone_picker import tabular

UNIT_WORDS = {
    "MINUTELY": "minutes",
    "HOURLY": "hours",
    "DAILY": "days",
    "WEEKLY": "weeks",
    "MONTHLY": "months",
    "YEARLY": "years",
}
#: The name of the minutes field, the second row labelled "At".
MINUTES = "At (minutes past the hour)"
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NTH_WORDS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", -1: "last"}
_MODE_WORDS = (
    ("day", "on day(s)"),
    ("nth_weekday", "on the"),
    ("last_day", "on the last day"),
    ("last_weekday", "on the last weekday (Mon–Fri)"),
)


_COMPLETE_TIME = re.compile(r"\d{1,2}:\d{2}")


def read_times(text: str) -> tuple[tuple[int, int], ...]:
    """Times of day typed as ``H:MM`` or ``HH:MM``, separated by commas; an item without its two
    minute digits ("2", "14:3") is not a time yet, and ValueError says so."""
    for item in (i.strip() for i in text.replace(";", ",").split(",")):
        if item and not _COMPLETE_TIME.fullmatch(item):
            raise ValueError(f"{item!r} is not a time of day yet; write it as H:MM or HH:MM, like 02:30 or 14:05")
    return parse_times(text)


def _button_row(parent: QWidget, spacing: int) -> tuple[QWidget, QHBoxLayout]:
    box = QWidget(parent)
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(spacing)
    return box, layout


class CalendarForm(QWidget):
    """Repeats · on · in · day · at · hours · starts: the parts of a calendar rule as fields."""

    def __init__(self, state: WhenState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._form: RuleForm | None = None
        self.setAccessibleName("Calendar form")
        self.cal_form = form = form_layout(self)
        locale = self.locale()
        self._build_repeats(form)
        self._build_weekdays(form, locale)
        self._build_months(form, locale)
        self._build_day(form, locale)
        self._build_times(form)
        self._build_minutes(form)
        self._build_hours(form)
        self._build_start(form)
        self._typed_rule_fields = (self._interval, self._month_days, self._times, self._minutes, self._hours)
        self._choice_problems = (self._freq_problem, self._weekdays_problem, self._months_problem, self._day_problem)
        self._controls = [
            self.interval,
            self.freq,
            *self.weekday_buttons,
            *self.month_buttons,
            self.month_mode,
            self.month_days,
            self.nth,
            self.nth_weekday,
            self.times,
            self.add_time,
            self.minutes,
            self.hours,
        ]

    def _build_repeats(self, form: QFormLayout) -> None:
        """Repeats: every N, in which unit."""
        state = self._state
        self.interval = CountSpin("the repeat interval", 1, 1000, self)
        self.interval.setPrefix("every ")
        accessible(
            self.interval, "Repeats: how many", "Repeat every this many units (every 2 weeks = every other week)"
        )
        self.freq = QComboBox(self)
        for freq in reversed(FREQUENCIES):
            self.freq.addItem(UNIT_WORDS[freq], freq)
        accessible(self.freq, "Repeats: unit", "The unit it repeats in: minutes, hours, days, weeks, months or years")
        self.freq.activated.connect(self._on_freq)
        repeat_line = state.error_line(None, self, "Repeats")
        self.row_repeats = add_row(
            form, "Repeats", stack(field_row(self.interval, self.freq), repeat_line), self.interval
        )
        self._interval = state.typed_spin(
            "repeatEvery",
            "rule",
            repeat_line,
            self.interval,
            parse=self._read_interval,
            current=lambda: self._part("interval"),
            write=lambda value: self._write("Repeat every", "form:interval", interval=value),
        )
        self._freq_problem = state.problem("repeatUnit", "rule", repeat_line)

    def _build_weekdays(self, form: QFormLayout, locale: QLocale) -> None:
        """On: a toggle per weekday (none: every day)."""
        state = self._state
        self.weekday_buttons: list[QToolButton] = []
        days, days_layout = _button_row(self, 2)
        for i, code in enumerate(WEEKDAYS):
            button = QToolButton(days)
            button.setCheckable(True)
            button.setText(locale.dayName(i + 1, locale.FormatType.ShortFormat))
            day = locale.dayName(i + 1, locale.FormatType.LongFormat)
            accessible(button, day, f"Run on {_DAY_NAMES[i]}s (press again to leave them out)")
            button.setProperty("weekday", code)
            button.toggled.connect(self._on_weekdays)
            days_layout.addWidget(button)
            self.weekday_buttons.append(button)
        self.weekday_hint = QLabel("none: every day", days)
        self.weekday_hint.setEnabled(False)
        days_layout.addWidget(self.weekday_hint)
        days_layout.addStretch(1)
        self.weekday_label = buddy(row_label("On"), self.weekday_buttons[0])
        weekdays_line = state.error_line(None, self, "Weekdays")
        form.addRow(self.weekday_label, stack(days, weekdays_line))
        self.row_weekdays = form.rowCount() - 1
        self._weekdays_problem = state.problem("weekdays", "rule", weekdays_line)

    def _build_months(self, form: QFormLayout, locale: QLocale) -> None:
        """In: a toggle per month."""
        state = self._state
        self.month_buttons: list[QToolButton] = []
        months, months_layout = _button_row(self, 1)
        for m in range(1, 13):
            button = QToolButton(months)
            button.setCheckable(True)
            button.setText(locale.monthName(m, locale.FormatType.ShortFormat))
            month = locale.monthName(m, locale.FormatType.LongFormat)
            accessible(button, month, f"Run in {MONTH_NAMES[m]} (press again to leave it out)")
            button.setProperty("month", m)
            button.toggled.connect(self._on_months)
            months_layout.addWidget(button)
            self.month_buttons.append(button)
        months_layout.addStretch(1)
        months_line = state.error_line(None, self, "Months")
        self.row_months = add_row(form, "In", stack(months, months_line), self.month_buttons[0])
        self._months_problem = state.problem("months", "rule", months_line)

    def _build_day(self, form: QFormLayout, locale: QLocale) -> None:
        """Day: day numbers, the Nth weekday, the last day or the last weekday of the month."""
        state = self._state
        self.month_mode = QComboBox(self)
        for value, words in _MODE_WORDS:
            self.month_mode.addItem(words, value)
        accessible(
            self.month_mode,
            "Day",
            "Which day of the month: day numbers, the Nth weekday, the last day or the last weekday",
        )
        self.month_mode.activated.connect(self._on_month_mode)
        self.month_days = QLineEdit(self)
        self.month_days.setPlaceholderText("1, 15")
        self.month_days.setMaximumWidth(110)
        accessible(self.month_days, "Day: numbers", "Day numbers 1-31, separated by commas (1, 15) or as a range (1-7)")
        self.nth = QComboBox(self)
        for n in NTH_CHOICES:
            self.nth.addItem(_NTH_WORDS[n], n)
        accessible(self.nth, "Day: which", "Which of the month's weekdays: first, second, third, fourth, fifth or last")
        self.nth.activated.connect(self._on_nth)
        self.nth_weekday = QComboBox(self)
        for i, code in enumerate(WEEKDAYS):
            self.nth_weekday.addItem(locale.dayName(i + 1, locale.FormatType.LongFormat), code)
        accessible(self.nth_weekday, "Day: weekday", "The weekday counted in the month")
        self.nth_weekday.activated.connect(self._on_nth)
        day_line = state.error_line(None, self, "Day")
        self.row_day = add_row(
            form,
            "Day",
            stack(field_row(self.month_mode, self.month_days, self.nth, self.nth_weekday), day_line),
            self.month_mode,
        )
        self._month_days = self._numbers(
            self.month_days, "monthDays", day_line, "month_days", (1, 31, "days of the month"), "Days of the month"
        )
        self._day_problem = state.problem("dayOfMonth", "rule", day_line)

    def _build_times(self, form: QFormLayout) -> None:
        """At: the times of day, and a button that adds one."""
        state = self._state
        self.times = QLineEdit(self)
        self.times.setObjectName("timesOfDay")
        self.times.setFont(tabular(self.times.font()))
        self.times.setPlaceholderText("02:30")
        self.times.setMaximumWidth(220)
        accessible(
            self.times, "At", "Local wall-clock times of day as H:MM or HH:MM, separated by commas (09:00, 17:00)"
        )
        self.add_time = QPushButton("+ another", self)
        accessible(self.add_time, "Add another time of day", "Add another time of day, an hour after the last one")
        self.add_time.clicked.connect(self._on_add_time)
        times_line = state.error_line(None, self, "At")
        self.row_times = add_row(form, "At", stack(field_row(self.times, self.add_time), times_line), self.times)
        self._times = state.typed(
            "times",
            "rule",
            times_line,
            self.times,
            parse=self._read_times,
            current=lambda: self._form.times if self._form is not None else None,
            write=self._write_times,
            show=lambda times: self.times.setText(format_times(times or ())),
        )

    def _build_minutes(self, form: QFormLayout) -> None:
        """At (minutes past the hour), for rules that repeat in hours or minutes."""
        state = self._state
        self.minutes = QLineEdit(self)
        self.minutes.setPlaceholderText("0, 30")
        self.minutes.setMaximumWidth(110)
        # The second row labelled "At": its name says which one it is.
        accessible(self.minutes, MINUTES, "Minutes past each hour, 0-59, separated by commas (0, 30)")
        minutes_line = state.error_line(None, self, MINUTES)
        self.row_minutes = add_row(
            form, "At", stack(field_row(self.minutes, QLabel("minutes past the hour")), minutes_line), self.minutes
        )
        self._minutes = self._numbers(
            self.minutes, "minutes", minutes_line, "minutes", (0, 59, "minutes"), "Minutes past the hour"
        )

    def _build_hours(self, form: QFormLayout) -> None:
        """Hours: the hours of the day a rule may run in."""
        state = self._state
        self.hours = QLineEdit(self)
        self.hours.setPlaceholderText("every hour")
        self.hours.setMaximumWidth(110)
        accessible(self.hours, "Hours", "Run only in these hours of the day (9-17); empty means every hour")
        hours_line = state.error_line(None, self, "Hours")
        self.row_hours = add_row(
            form, "Hours", stack(field_row(self.hours, QLabel("empty: every hour")), hours_line), self.hours
        )
        self._hours = self._numbers(self.hours, "hours", hours_line, "hours", (0, 23, "hours"), "Hours of the day")

    def _build_start(self, form: QFormLayout) -> None:
        """Starts: the local start (DTSTART), with its UTC reading beside it."""
        state = self._state
        self.start = DateTimeField(
            "Starts", "The first local date and time the rule counts from (DTSTART)", self, with_time=True
        )
        self.start_hint = QLabel(self)
        self.start_hint.setFont(tabular(self.start_hint.font()))
        self.start_hint.setAccessibleName("Start in UTC")
        start_line = state.error_line("start", self, "Starts")
        add_row(form, "Starts", stack(field_row(self.start, self.start_hint), start_line), self.start)
        self._start = state.typed_start("start", start_line, self.start, "Start")

    def _numbers(
        self, edit: QLineEdit, field: str, line: Any, part: str, bounds: tuple[int, int, str], label: str
    ) -> TypedField:
        """A typed list of numbers (days, minutes, hours) for one part of the form."""
        return self._state.typed(
            field,
            "rule",
            line,
            edit,
            parse=lambda text: self._read_numbers(text, part, bounds),
            current=lambda: self._part(part),
            write=lambda values: self._write(label, f"form:{part}", **{part: values}),
            show=lambda values: edit.setText(format_numbers(values or ())),
        )

    def current_form(self) -> RuleForm | None:
        """The form shown, or None while the rule is invalid or beyond the form."""
        return self._form if self.interval.isEnabled() else None

    def _part(self, name: str) -> Any:
        return getattr(self._form, name) if self._form is not None else None

    # --- showing the document -----------------------------------------------------------------
    def show_document(self) -> None:
        """Show the document's rule and start; a rule the form cannot show disables the fields."""
        state = self._state
        self._start.show_document()
        self.start_hint.setText(wall_time_hint(as_local(state.doc.value("start")), state.zone_name()))
        try:
            form = form_from_rule(state.rule_value(), state.start_value())
            parse_error = None
        except RuleError as exc:
            form, parse_error = None, str(exc)
        state.rule_parse_error = parse_error
        for control in self._controls:
            control.setEnabled(form is not None)
        if form is None:
            self.forget_rule_fields()
            if self._form is None:
                # Nothing sensible to show yet: keep only the (disabled) frequency row.
                for row in (self.row_weekdays, self.row_months, self.row_day, self.row_times):
                    self.cal_form.setRowVisible(row, False)
                for row in (self.row_minutes, self.row_hours):
                    self.cal_form.setRowVisible(row, False)
            return
        self._form = form
        self._show_form(form)

    def forget_rule_fields(self) -> None:
        """The rule's fields are not in use (another kind, a rule beyond the form): their unfinished text
        must not hold the schedule back."""
        for field in self._typed_rule_fields:
            field.forget()
        for problem in self._choice_problems:
            problem.clear()

    def forget(self) -> None:
        """The whole form is not in use (another kind of schedule)."""
        self.forget_rule_fields()
        self._start.forget()

    def _show_form(self, form: RuleForm) -> None:
        self._interval.show_document()
        for i in range(self.freq.count()):
            words = UNIT_WORDS[str(self.freq.itemData(i))]
            self.freq.setItemText(i, words if form.interval != 1 else words[:-1])
        if not self._freq_problem.holds(form.freq):
            self.freq.setCurrentIndex(self.freq.findData(form.freq))
        daily_or_finer = form.freq in ("MINUTELY", "HOURLY", "DAILY")
        self.cal_form.setRowVisible(self.row_weekdays, not form.uses_days_of_month)
        self.weekday_label.setText("Only on" if daily_or_finer else "On")
        self.weekday_hint.setVisible(daily_or_finer)
        if form.uses_days_of_month:
            self._weekdays_problem.clear()
        if not self._weekdays_problem.holds(form.weekdays):
            for button in self.weekday_buttons:
                button.setChecked(button.property("weekday") in form.weekdays)
        yearly = form.freq == "YEARLY"
        self.cal_form.setRowVisible(self.row_months, yearly)
        if not yearly:
            self._months_problem.clear()
        if not self._months_problem.holds(form.months):
            for button in self.month_buttons:
                button.setChecked(button.property("month") in form.months)
        self.cal_form.setRowVisible(self.row_day, form.uses_days_of_month)
        if not form.uses_days_of_month:
            self._day_problem.clear()
        if not self._day_problem.holds((form.month_mode, form.nth, form.nth_weekday)):
            self.month_mode.setCurrentIndex(self.month_mode.findData(form.month_mode))
            self.nth.setCurrentIndex(self.nth.findData(form.nth))
            self.nth_weekday.setCurrentIndex(self.nth_weekday.findData(form.nth_weekday))
        by_number = form.uses_days_of_month and form.month_mode == "day"
        self.month_days.setVisible(form.month_mode == "day")
        self.nth.setVisible(form.month_mode == "nth_weekday")
        self.nth_weekday.setVisible(form.month_mode == "nth_weekday")
        coarse = form.freq not in ("MINUTELY", "HOURLY")
        self.cal_form.setRowVisible(self.row_times, coarse)
        self.cal_form.setRowVisible(self.row_minutes, form.freq == "HOURLY")
        self.cal_form.setRowVisible(self.row_hours, not coarse)
        for field, shown in (
            (self._month_days, by_number),
            (self._times, coarse),
            (self._minutes, form.freq == "HOURLY"),
            (self._hours, not coarse),
        ):
            if not shown:
                field.forget()
            field.show_document()

    # --- reading what is typed ------------------------------------------------------------------
    def _checked(self, **changes: Any) -> RuleForm:
        """The form with ``changes``, if a rule can hold it (FormError says why not)."""
        assert self._form is not None
        changed = replace(self._form, **changes)
        rule_text(changed)
        return changed

    def _read_interval(self, text: str) -> int:
        value = self.interval.number(text)
        self._checked(interval=value)
        return value

    def _read_numbers(self, text: str, part: str, bounds: tuple[int, int, str]) -> tuple[int, ...]:
        values = parse_numbers(text, *bounds)
        self._checked(**{part: values})
        return values

    def _read_times(self, text: str) -> tuple[tuple[int, int], ...]:
        times = read_times(text)
        hours, minutes = times_parts(times)
        self._checked(hours=hours, minutes=minutes)
        return times

    # --- writing the rule ---------------------------------------------------------------------
    def _write(self, label: str, merge_key: str | None = None, **changes: Any) -> None:
        """Write the form with ``changes`` (already checked) as the rule."""
        self._state.doc.set_values({"rule": rule_text(self._checked(**changes))}, label=label, merge_key=merge_key)

    def _write_times(self, times: tuple[tuple[int, int], ...]) -> None:
        hours, minutes = times_parts(times)
        self._write("Times of day", "form:times", hours=hours, minutes=minutes)

    def _choose(self, problem: FieldProblem, basis: Any, label: str, **changes: Any) -> None:
        """A choice (button, menu) made: written when a rule can hold it; otherwise its problem."""
        try:
            self._checked(**changes)
        except FormError as exc:
            problem.set(str(exc), basis)
            return
        problem.clear()
        self._write(label, **changes)

    def _editable(self) -> RuleForm | None:
        return None if self._state.updating or not self.interval.isEnabled() else self._form

    def _on_freq(self, index: int) -> None:
        form = self._editable()
        if form is not None:
            freq = str(self.freq.itemData(index))
            changed = switch_frequency(form, freq, self._state.start_value())
            self._choose(self._freq_problem, form.freq, f"Repeat in {UNIT_WORDS[freq]}", **_fields_of(changed))

    def _on_weekdays(self) -> None:
        form = self._editable()
        if form is not None:
            days = tuple(str(b.property("weekday")) for b in self.weekday_buttons if b.isChecked())
            self._choose(self._weekdays_problem, form.weekdays, "Weekdays", weekdays=days)

    def _on_months(self) -> None:
        form = self._editable()
        if form is not None:
            months = tuple(int(b.property("month")) for b in self.month_buttons if b.isChecked())
            self._choose(self._months_problem, form.months, "Months", months=months)

    def _on_month_mode(self, index: int) -> None:
        form = self._editable()
        if form is not None:
            mode = self.month_mode.itemData(index)
            days = form.month_days or (self._state.start_value().day,)
            months = form.months[:1] if mode == "last_weekday" else form.months
            basis = (form.month_mode, form.nth, form.nth_weekday)
            self._choose(self._day_problem, basis, "Day of the month", month_mode=mode, month_days=days, months=months)

    def _on_nth(self) -> None:
        form = self._editable()
        if form is not None:
            nth, weekday = int(self.nth.currentData()), str(self.nth_weekday.currentData())
            basis = (form.month_mode, form.nth, form.nth_weekday)
            self._choose(self._day_problem, basis, "Weekday of the month", nth=nth, nth_weekday=weekday)

    def _on_add_time(self) -> None:
        form = self._editable()
        if form is None or not form.hours:
            return
        free = [h for h in range(24) if h not in form.hours]
        if not free:
            return
        after = [h for h in free if h > form.hours[-1]]
        hour = after[0] if after else free[0]
        self._choose(self._times.problem, form.times, "Add a time of day", hours=tuple(sorted((*form.hours, hour))))
        self.times.setFocus()


def _fields_of(form: RuleForm) -> dict[str, Any]:
    """Every field of ``form``, to replace a whole form through :meth:`CalendarForm._choose`."""
    return {name: getattr(form, name) for name in RuleForm.__dataclass_fields__}
