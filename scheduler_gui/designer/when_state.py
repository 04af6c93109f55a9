"""What the parts of the "When" box share: the document and the clock, the
document's values read the way every part needs them, the message lines under
fields with the typed fields that report to them, and whether the box is
showing the document (while it is, no field writes back, so showing a value
never becomes an undo step).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from PySide6.QtWidgets import QAbstractSpinBox, QLineEdit, QWidget

from core.clock import Clock
from core.enums import Kind
from core.errors import ZoneError
from core.time.formats import fmt_local
from core.time.zones import get_zone
from scheduler_gui.designer.field_problem import FieldProblem, ProblemLine, TypedField
from scheduler_gui.designer.typed_inputs import DateTimeField
from scheduler_gui.designer.when_fields import as_local
from scheduler_gui.workspace.document import SpecDocument

_KIND_VALUES = frozenset(kind.value for kind in Kind)


class WhenState:
    """The document of one "When" box, read for its parts, and the messages beside its fields."""

    def __init__(self, document: SpecDocument, clock: Clock) -> None:
        self.doc = document
        self.clock = clock
        self.updating = False
        """True while the box shows the document; edits made then are not written back."""
        self.rule_parse_error: str | None = None
        """Why the document's rule text cannot be read, shown under it until the document says more."""
        self._lines: list[ProblemLine] = []
        self._by_key: dict[str, list[ProblemLine]] = {}

    # --- the document's values --------------------------------------------------------------
    def zone_name(self) -> str:
        value = self.doc.value("timeZone")
        return value if isinstance(value, str) else ""

    def zone(self) -> ZoneInfo:
        """The document's zone; UTC while it has none or names no zone."""
        try:
            return get_zone(self.zone_name())
        except ZoneError:
            return get_zone("UTC")

    def kind_value(self) -> str:
        value = self.doc.value("kind", Kind.CALENDAR.value)
        return value if value in _KIND_VALUES else Kind.CALENDAR.value

    def is_calendar(self) -> bool:
        return self.kind_value() == Kind.CALENDAR.value

    def now_local(self) -> datetime:
        """Now on the zone's wall clock, to the minute."""
        return self.clock.now().astimezone(self.zone()).replace(tzinfo=None, second=0, microsecond=0)

    def start_value(self) -> datetime:
        """The local start; today's midnight while there is none."""
        return as_local(self.doc.value("start")) or self.now_local().replace(hour=0, minute=0)

    def rule_value(self) -> str:
        value = self.doc.value("rule")
        return value if isinstance(value, str) else ""

    # --- messages beside fields -------------------------------------------------------------
    def error_line(self, key: str | None, parent: QWidget, name: str | None = None) -> ProblemLine:
        """A new message line under a field: the document's problems for ``key`` (if any), and the
        problems of the typed fields attached to it (:meth:`typed`, :meth:`problem`)."""
        messages = (lambda: self._messages(key)) if key else None
        line = ProblemLine(name or key or "field", parent, document_messages=messages)
        if key:
            line.setObjectName(f"error_{key}")
            self._by_key.setdefault(key, []).append(line)
        self._lines.append(line)
        return line

    def _messages(self, key: str) -> list[str]:
        messages = self.doc.problems_for(key)
        if key == "rule" and not messages and self.is_calendar() and self.rule_parse_error:
            messages = [self.rule_parse_error]
        return messages

    def problem(self, field: str, key: str, line: ProblemLine) -> FieldProblem:
        """The problem of the field named ``field`` (its text is not a value), shown on ``line``."""
        problem = FieldProblem(self.doc, field, key, line.refresh)
        line.attach(problem)
        return problem

    def typed(self, field: str, key: str, line: ProblemLine, edit: QLineEdit, **how: Any) -> TypedField:
        """A typed field of the box (see :class:`TypedField` for ``how``); it writes nothing while the
        box shows the document."""
        return TypedField(self.problem(field, key, line), edit, busy=lambda: self.updating, **how)

    def typed_spin(self, field: str, key: str, line: ProblemLine, spin: QAbstractSpinBox, **how: Any) -> TypedField:
        """A number box of the box as a typed field (see :meth:`TypedField.for_spin` for ``how``)."""
        return TypedField.for_spin(self.problem(field, key, line), spin, busy=lambda: self.updating, **how)

    def typed_date(
        self,
        field: str,
        key: str,
        line: ProblemLine,
        box: DateTimeField,
        *,
        current: Callable[[], Any],
        write: Callable[[Any], None],
    ) -> TypedField:
        """A date (and time) field of the box as a typed field."""
        return self.typed(field, key, line, box.edit, parse=box.parse, current=current, write=write, show=box.set_value)

    def typed_start(self, field: str, line: ProblemLine, box: DateTimeField, label: str) -> TypedField:
        """The local start (``start``) typed into ``box``; edits are undone as ``label``."""
        return self.typed_date(
            field,
            "start",
            line,
            box,
            current=self.start_value,
            write=lambda value: self.doc.set_value("start", fmt_local(value), label=label, merge=True),
        )

    def show_problems(self) -> None:
        """Every line shows its fields' problems, else the document's problems for its key."""
        for line in self._lines:
            line.refresh()

    def error_text(self, key: str) -> str:
        """The messages shown on the lines of ``key``."""
        return "\n".join(line.message() for line in self._by_key.get(key, []) if line.message())
