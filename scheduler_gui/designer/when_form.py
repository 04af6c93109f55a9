"""The "When" box of the designer: the kind of schedule, its per-kind form
(calendar, interval, after completion), the time zone, the end, the exclusions
and, for calendar schedules, the raw RRULE kept in sync with the form.

The form reads and writes the :class:`SpecDocument` only; every edit is one
undo step (typing merges). The calendar form is derived from the rule text on
every change (``core.recurrence.form``), so the text, the form, undo and redo
can never disagree. A rule the form cannot show leaves the form disabled with
a note, and the text stays editable.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from PySide6.QtCore import QDate, QDateTime, Qt, QTime, QTimer, QTimeZone
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDateEdit,
    QDateTimeEdit,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.clock import Clock
from core.durations import format_duration, parse_duration
from core.enums import Kind
from core.errors import ZoneError
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
    rule_without_end,
    switch_frequency,
    times_parts,
    with_count,
)
from core.recurrence.rules import WEEKDAYS, RuleError, parse_rule
from core.spec import KIND_KEYS
from core.timefmt import fmt_local, fmt_utc, parse_instant, parse_local, parse_local_or_date
from core.zone_info import system_zone_name, wall_time_hint
from core.zones import get_zone
from scheduler_gui.context import AppContext
from scheduler_gui.designer.zone_picker import ErrorLine, ZonePicker, tabular
from scheduler_gui.document import SpecDocument

CANNOT_SHOW = "This rule uses parts the form cannot show; edit it as text."
KINDS = (
    (Kind.CALENDAR.value, "Calendar", "On dates and times of the local wall clock (every day at 02:30, each Monday…)"),
    (Kind.INTERVAL.value, "Interval", "Every fixed amount of elapsed time (every 15 minutes), blind to the wall clock"),
    (
        Kind.AFTER_COMPLETION.value,
        "After completion",
        "A fixed delay after the previous run finished (24 hours after the last backup)",
    ),
)
_UNIT_WORDS = {
    "MINUTELY": "minutes",
    "HOURLY": "hours",
    "DAILY": "days",
    "WEEKLY": "weeks",
    "MONTHLY": "months",
    "YEARLY": "years",
}
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_NTH_WORDS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", -1: "last"}
_MODE_WORDS = (
    ("day", "on day(s)"),
    ("nth_weekday", "on the"),
    ("last_day", "on the last day"),
    ("last_weekday", "on the last weekday (Mon–Fri)"),
)
#: Duration units for the interval and delay fields, largest first.
_DURATION_UNITS = (("days", 86400), ("hours", 3600), ("minutes", 60), ("seconds", 1))
_LABEL_WIDTH = 64


# --- pure helpers ---------------------------------------------------------------------


def as_local(value: Any) -> datetime | None:
    """A document's local date-time value (text, datetime or date) as a naive datetime, or None."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return datetime.combine(value, datetime.min.time())
    if isinstance(value, str):
        try:
            return parse_local(value)
        except ValueError:
            return None
    return None


def split_duration(value: Any) -> tuple[int, str]:
    """A duration as (number, unit) in the largest unit that divides it (``PT90M`` → 90 minutes)."""
    try:
        seconds = int(parse_duration(value).total_seconds()) if isinstance(value, str) else 0
    except ValueError:
        seconds = 0
    if seconds <= 0:
        return 1, "hours"
    for unit, size in _DURATION_UNITS:
        if seconds % size == 0:
            return seconds // size, unit
    return seconds, "seconds"


def join_duration(number: int, unit: str) -> str:
    return format_duration(timedelta(seconds=number * dict(_DURATION_UNITS)[unit]))


def kind_switch_changes(data: dict[str, Any], kind: str, now: datetime) -> dict[str, Any]:
    """The edits that turn ``data`` into a schedule of ``kind``: keys the kind forbids removed,
    keys it requires filled with sensible defaults (taken from the other kind's times when possible)."""
    required, forbidden = KIND_KEYS[Kind(kind)]
    changes: dict[str, Any] = {"kind": kind}
    for key in sorted(forbidden):
        if data.get(key) is not None:
            changes[key] = None
    try:
        zone = get_zone(str(data.get("timeZone")))
    except ZoneError:
        zone = get_zone("UTC")
    start = as_local(data.get("start"))
    anchor: datetime | None = None
    if isinstance(data.get("anchor"), str):
        try:
            anchor = parse_instant(data["anchor"])
        except ValueError:
            anchor = None
    local_now = now.astimezone(zone).replace(tzinfo=None, second=0, microsecond=0)
    reference = start or (anchor.astimezone(zone).replace(tzinfo=None) if anchor else None)
    reference = reference or local_now.replace(hour=9, minute=0) + timedelta(days=1)
    defaults = {
        "rule": f"FREQ=DAILY;BYHOUR={reference.hour};BYMINUTE={reference.minute}",
        "start": fmt_local(reference.replace(hour=0, minute=0, second=0) if kind == "calendar" else reference),
        "gapPolicy": "SHIFT_FORWARD",
        "foldPolicy": "FIRST_ONLY",
        "every": "PT1H",
        "anchor": fmt_utc(reference.replace(tzinfo=zone).astimezone(UTC)),
        "delay": "PT24H",
    }
    for key in sorted(required):
        if data.get(key) is None:
            changes[key] = defaults[key]
    return changes


