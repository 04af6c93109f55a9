"""The "When" box of the designer: the kind of schedule, its per-kind form
(calendar, interval, after completion), the time zone, the end, the exclusions
and, for calendar schedules, the raw RRULE kept in sync with the form.

The box reads and writes the :class:`SpecDocument` only; every edit is one
undo step (typing merges). After every change of the document the box shows
it again, part by part, without writing anything back. The parts live in
their own modules: ``calendar_form``, ``rule_field`` (the RRULE text),
``interval_forms`` (interval, after completion), ``ends_fields`` (ends,
exclusions); ``when_state`` is what they share and ``when_fields`` what they
are built from.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QComboBox, QGroupBox, QSizePolicy, QStackedWidget, QVBoxLayout, QWidget

from core.clock import Clock
from core.enums import Kind
from core.errors import ZoneError
from core.recurrence.form import RuleForm
from core.spec.model import KIND_KEYS
from core.time.formats import fmt_local, fmt_utc, parse_instant
from core.time.zones import get_zone
from scheduler_gui.a11y import accessible
from scheduler_gui.context import AppContext
from scheduler_gui.designer.calendar_form import CalendarForm
from scheduler_gui.designer.ends_fields import EndsField, ExclusionsField
from scheduler_gui.designer.interval_forms import AfterCompletionForm, IntervalForm
from scheduler_gui.designer.rule_field import CANNOT_SHOW, RuleTextField
from scheduler_gui.designer.tzdb_policy_field import TzdbPolicyField
from scheduler_gui.designer.when_fields import add_row, as_local, field_row, form_layout, split_duration, stack
from scheduler_gui.designer.when_state import WhenState
from scheduler_gui.designer.zone_picker import ZonePicker
from scheduler_gui.workspace.document import SpecDocument

__all__ = ["CANNOT_SHOW", "KINDS", "WhenForm", "kind_switch_changes", "split_duration"]

KINDS = (
    (Kind.CALENDAR.value, "Calendar", "On dates and times of the local wall clock (every day at 02:30, each Monday…)"),
    (Kind.INTERVAL.value, "Interval", "Every fixed amount of elapsed time (every 15 minutes), blind to the wall clock"),
    (
        Kind.AFTER_COMPLETION.value,
        "After completion",
        "A fixed delay after the previous run finished (24 hours after the last backup)",
    ),
)


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


class WhenForm(QGroupBox):
    """Kind, per-kind form, zone, end, exclusions and the RRULE of one schedule document."""

    def __init__(self, document: SpecDocument, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__("When", parent)
        self.setObjectName("whenForm")
        accessible(self, "When", "When the schedule runs: its kind, rule, time zone, start and end")
        self._doc = document
        self._clock: Clock = ctx.clock
        self._ctx = ctx
        self._state = state = WhenState(document, ctx.clock)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 6, 8, 6)
        outer.setSpacing(3)
        top = form_layout()
        self.kind = QComboBox(self)
        for value, words, kind_tip in KINDS:
            self.kind.addItem(words, value)
            self.kind.setItemData(self.kind.count() - 1, kind_tip, Qt.ItemDataRole.ToolTipRole)
        accessible(
            self.kind, "Kind", "The kind of schedule: a calendar rule, a fixed interval, or a delay after each run"
        )
        self.kind.activated.connect(self._on_kind)
        add_row(top, "Kind", stack(field_row(self.kind), state.error_line("kind", self, "Kind")), self.kind)
        outer.addLayout(top)

        # The pages, in the order of KINDS.
        self.calendar = CalendarForm(state)
        self.interval_form = IntervalForm(state)
        self.after_completion_form = AfterCompletionForm(state)
        self.stack = QStackedWidget(self)
        for page in (self.calendar, self.interval_form, self.after_completion_form):
            self.stack.addWidget(page)
        self.stack.currentChanged.connect(self._fit_stack)
        outer.addWidget(self.stack)

        # The shared rows are made without a parent: they join the box with the layout, in row order,
        # so Tab goes zone, ends, exclusions, rule.
        shared = form_layout()
        self.zone = ZonePicker(ctx.clock, self, name="Zone")
        self.zone.zoneChosen.connect(self._on_zone)
        add_row(shared, "Zone", stack(self.zone, state.error_line("timeZone", self, "Zone")), self.zone.edit)
        self.tzdb_policy = TzdbPolicyField(document)
        add_row(shared, "Zone rules", self.tzdb_policy, self.tzdb_policy.combo)
        self.ends = EndsField(state)
        add_row(shared, "Ends", self.ends, self.ends.end_never)
        self.exclusions = ExclusionsField(state)
        add_row(shared, "Except", self.exclusions, self.exclusions.exclude)
        self.rule_field = RuleTextField(state)
        add_row(shared, "RRULE", self.rule_field, self.rule_field.rule)
        self._shared = shared
        outer.addLayout(shared)
        outer.addStretch(1)  # extra height (beside a taller box) goes below the fields, not between them
        self._name_fields()

        document.changed.connect(self.refresh)
        self.refresh()
        QTimer.singleShot(0, self, self._fill_default_zone)

    def _name_fields(self) -> None:
        """Every part's fields as attributes of the box too (``form.times``, ``form.every``…), for tests and views."""
        cal = self.calendar
        self.cal_form, self.interval, self.freq = cal.cal_form, cal.interval, cal.freq
        self.weekday_buttons, self.weekday_label, self.weekday_hint = (
            cal.weekday_buttons,
            cal.weekday_label,
            cal.weekday_hint,
        )
        self.month_buttons, self.month_mode, self.month_days = cal.month_buttons, cal.month_mode, cal.month_days
        self.nth, self.nth_weekday = cal.nth, cal.nth_weekday
        self.times, self.add_time, self.minutes, self.hours = cal.times, cal.add_time, cal.minutes, cal.hours
        self.start, self.start_hint = cal.start, cal.start_hint
        self.row_repeats, self.row_weekdays, self.row_months = cal.row_repeats, cal.row_weekdays, cal.row_months
        self.row_day, self.row_times, self.row_minutes, self.row_hours = (
            cal.row_day,
            cal.row_times,
            cal.row_minutes,
            cal.row_hours,
        )
        self.every, self.anchor, self.anchor_hint = (
            self.interval_form.every,
            self.interval_form.anchor,
            self.interval_form.anchor_hint,
        )
        after = self.after_completion_form
        self.delay, self.first, self.first_hint = after.delay, after.first, after.first_hint
        ends = self.ends
        self.end_never, self.end_count_radio, self.end_count = ends.end_never, ends.end_count_radio, ends.end_count
        self.end_date_radio, self.end_date, self.end_group, self.end_hint = (
            ends.end_date_radio,
            ends.end_date,
            ends.end_group,
            ends.end_hint,
        )
        excl = self.exclusions
        self.exclude, self.exclude_day, self.exclude_add = excl.exclude, excl.exclude_day, excl.exclude_add
        self.rule, self.rule_note = self.rule_field.rule, self.rule_field.rule_note

    def _fit_stack(self, index: int) -> None:
        # Only the shown page takes room, so the box stays compact.
        for i in range(self.stack.count()):
            policy = QSizePolicy.Policy.Preferred if i == index else QSizePolicy.Policy.Ignored
            page = self.stack.widget(i)
            if page is not None:
                page.setSizePolicy(policy, policy)
        self.stack.adjustSize()

    # --- showing the document -----------------------------------------------------------------
    def refresh(self) -> None:
        """Show the document (called on every change; writes nothing back)."""
        state = self._state
        state.updating = True
        try:
            kind = state.kind_value()
            self.kind.setCurrentIndex(self.kind.findData(kind))
            index = [k for k, _, _ in KINDS].index(kind)
            if self.stack.currentIndex() != index:
                self.stack.setCurrentIndex(index)
            self._fit_stack(index)
            zone = state.zone_name()
            if zone != self.zone.zone() or not self.zone.edit.hasFocus():
                self.zone.set_zone(zone)
            calendar = kind == Kind.CALENDAR.value
            self._shared.setRowVisible(self.rule_field, calendar)
            # Only the page shown can hold unfinished text: the others' problems must not block Save.
            if calendar:
                self.calendar.show_document()
                self.rule_field.show_document(shown_in_form=self.calendar.current_form() is not None)
            else:
                self.calendar.forget()
                self.rule_field.forget()
            if kind == Kind.INTERVAL.value:
                self.interval_form.show_document()
            else:
                self.interval_form.forget()
            if kind == Kind.AFTER_COMPLETION.value:
                self.after_completion_form.show_document()
            else:
                self.after_completion_form.forget()
            self.ends.show_document(calendar)
            self.exclusions.show_document()
            self.tzdb_policy.show_document()
            state.show_problems()
        finally:
            state.updating = False

    # --- writing the document -----------------------------------------------------------------
    def _on_kind(self, index: int) -> None:
        state = self._state
        if state.updating:
            return
        kind = str(self.kind.itemData(index))
        if kind == state.kind_value() and "kind" in self._doc.data:
            return
        changes = kind_switch_changes(self._doc.data, kind, self._clock.now())
        self._doc.set_values(changes, label=f"Make it {self.kind.itemText(index).lower()}")

    def _on_zone(self, name: str) -> None:
        self._doc.set_value("timeZone", name, label=f"Time zone {name}")

    def _fill_default_zone(self) -> None:
        """A new, untouched schedule without a zone gets the workspace's zone (asked about on its first save)."""
        if self._doc.value("timeZone") is None and self._doc.path is None and self._doc.undo_stack.count() == 0:
            from core.spec.workspace_settings import read_settings
            from scheduler_gui.workspace.zone import UntouchedZone

            zone = read_settings(self._ctx.workspace, self._ctx.machine_zone()).zone
            self._doc.set_value("timeZone", zone, label="Use the workspace's time zone")
            UntouchedZone.attach(self._doc, zone)

    # --- for tests and other views --------------------------------------------------------------
    def current_form(self) -> RuleForm | None:
        """The calendar form shown, or None while the rule is invalid or beyond the form."""
        return self.calendar.current_form()

    def error_text(self, key: str) -> str:
        """The messages shown on the lines of the spec key ``key`` (``rule``, ``start``, ``exclude``…)."""
        return self._state.error_text(key)
