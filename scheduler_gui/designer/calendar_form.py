"""The calendar form of the "When" box.

The form reads like a calendar app's custom recurrence (repeats every N
units, on weekdays, in months, on a day of the month, at times of day, from a
start). It is derived from the rule text on every change
(``core.recurrence.form``), and every edit writes the rule text back, so the
text (``rule_field``), the form, undo and redo can never disagree. A rule the
form cannot show leaves the form disabled.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
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
from core.timefmt import fmt_local
from core.zone_info import wall_time_hint
from scheduler_gui.designer.when_fields import (
    WallTimeEdit,
    add_row,
    as_local,
    field_row,
    form_layout,
    row_label,
    stack,
    tip,
)
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
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NTH_WORDS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", -1: "last"}
_MODE_WORDS = (
    ("day", "on day(s)"),
    ("nth_weekday", "on the"),
    ("last_day", "on the last day"),
    ("last_weekday", "on the last weekday (Mon–Fri)"),
)


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

        self.interval = QSpinBox(self)
        self.interval.setRange(1, 1000)
        self.interval.setPrefix("every ")
        tip(self.interval, "Repeat every", "Repeat every this many units (every 2 weeks = every other week)")
        self.interval.valueChanged.connect(self._on_interval)
        self.freq = QComboBox(self)
        for freq in reversed(FREQUENCIES):
            self.freq.addItem(UNIT_WORDS[freq], freq)
        tip(self.freq, "Repeat unit", "Minutes, hours, days, weeks, months or years")
        self.freq.activated.connect(self._on_freq)
        self.row_repeats = add_row(form, "Repeats", field_row(self.interval, self.freq))

        self.weekday_buttons: list[QToolButton] = []
        days, days_layout = _button_row(self, 2)
        for i, code in enumerate(WEEKDAYS):
            button = QToolButton(days)
            button.setCheckable(True)
            button.setText(locale.dayName(i + 1, locale.FormatType.ShortFormat))
            tip(button, _DAY_NAMES[i], f"Run on {_DAY_NAMES[i]}s")
            button.setProperty("weekday", code)
            button.toggled.connect(self._on_weekdays)
            days_layout.addWidget(button)
            self.weekday_buttons.append(button)
        self.weekday_hint = QLabel("none: every day", days)
        self.weekday_hint.setEnabled(False)
        days_layout.addWidget(self.weekday_hint)
        days_layout.addStretch(1)
        self.weekday_label = row_label("On")
        form.addRow(self.weekday_label, days)
        self.row_weekdays = form.rowCount() - 1

        self.month_buttons: list[QToolButton] = []
        months, months_layout = _button_row(self, 1)
        for m in range(1, 13):
            button = QToolButton(months)
            button.setCheckable(True)
            button.setText(locale.monthName(m, locale.FormatType.ShortFormat))
            tip(button, MONTH_NAMES[m], f"Run in {MONTH_NAMES[m]}")
            button.setProperty("month", m)
            button.toggled.connect(self._on_months)
            months_layout.addWidget(button)
            self.month_buttons.append(button)
        months_layout.addStretch(1)
        self.row_months = add_row(form, "In", months)

        self.month_mode = QComboBox(self)
        for value, words in _MODE_WORDS:
            self.month_mode.addItem(words, value)
        tip(self.month_mode, "Day of the month", "A day number, the Nth weekday, the last day or the last weekday")
        self.month_mode.activated.connect(self._on_month_mode)
        self.month_days = QLineEdit(self)
        self.month_days.setPlaceholderText("1, 15")
        self.month_days.setMaximumWidth(110)
        tip(self.month_days, "Days of the month", "Day numbers 1-31, separated by commas (1, 15) or as a range")
        self.month_days.textEdited.connect(self._on_month_days)
        self.nth = QComboBox(self)
        for n in NTH_CHOICES:
            self.nth.addItem(_NTH_WORDS[n], n)
        tip(self.nth, "Which weekday of the month", "First, second, third, fourth, fifth or last")
        self.nth.activated.connect(self._on_nth)
        self.nth_weekday = QComboBox(self)
        for i, code in enumerate(WEEKDAYS):
            self.nth_weekday.addItem(locale.dayName(i + 1, locale.FormatType.LongFormat), code)
        tip(self.nth_weekday, "Weekday of the month", "The weekday counted in the month")
        self.nth_weekday.activated.connect(self._on_nth)
        self.row_day = add_row(form, "Day", field_row(self.month_mode, self.month_days, self.nth, self.nth_weekday))

        self.times = QLineEdit(self)
        self.times.setObjectName("timesOfDay")
        self.times.setFont(tabular(self.times.font()))
        self.times.setPlaceholderText("02:30")
        self.times.setMaximumWidth(220)
        tip(self.times, "Times of day", "Local wall-clock times, separated by commas (09:00, 17:00)")
        self.times.textEdited.connect(self._on_times)
        self.add_time = QPushButton("+ another", self)
        tip(self.add_time, "Add a time of day", "Add another time of day, an hour after the last one")
        self.add_time.clicked.connect(self._on_add_time)
        self.row_times = add_row(form, "At", field_row(self.times, self.add_time))

        self.minutes = QLineEdit(self)
        self.minutes.setPlaceholderText("0, 30")
        self.minutes.setMaximumWidth(110)
        tip(self.minutes, "Minutes past the hour", "Minutes past each hour, 0-59, separated by commas")
        self.minutes.textEdited.connect(self._on_minutes)
        self.row_minutes = add_row(form, "At", field_row(self.minutes, QLabel("minutes past the hour")))

        self.hours = QLineEdit(self)
        self.hours.setPlaceholderText("every hour")
        self.hours.setMaximumWidth(110)
        tip(self.hours, "Only in hours", "Run only in these hours of the day (9-17); empty means every hour")
        self.hours.textEdited.connect(self._on_hours)
        self.row_hours = add_row(form, "Hours", field_row(self.hours, QLabel("empty: every hour")))

        self.start = WallTimeEdit(self)
        tip(self.start, "Starts", "The first local date and time the rule counts from (DTSTART)")
        self.start.dateTimeChanged.connect(self._on_start)
        self.start_hint = QLabel(self)
        self.start_hint.setFont(tabular(self.start_hint.font()))
        self.start_hint.setAccessibleName("Start in UTC")
        add_row(form, "Starts", stack(field_row(self.start, self.start_hint), state.error_line("start", self)))
        self.form_error = state.error_line("form", self)
        form.addRow(self.form_error)
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

    def current_form(self) -> RuleForm | None:
        """The form shown, or None while the rule is invalid or beyond the form."""
        return self._form if self.interval.isEnabled() else None

    # --- showing the document -----------------------------------------------------------------
    def show_document(self) -> None:
        """Show the document's rule and start; a rule the form cannot show disables the fields."""
        state = self._state
        start = state.start_value()
        self.start.set_naive(start)
        self.start_hint.setText(wall_time_hint(as_local(state.doc.value("start")), state.zone_name()))
        try:
            form = form_from_rule(state.rule_value(), start)
            parse_error = None
        except RuleError as exc:
            form, parse_error = None, str(exc)
        state.rule_parse_error = parse_error
        for control in self._controls:
            control.setEnabled(form is not None)
        if form is None:
            if self._form is None:
                # Nothing sensible to show yet: keep only the (disabled) frequency row.
                for row in (self.row_weekdays, self.row_months, self.row_day, self.row_times):
                    self.cal_form.setRowVisible(row, False)
                for row in (self.row_minutes, self.row_hours):
                    self.cal_form.setRowVisible(row, False)
            return
        self._form = form
        self._show_form(form)

    def _show_form(self, form: RuleForm) -> None:
        self.interval.setValue(form.interval)
        for i in range(self.freq.count()):
            words = UNIT_WORDS[str(self.freq.itemData(i))]
            self.freq.setItemText(i, words if form.interval != 1 else words[:-1])
        self.freq.setCurrentIndex(self.freq.findData(form.freq))
        daily_or_finer = form.freq in ("MINUTELY", "HOURLY", "DAILY")
        self.cal_form.setRowVisible(self.row_weekdays, not form.uses_days_of_month)
        self.weekday_label.setText("Only on" if daily_or_finer else "On")
        self.weekday_hint.setVisible(daily_or_finer)
        for button in self.weekday_buttons:
            button.setChecked(button.property("weekday") in form.weekdays)
        self.cal_form.setRowVisible(self.row_months, form.freq == "YEARLY")
        for button in self.month_buttons:
            button.setChecked(button.property("month") in form.months)
        self.cal_form.setRowVisible(self.row_day, form.uses_days_of_month)
        self.month_mode.setCurrentIndex(self.month_mode.findData(form.month_mode))
        self.month_days.setVisible(form.month_mode == "day")
        self.nth.setVisible(form.month_mode == "nth_weekday")
        self.nth_weekday.setVisible(form.month_mode == "nth_weekday")
        self._set_if_different(self.month_days, format_numbers(form.month_days), "days of the month", 1, 31)
        self.nth.setCurrentIndex(self.nth.findData(form.nth))
        self.nth_weekday.setCurrentIndex(self.nth_weekday.findData(form.nth_weekday))
        coarse = form.freq not in ("MINUTELY", "HOURLY")
        self.cal_form.setRowVisible(self.row_times, coarse)
        if coarse:
            try:
                same = parse_times(self.times.text()) == form.times
            except ValueError:
                same = False
            if not same:
                self.times.setText(format_times(form.times))
        self.cal_form.setRowVisible(self.row_minutes, form.freq == "HOURLY")
        self._set_if_different(self.minutes, format_numbers(form.minutes), "minutes", 0, 59)
        self.cal_form.setRowVisible(self.row_hours, not coarse)
        self._set_if_different(self.hours, format_numbers(form.hours), "hours", 0, 23)

    @staticmethod
    def _set_if_different(edit: QLineEdit, text: str, what: str, lo: int, hi: int) -> None:
        """Leave what the person typed alone when it already means the document's value."""
        try:
            same = parse_numbers(edit.text(), lo, hi, what) == parse_numbers(text, lo, hi, what)
        except ValueError:
            same = False
        if not same:
            edit.setText(text)

    # --- writing the rule ---------------------------------------------------------------------
    def _commit(self, form: RuleForm, label: str, merge_key: str | None = None) -> None:
        try:
            text = rule_text(form)
        except FormError as exc:
            self._state.set_local_error("form", str(exc))
            return
        self._state.set_local_error("form", None)
        self._state.doc.set_values({"rule": text}, label=label, merge_key=merge_key)

    def _editable(self) -> RuleForm | None:
        return None if self._state.updating or not self.interval.isEnabled() else self._form

    def _on_interval(self, value: int) -> None:
        form = self._editable()
        if form is not None:
            self._commit(replace(form, interval=value), "Repeat every", merge_key="form:interval")

    def _on_freq(self, index: int) -> None:
        form = self._editable()
        if form is not None:
            freq = str(self.freq.itemData(index))
            self._commit(switch_frequency(form, freq, self._state.start_value()), f"Repeat in {UNIT_WORDS[freq]}")

    def _on_weekdays(self) -> None:
        form = self._editable()
        if form is not None:
            days = tuple(str(b.property("weekday")) for b in self.weekday_buttons if b.isChecked())
            self._commit(replace(form, weekdays=days), "Weekdays")

    def _on_months(self) -> None:
        form = self._editable()
        if form is not None:
            months = tuple(int(b.property("month")) for b in self.month_buttons if b.isChecked())
            self._commit(replace(form, months=months), "Months")

    def _on_month_mode(self, index: int) -> None:
        form = self._editable()
        if form is not None:
            mode = self.month_mode.itemData(index)
            days = form.month_days or (self._state.start_value().day,)
            months = form.months[:1] if mode == "last_weekday" else form.months
            self._commit(replace(form, month_mode=mode, month_days=days, months=months), "Day of the month")

    def _on_month_days(self, text: str) -> None:
        self._on_numbers(text, "month_days", (1, 31, "days of the month"), "Days of the month")

    def _on_numbers(self, text: str, field: str, bounds: tuple[int, int, str], label: str) -> None:
        """A typed list of numbers (days, minutes, hours) into one form field; unreadable text changes nothing."""
        form = self._editable()
        if form is None:
            return
        try:
            values = parse_numbers(text, *bounds)
        except ValueError as exc:
            self._state.set_local_error("form", str(exc))
            return
        changes: dict[str, Any] = {field: values}
        self._commit(replace(form, **changes), label, merge_key=f"form:{field}")

    def _on_nth(self) -> None:
        form = self._editable()
        if form is not None:
            nth, weekday = int(self.nth.currentData()), str(self.nth_weekday.currentData())
            self._commit(replace(form, nth=nth, nth_weekday=weekday), "Weekday of the month")

    def _on_times(self, text: str) -> None:
        form = self._editable()
        if form is None:
            return
        try:
            hours, minutes = times_parts(parse_times(text))
        except (ValueError, FormError) as exc:
            self._state.set_local_error("form", str(exc))
            return
        self._commit(replace(form, hours=hours, minutes=minutes), "Times of day", merge_key="form:times")

    def _on_add_time(self) -> None:
        form = self._editable()
        if form is None or not form.hours:
            return
        free = [h for h in range(24) if h not in form.hours]
        if not free:
            return
        after = [h for h in free if h > form.hours[-1]]
        hour = after[0] if after else free[0]
        self._commit(replace(form, hours=tuple(sorted((*form.hours, hour)))), "Add a time of day")
        self.times.setFocus()

    def _on_minutes(self, text: str) -> None:
        self._on_numbers(text, "minutes", (0, 59, "minutes"), "Minutes past the hour")

    def _on_hours(self, text: str) -> None:
        self._on_numbers(text, "hours", (0, 23, "hours"), "Hours of the day")

    def _on_start(self) -> None:
        if not self._state.updating:
            self._state.doc.set_value("start", fmt_local(self.start.naive()), label="Start", merge=True)