# --- small widgets ----------------------------------------------------------------------


def _field_row(*widgets: QWidget, stretch_last: bool = False) -> QWidget:
    box = QWidget()
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    for w in widgets:
        layout.addWidget(w)
    if not stretch_last:
        layout.addStretch(1)
    return box


def _stack(*widgets: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(1)
    for w in widgets:
        layout.addWidget(w)
    return box


def _tip(widget: QWidget, name: str, tip: str) -> None:
    widget.setAccessibleName(name)
    widget.setToolTip(tip)


def _form_layout(parent: QWidget | None = None) -> QFormLayout:
    form = QFormLayout(parent)
    form.setContentsMargins(0, 0, 0, 0)
    form.setHorizontalSpacing(6)
    form.setVerticalSpacing(3)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    return form


def _label(text: str) -> QLabel:
    label = QLabel(text)
    label.setMinimumWidth(_LABEL_WIDTH)
    return label


class WallTimeEdit(QDateTimeEdit):
    """A date-time field for a naive wall time: no system time zone gets in the way (no gap, no fold)."""

    def __init__(self, parent: QWidget | None = None, *, with_time: bool = True) -> None:
        super().__init__(parent)
        self.setTimeZone(QTimeZone(QTimeZone.Initialization.UTC))
        self.setDisplayFormat("yyyy-MM-dd HH:mm" if with_time else "yyyy-MM-dd")
        self.setCalendarPopup(True)
        self.setFont(tabular(self.font()))
        self.setMinimumDate(QDate(1900, 1, 1))

    def naive(self) -> datetime:
        d, t = self.date(), self.time()
        return datetime(d.year(), d.month(), d.day(), t.hour(), t.minute())

    def set_naive(self, value: datetime) -> None:
        qdt = QDateTime(QDate(value.year, value.month, value.day), QTime(value.hour, value.minute))
        qdt.setTimeZone(QTimeZone(QTimeZone.Initialization.UTC))
        if self.dateTime() != qdt:
            self.setDateTime(qdt)


class DurationField(QWidget):
    """A number and a unit (seconds … days) for an ISO 8601 duration."""

    def __init__(self, name: str, tip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.number = QSpinBox(self)
        self.number.setRange(1, 100000)
        self.number.setFont(tabular(self.number.font()))
        _tip(self.number, f"{name}: how many", tip)
        self.unit = QComboBox(self)
        for unit, _ in reversed(_DURATION_UNITS):
            self.unit.addItem(unit, unit)
        _tip(self.unit, f"{name}: unit", tip)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.number)
        layout.addWidget(self.unit)
        layout.addStretch(1)
        self.setFocusProxy(self.number)

    def value(self) -> str:
        return join_duration(self.number.value(), str(self.unit.currentData()))

    def set_value(self, text: Any) -> None:
        number, unit = split_duration(text)
        self.number.setValue(number)
        self.unit.setCurrentIndex(self.unit.findData(unit))


# --- the box ------------------------------------------------------------------------------


class WhenForm(QGroupBox):
    """Kind, per-kind form, zone, end, exclusions and the RRULE of one schedule document."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__("When", parent)
        self.setObjectName("whenForm")
        self.setAccessibleName("When")
        self.setToolTip("When the schedule runs: its kind, rule, time zone, start and end")
        self._doc = document
        self._clock: Clock = ctx.clock
        self._updating = False
        self._form: RuleForm | None = None
        self._local_errors: dict[str, str] = {}
        self._rule_parse_error: str | None = None
        self._errors: dict[str, list[ErrorLine]] = {}

        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 6, 8, 6)
        outer.setSpacing(3)
        top = _form_layout()
        self.kind = QComboBox(self)
        for value, words, tip in KINDS:
            self.kind.addItem(words, value)
            self.kind.setItemData(self.kind.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        _tip(self.kind, "Kind of schedule", "Calendar rule, fixed interval, or a delay after each completed run")
        self.kind.activated.connect(self._on_kind)
        top.addRow(_label("Kind"), _stack(_field_row(self.kind), self._error_line("kind")))
        outer.addLayout(top)

        self.stack = QStackedWidget(self)
        self.stack.addWidget(self._build_calendar())
        self.stack.addWidget(self._build_interval())
        self.stack.addWidget(self._build_after_completion())
        self.stack.currentChanged.connect(self._fit_stack)
        outer.addWidget(self.stack)

        shared = _form_layout()
        self.zone = ZonePicker(ctx.clock, self)
        self.zone.zoneChosen.connect(self._on_zone)
        shared.addRow(_label("Zone"), _stack(self.zone, self._error_line("timeZone")))
        shared.addRow(_label("Ends"), self._build_ends())
        self.exclude = QLineEdit(self)
        self.exclude.setPlaceholderText("dates to skip, e.g. 2026-12-25, 2027-01-01")
        self.exclude.setFont(tabular(self.exclude.font()))
        _tip(
            self.exclude,
            "Exclusions",
            "Local dates (2026-12-25) or local date-times (2026-12-25T02:30) on which the schedule does not run, "
            "separated by commas",
        )
        self.exclude.textEdited.connect(self._on_exclude)
        self.exclude_day = QDateEdit(self)
        self.exclude_day.setDisplayFormat("yyyy-MM-dd")
        self.exclude_day.setCalendarPopup(True)
        self.exclude_day.setFont(tabular(self.exclude_day.font()))
        _tip(self.exclude_day, "Date to skip", "Pick a local date, then press 'skip' to add it to the exclusions")
        self.exclude_add = QToolButton(self)
        self.exclude_add.setText("+ skip")
        _tip(self.exclude_add, "Add the date to skip", "Add the picked date to the exclusions")
        self.exclude_add.clicked.connect(self._on_exclude_add)
        tomorrow = self._clock.now().date() + timedelta(days=1)
        self.exclude_day.setDate(QDate(tomorrow.year, tomorrow.month, tomorrow.day))
        shared.addRow(
            _label("Except"),
            _stack(
                _field_row(self.exclude, self.exclude_day, self.exclude_add, stretch_last=True),
                self._error_line("exclude"),
            ),
        )
        self.rule = QLineEdit(self)
        self.rule.setObjectName("ruleText")
        self.rule.setFont(tabular(self.rule.font()))
        self.rule.setPlaceholderText("FREQ=DAILY;BYHOUR=2;BYMINUTE=30")
        _tip(
            self.rule,
            "RRULE",
            "The rule as RFC 5545 RRULE text. It follows the form above, and editing it updates the form.",
        )
        self.rule.textEdited.connect(self._on_rule_text)
        self.rule_note = QLabel(CANNOT_SHOW, self)
        self.rule_note.setWordWrap(True)
        self.rule_note.setAccessibleName("Rule note")
        self.rule_note.setVisible(False)
        self._rule_label = _label("RRULE")
        self._rule_field = _stack(self.rule, self._error_line("rule"), self.rule_note)
        shared.addRow(self._rule_label, self._rule_field)
        self._shared = shared
        outer.addLayout(shared)
        outer.addStretch(1)  # extra height (beside a taller box) goes below the fields, not between them

        document.changed.connect(self.refresh)
        self.refresh()
        QTimer.singleShot(0, self, self._fill_default_zone)

    # --- building ---------------------------------------------------------------------
    def _error_line(self, key: str) -> ErrorLine:
        line = ErrorLine(self)
        line.setObjectName(f"error_{key}")
        self._errors.setdefault(key, []).append(line)
        return line

    def _build_calendar(self) -> QWidget:
        page = QWidget()
        page.setAccessibleName("Calendar form")
        form = _form_layout(page)
        self.cal_form = form
        self.interval = QSpinBox(page)
        self.interval.setRange(1, 1000)
        self.interval.setPrefix("every ")
        _tip(self.interval, "Repeat every", "Repeat every this many units (every 2 weeks = every other week)")
        self.interval.valueChanged.connect(self._on_interval)
        self.freq = QComboBox(page)
        for freq in reversed(FREQUENCIES):
            self.freq.addItem(_UNIT_WORDS[freq], freq)
        _tip(self.freq, "Repeat unit", "Minutes, hours, days, weeks, months or years")
        self.freq.activated.connect(self._on_freq)
        self.row_repeats = self._add_row(form, "Repeats", _field_row(self.interval, self.freq))

        self.weekday_buttons: list[QToolButton] = []
        days = QWidget(page)
        days_layout = QHBoxLayout(days)
        days_layout.setContentsMargins(0, 0, 0, 0)
        days_layout.setSpacing(2)
        for i, code in enumerate(WEEKDAYS):
            button = QToolButton(days)
            button.setCheckable(True)
            button.setText(self.locale().dayName(i + 1, self.locale().FormatType.ShortFormat))
            _tip(button, _DAY_NAMES[i], f"Run on {_DAY_NAMES[i]}s")
            button.setProperty("weekday", code)
            button.toggled.connect(self._on_weekdays)
            days_layout.addWidget(button)
            self.weekday_buttons.append(button)
        self.weekday_hint = QLabel("none: every day", days)
        self.weekday_hint.setEnabled(False)
        days_layout.addWidget(self.weekday_hint)
        days_layout.addStretch(1)
        self.weekday_label = _label("On")
        form.addRow(self.weekday_label, days)
        self.row_weekdays = form.rowCount() - 1

        self.month_buttons: list[QToolButton] = []
        months = QWidget(page)
        months_layout = QHBoxLayout(months)
        months_layout.setContentsMargins(0, 0, 0, 0)
        months_layout.setSpacing(1)
        for m in range(1, 13):
            button = QToolButton(months)
            button.setCheckable(True)
            button.setText(self.locale().monthName(m, self.locale().FormatType.ShortFormat))
            _tip(button, _MONTH_NAMES[m - 1], f"Run in {_MONTH_NAMES[m - 1]}")
            button.setProperty("month", m)
            button.toggled.connect(self._on_months)
            months_layout.addWidget(button)
            self.month_buttons.append(button)
        months_layout.addStretch(1)
        self.row_months = self._add_row(form, "In", months)

        self.month_mode = QComboBox(page)
        for value, words in _MODE_WORDS:
            self.month_mode.addItem(words, value)
        _tip(self.month_mode, "Day of the month", "A day number, the Nth weekday, the last day or the last weekday")
        self.month_mode.activated.connect(self._on_month_mode)
        self.month_days = QLineEdit(page)
        self.month_days.setPlaceholderText("1, 15")
        self.month_days.setMaximumWidth(110)
        _tip(self.month_days, "Days of the month", "Day numbers 1-31, separated by commas (1, 15) or as a range")
        self.month_days.textEdited.connect(self._on_month_days)
        self.nth = QComboBox(page)
        for n in NTH_CHOICES:
            self.nth.addItem(_NTH_WORDS[n], n)
        _tip(self.nth, "Which weekday of the month", "First, second, third, fourth, fifth or last")
        self.nth.activated.connect(self._on_nth)
        self.nth_weekday = QComboBox(page)
        for i, code in enumerate(WEEKDAYS):
            self.nth_weekday.addItem(self.locale().dayName(i + 1, self.locale().FormatType.LongFormat), code)
        _tip(self.nth_weekday, "Weekday of the month", "The weekday counted in the month")
        self.nth_weekday.activated.connect(self._on_nth)
        self.row_day = self._add_row(
            form, "Day", _field_row(self.month_mode, self.month_days, self.nth, self.nth_weekday)
        )

        self.times = QLineEdit(page)
        self.times.setObjectName("timesOfDay")
        self.times.setFont(tabular(self.times.font()))
        self.times.setPlaceholderText("02:30")
        self.times.setMaximumWidth(220)
        _tip(self.times, "Times of day", "Local wall-clock times, separated by commas (09:00, 17:00)")
        self.times.textEdited.connect(self._on_times)
        self.add_time = QPushButton("+ another", page)
        _tip(self.add_time, "Add a time of day", "Add another time of day, an hour after the last one")
        self.add_time.clicked.connect(self._on_add_time)
        self.row_times = self._add_row(form, "At", _field_row(self.times, self.add_time))

        self.minutes = QLineEdit(page)
        self.minutes.setPlaceholderText("0, 30")
        self.minutes.setMaximumWidth(110)
        _tip(self.minutes, "Minutes past the hour", "Minutes past each hour, 0-59, separated by commas")
        self.minutes.textEdited.connect(self._on_minutes)
        self.row_minutes = self._add_row(form, "At", _field_row(self.minutes, QLabel("minutes past the hour")))

        self.hours = QLineEdit(page)
        self.hours.setPlaceholderText("every hour")
        self.hours.setMaximumWidth(110)
        _tip(self.hours, "Only in hours", "Run only in these hours of the day (9-17); empty means every hour")
        self.hours.textEdited.connect(self._on_hours)
        self.row_hours = self._add_row(form, "Hours", _field_row(self.hours, QLabel("empty: every hour")))

        self.start = WallTimeEdit(page)
        _tip(self.start, "Starts", "The first local date and time the rule counts from (DTSTART)")
        self.start.dateTimeChanged.connect(self._on_start)
        self.start_hint = QLabel(page)
        self.start_hint.setFont(tabular(self.start_hint.font()))
        self.start_hint.setAccessibleName("Start in UTC")
        self._add_row(form, "Starts", _stack(_field_row(self.start, self.start_hint), self._error_line("start")))
        self.form_error = ErrorLine(page)
        self.form_error.setObjectName("error_form")
        form.addRow(self.form_error)
        self._calendar_controls = [
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
        return page

    def _add_row(self, form: QFormLayout, label: str, field: QWidget) -> int:
        form.addRow(_label(label), field)
        return form.rowCount() - 1

    def _build_interval(self) -> QWidget:
        page = QWidget()
        page.setAccessibleName("Interval form")
        form = _form_layout(page)
        self.every = DurationField("Every", "How much elapsed time between runs", page)
        self.every.number.valueChanged.connect(self._on_every)
        self.every.unit.activated.connect(self._on_every)
        form.addRow(_label("Every"), _stack(self.every, self._error_line("every")))
        self.anchor = WallTimeEdit(page)
        _tip(self.anchor, "Anchor", "The first run, on the zone's wall clock; later runs are whole intervals after it")
        self.anchor.dateTimeChanged.connect(self._on_anchor)
        self.anchor_hint = QLabel(page)
        self.anchor_hint.setFont(tabular(self.anchor_hint.font()))
        self.anchor_hint.setAccessibleName("Anchor in UTC")
        form.addRow(_label("From"), _stack(_field_row(self.anchor, self.anchor_hint), self._error_line("anchor")))
        return page

    def _build_after_completion(self) -> QWidget:
        page = QWidget()
        page.setAccessibleName("After completion form")
        form = _form_layout(page)
        self.delay = DurationField("Delay", "How long after the previous run finished the next one is due", page)
        self.delay.number.valueChanged.connect(self._on_delay)
        self.delay.unit.activated.connect(self._on_delay)
        form.addRow(_label("Delay"), _stack(self.delay, self._error_line("delay")))
        self.first = WallTimeEdit(page)
        _tip(self.first, "First run", "The first appointment, on the zone's wall clock")
        self.first.dateTimeChanged.connect(self._on_first)
        self.first_hint = QLabel(page)
        self.first_hint.setFont(tabular(self.first_hint.font()))
        self.first_hint.setAccessibleName("First run in UTC")
        form.addRow(_label("First"), _stack(_field_row(self.first, self.first_hint), self._error_line("start")))
        return page

    def _build_ends(self) -> QWidget:
        self.end_never = QRadioButton("never", self)
        _tip(self.end_never, "Ends: never", "The schedule keeps running")
        self.end_count_radio = QRadioButton("after", self)
        _tip(self.end_count_radio, "Ends after a number of runs", "Stop after this many occurrences (COUNT)")
        self.end_count = QSpinBox(self)
        self.end_count.setRange(1, 100000)
        self.end_count.setSuffix(" times")
        _tip(self.end_count, "Number of occurrences", "How many occurrences in all (COUNT in the rule)")
        self.end_date_radio = QRadioButton("on", self)
        _tip(self.end_date_radio, "Ends on a date", "The last day the schedule runs, included (the spec's end)")
        self.end_date = QDateEdit(self)
        self.end_date.setDisplayFormat("yyyy-MM-dd")
        self.end_date.setCalendarPopup(True)
        self.end_date.setFont(tabular(self.end_date.font()))
        _tip(self.end_date, "End date", "The last local day on which the schedule runs (included)")
        self.end_group = QButtonGroup(self)
        for button in (self.end_never, self.end_count_radio, self.end_date_radio):
            self.end_group.addButton(button)
        self.end_group.buttonClicked.connect(self._on_end_choice)
        self.end_count.valueChanged.connect(self._on_end_count)
        self.end_date.dateChanged.connect(self._on_end_date)
        self.end_hint = QLabel(self)
        self.end_hint.setWordWrap(True)
        self.end_hint.setEnabled(False)
        row = _field_row(self.end_never, self.end_count_radio, self.end_count, self.end_date_radio, self.end_date)
        return _stack(row, self.end_hint, self._error_line("end"))

    def _fit_stack(self, index: int) -> None:
        # Only the shown page takes room, so the box stays compact.
        for i in range(self.stack.count()):
            policy = QSizePolicy.Policy.Preferred if i == index else QSizePolicy.Policy.Ignored
            self.stack.widget(i).setSizePolicy(policy, policy)
        self.stack.adjustSize()

    # --- reading the document -------------------------------------------------------------
    def _now_local(self) -> datetime:
        try:
            zone = get_zone(self._zone_name())
        except ZoneError:
            zone = get_zone("UTC")
        return self._clock.now().astimezone(zone).replace(tzinfo=None, second=0, microsecond=0)

    def _zone_name(self) -> str:
        value = self._doc.value("timeZone")
        return value if isinstance(value, str) else ""

    def _kind_value(self) -> str:
        value = self._doc.value("kind", Kind.CALENDAR.value)
        return value if value in {k for k, _, _ in KINDS} else Kind.CALENDAR.value

    def _start_value(self) -> datetime:
        return as_local(self._doc.value("start")) or self._now_local().replace(hour=0, minute=0)

    def _rule_value(self) -> str:
        value = self._doc.value("rule")
        return value if isinstance(value, str) else ""

    def refresh(self) -> None:
        """Show the document (called on every change; writes nothing back)."""
        self._updating = True
        try:
            kind = self._kind_value()
            self.kind.setCurrentIndex(self.kind.findData(kind))
            index = [k for k, _, _ in KINDS].index(kind)
            if self.stack.currentIndex() != index:
                self.stack.setCurrentIndex(index)
            self._fit_stack(index)
            zone = self._zone_name()
            if zone != self.zone.zone() or not self.zone.edit.hasFocus():
                self.zone.set_zone(zone)
            calendar = kind == Kind.CALENDAR.value
            self._shared.setRowVisible(self._rule_field, calendar)
            if calendar:
                self._show_calendar()
            elif kind == Kind.INTERVAL.value:
                self._show_interval()
            else:
                self._show_after_completion()
            self._show_ends(calendar)
            self._show_exclusions()
            self._show_problems()
        finally:
            self._updating = False

    def _show_calendar(self) -> None:
        text = self._rule_value()
        if self.rule.text() != text:
            self.rule.setText(text)
            self.rule.setCursorPosition(0)
        start = self._start_value()
        self.start.set_naive(start)
        self.start_hint.setText(wall_time_hint(as_local(self._doc.value("start")), self._zone_name()))
        try:
            form = form_from_rule(text, start)
            parse_error = None
        except RuleError as exc:
            form, parse_error = None, str(exc)
        self._rule_parse_error = parse_error
        self.rule_note.setVisible(form is None and parse_error is None and bool(text))
        for control in self._calendar_controls:
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
        self.interval.setValue(form.interval)
        for i in range(self.freq.count()):
            words = _UNIT_WORDS[str(self.freq.itemData(i))]
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

    def _set_if_different(self, edit: QLineEdit, text: str, what: str, lo: int, hi: int) -> None:
        """Leave what the person typed alone when it already means the document's value."""
        try:
            same = parse_numbers(edit.text(), lo, hi, what) == parse_numbers(text, lo, hi, what)
        except ValueError:
            same = False
        if not same:
            edit.setText(text)

    def _show_interval(self) -> None:
        self.every.set_value(self._doc.value("every"))
        anchor: datetime | None = None
        value = self._doc.value("anchor")
        try:
            anchor = parse_instant(value) if isinstance(value, str) else None
        except ValueError:
            anchor = None
        try:
            zone = get_zone(self._zone_name())
        except ZoneError:
            zone = get_zone("UTC")
        local = anchor.astimezone(zone).replace(tzinfo=None) if anchor else self._now_local()
        self.anchor.set_naive(local)
        self.anchor_hint.setText(wall_time_hint(local, self._zone_name()) if anchor else "")

    def _show_after_completion(self) -> None:
        self.delay.set_value(self._doc.value("delay"))
        start = self._start_value()
        self.first.set_naive(start)
        self.first_hint.setText(wall_time_hint(as_local(self._doc.value("start")), self._zone_name()))

    def _show_ends(self, calendar: bool) -> None:
        count: int | None = None
        until_day: date | None = None
        if calendar:
            try:
                parsed = parse_rule(self._rule_value())
                count = int(parsed.parts["COUNT"]) if "COUNT" in parsed.parts else None
                until = parsed.parts.get("UNTIL")
                until_day = datetime.strptime(until[:8], "%Y%m%d").date() if until else None
            except (RuleError, ValueError):
                pass
        end_day = self._end_day()
        self.end_count_radio.setVisible(calendar)
        self.end_count.setVisible(calendar)
        hint = ""
        if count is not None:
            self.end_count_radio.setChecked(True)
            self.end_count.setValue(count)
        elif end_day is not None or until_day is not None:
            self.end_date_radio.setChecked(True)
            shown = min(d for d in (end_day, until_day) if d is not None)
            self.end_date.setDate(QDate(shown.year, shown.month, shown.day))
            if until_day is not None:
                hint = "The end comes from UNTIL in the rule; choosing a date here moves it to the spec's end."
            elif isinstance(self._doc.value("end"), str) and self._doc.value("end").upper().endswith("Z"):
                hint = f"The spec ends at the instant {self._doc.value('end')}."
        else:
            self.end_never.setChecked(True)
            later = self._start_value() + timedelta(days=365)
            self.end_date.setDate(QDate(later.year, later.month, later.day))
        if count is None:
            self.end_count.setValue(10)
        self.end_count.setEnabled(count is not None)
        self.end_date.setEnabled(self.end_date_radio.isChecked())
        self.end_hint.setText(hint)
        self.end_hint.setVisible(bool(hint))

    def _end_day(self) -> date | None:
        value = self._doc.value("end")
        if isinstance(value, datetime):
            return value.date()
        if isinstance(value, date):
            return value
        if not isinstance(value, str):
            return None
        text = value.strip()
        try:
            if text.upper().endswith("Z") or re.search(r"[+-]\d{2}:?\d{2}$", text):
                instant = parse_instant(text)
                try:
                    return instant.astimezone(get_zone(self._zone_name())).date()
                except ZoneError:
                    return instant.date()
            found = parse_local_or_date(text)
        except ValueError:
            return None
        return found.date() if isinstance(found, datetime) else found

    def _show_exclusions(self) -> None:
        value = self._doc.value("exclude") or []
        items = [v.isoformat() if isinstance(v, (date, datetime)) else str(v) for v in value]
        try:
            same = self._parse_exclusions(self.exclude.text()) == items
        except ValueError:
            same = False
        if not same:
            self.exclude.setText(", ".join(items))

    def _show_problems(self) -> None:
        for key, lines in self._errors.items():
            messages = self._doc.problems_for(key)
            if key == "rule" and not messages and self._kind_value() == Kind.CALENDAR.value:
                messages = [self._rule_parse_error] if self._rule_parse_error else []
            local = self._local_errors.get(key)
            for line in lines:
                line.set_messages(([local] if local else []) + messages)
        self.form_error.set_messages([self._local_errors["form"]] if "form" in self._local_errors else [])

    def _set_local_error(self, key: str, message: str | None) -> None:
        if message:
            self._local_errors[key] = message
        else:
            self._local_errors.pop(key, None)
        self._show_problems()

    # --- writing the document ----------------------------------------------------------------
    def _commit_form(self, form: RuleForm, label: str, merge_key: str | None = None) -> None:
        try:
            text = rule_text(form)
        except FormError as exc:
            self._set_local_error("form", str(exc))
            return
        self._set_local_error("form", None)
        self._doc.set_values({"rule": text}, label=label, merge_key=merge_key)

    def _editable_form(self) -> RuleForm | None:
        return None if self._updating or not self.interval.isEnabled() else self._form

    def _on_kind(self, index: int) -> None:
        if self._updating:
            return
        kind = str(self.kind.itemData(index))
        if kind == self._kind_value() and "kind" in self._doc.data:
            return
        changes = kind_switch_changes(self._doc.data, kind, self._clock.now())
        self._local_errors.clear()
        self._doc.set_values(changes, label=f"Make it {self.kind.itemText(index).lower()}")

    def _on_zone(self, name: str) -> None:
        self._doc.set_value("timeZone", name, label=f"Time zone {name}")

    def _fill_default_zone(self) -> None:
        """A new, untouched schedule without a zone gets the system's zone."""
        if self._doc.value("timeZone") is None and self._doc.path is None and self._doc.undo_stack.count() == 0:
            self._doc.set_value("timeZone", system_zone_name(), label="Use the system time zone")

    def _on_interval(self, value: int) -> None:
        form = self._editable_form()
        if form is not None:
            self._commit_form(replace(form, interval=value), "Repeat every", merge_key="form:interval")

    def _on_freq(self, index: int) -> None:
        form = self._editable_form()
        if form is not None:
            freq = str(self.freq.itemData(index))
            self._commit_form(switch_frequency(form, freq, self._start_value()), f"Repeat in {_UNIT_WORDS[freq]}")

    def _on_weekdays(self) -> None:
        form = self._editable_form()
        if form is not None:
            days = tuple(str(b.property("weekday")) for b in self.weekday_buttons if b.isChecked())
            self._commit_form(replace(form, weekdays=days), "Weekdays")

    def _on_months(self) -> None:
        form = self._editable_form()
        if form is not None:
            months = tuple(int(b.property("month")) for b in self.month_buttons if b.isChecked())
            self._commit_form(replace(form, months=months), "Months")

    def _on_month_mode(self, index: int) -> None:
        form = self._editable_form()
        if form is not None:
            mode = self.month_mode.itemData(index)
            days = form.month_days or (self._start_value().day,)
            months = form.months[:1] if mode == "last_weekday" else form.months
            self._commit_form(replace(form, month_mode=mode, month_days=days, months=months), "Day of the month")

    def _on_month_days(self, text: str) -> None:
        self._on_numbers(text, "month_days", (1, 31, "days of the month"), "Days of the month")

    def _on_numbers(self, text: str, field: str, bounds: tuple[int, int, str], label: str) -> None:
        """A typed list of numbers (days, minutes, hours) into one form field; unreadable text changes nothing."""
        form = self._editable_form()
        if form is None:
            return
        try:
            values = parse_numbers(text, *bounds)
        except ValueError as exc:
            self._set_local_error("form", str(exc))
            return
        self._commit_form(replace(form, **{field: values}), label, merge_key=f"form:{field}")

    def _on_nth(self) -> None:
        form = self._editable_form()
        if form is not None:
            nth, weekday = int(self.nth.currentData()), str(self.nth_weekday.currentData())
            self._commit_form(replace(form, nth=nth, nth_weekday=weekday), "Weekday of the month")

    def _on_times(self, text: str) -> None:
        form = self._editable_form()
        if form is None:
            return
        try:
            hours, minutes = times_parts(parse_times(text))
        except (ValueError, FormError) as exc:
            self._set_local_error("form", str(exc))
            return
        self._commit_form(replace(form, hours=hours, minutes=minutes), "Times of day", merge_key="form:times")

    def _on_add_time(self) -> None:
        form = self._editable_form()
        if form is None or not form.hours:
            return
        free = [h for h in range(24) if h not in form.hours]
        if not free:
            return
        after = [h for h in free if h > form.hours[-1]]
        hour = after[0] if after else free[0]
        self._commit_form(replace(form, hours=tuple(sorted((*form.hours, hour)))), "Add a time of day")
        self.times.setFocus()

    def _on_minutes(self, text: str) -> None:
        self._on_numbers(text, "minutes", (0, 59, "minutes"), "Minutes past the hour")

    def _on_hours(self, text: str) -> None:
        self._on_numbers(text, "hours", (0, 23, "hours"), "Hours of the day")

    def _on_rule_text(self, text: str) -> None:
        if self._updating:
            return
        self._set_local_error("form", None)
        self._doc.set_value("rule", text.strip() or None, label="Edit the rule", merge=True)

    def _on_start(self) -> None:
        if not self._updating:
            self._doc.set_value("start", fmt_local(self.start.naive()), label="Start", merge=True)

    def _on_first(self) -> None:
        if not self._updating:
            self._doc.set_value("start", fmt_local(self.first.naive()), label="First run", merge=True)

    def _on_every(self) -> None:
        if not self._updating:
            self._doc.set_value("every", self.every.value(), label="Every", merge=True)

    def _on_delay(self) -> None:
        if not self._updating:
            self._doc.set_value("delay", self.delay.value(), label="Delay", merge=True)

    def _on_anchor(self) -> None:
        if self._updating:
            return
        try:
            zone = get_zone(self._zone_name())
        except ZoneError:
            zone = get_zone("UTC")
        instant = self.anchor.naive().replace(tzinfo=zone).astimezone(UTC)
        self._doc.set_value("anchor", fmt_utc(instant), label="Anchor", merge=True)

    def _on_end_choice(self) -> None:
        if self._updating:
            return
        rule = self._rule_value()
        calendar = self._kind_value() == Kind.CALENDAR.value
        changes: dict[str, Any] = {}
        if calendar and rule:
            changes["rule"] = rule_without_end(rule)
        if self.end_never.isChecked():
            changes["end"] = None
            label = "Never ends"
        elif self.end_count_radio.isChecked():
            changes["end"] = None
            if calendar and rule:
                changes["rule"] = with_count(rule, self.end_count.value())
            label = "Ends after a number of runs"
        else:
            day = self._end_day() or (self._start_value() + timedelta(days=365)).date()
            changes["end"] = day.isoformat()
            label = "Ends on a date"
        self._doc.set_values(changes, label=label)

    def _on_end_count(self, value: int) -> None:
        if self._updating or not self.end_count_radio.isChecked():
            return
        text = with_count(self._rule_value(), value)
        self._doc.set_values({"rule": text}, label="Number of occurrences", merge_key="form:count")

    def _on_end_date(self, value: QDate) -> None:
        if self._updating or not self.end_date_radio.isChecked():
            return
        changes: dict[str, Any] = {"end": date(value.year(), value.month(), value.day()).isoformat()}
        rule = self._rule_value()
        if self._kind_value() == Kind.CALENDAR.value and rule:
            changes["rule"] = rule_without_end(rule)
        self._doc.set_values(changes, label="End date", merge_key="form:end")

    @staticmethod
    def _parse_exclusions(text: str) -> list[str]:
        out: list[str] = []
        for item in (i.strip() for i in text.split(",")):
            if not item:
                continue
            try:
                value = parse_local_or_date(item)
            except ValueError as exc:
                raise ValueError(f"{item!r}: {exc}") from None
            out.append(fmt_local(value) if isinstance(value, datetime) else value.isoformat())
        return out

    def _on_exclude(self, text: str) -> None:
        if self._updating:
            return
        try:
            items = self._parse_exclusions(text)
        except ValueError as exc:
            self._set_local_error("exclude", str(exc))
            return
        self._set_local_error("exclude", None)
        self._doc.set_value("exclude", items or None, label="Exclusions", merge=True)

    def _on_exclude_add(self) -> None:
        d = self.exclude_day.date()
        day = date(d.year(), d.month(), d.day()).isoformat()
        value = self._doc.value("exclude")
        items = [v.isoformat() if isinstance(v, (date, datetime)) else str(v) for v in value or []]
        if day not in items:
            self._doc.set_value("exclude", [*items, day], label=f"Skip {day}")

    # --- for tests and other views ---------------------------------------------------------------
    def current_form(self) -> RuleForm | None:
        """The calendar form shown, or None while the rule is invalid or beyond the form."""
        return self._form if self.interval.isEnabled() else None

    def error_text(self, key: str) -> str:
        """The message shown next to the field of ``key`` (``rule``, ``start``, ``form``…)."""
        if key == "form":
            return self.form_error.message()
        return "\n".join(line.message() for line in self._errors.get(key, []) if line.message())
