"""What the parts of the "When" box share: the document and the clock, the
document's values read the way every part needs them, the messages shown
beside fields, and whether the box is showing the document (while it is, no
field writes back, so showing a value never becomes an undo step).
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from PySide6.QtWidgets import QWidget

from core.clock import Clock
from core.enums import Kind
from core.errors import ZoneError
from core.zones import get_zone
from scheduler_gui.designer.when_fields import as_local
from scheduler_gui.designer.zone_picker import ErrorLine
from scheduler_gui.document import SpecDocument

_KIND_VALUES = frozenset(kind.value for kind in Kind)


class WhenState:
    """The document of one "When" box, read for its parts, and the messages beside its fields."""

    def __init__(self, document: SpecDocument, clock: Clock) -> None:
        self.doc = document
        self.clock = clock
        self.updating = False
        """True while the box shows the document; edits made then are not written back."""
        self.rule_parse_error: str | None = None
        """Why the rule text cannot be read, shown under it until the document says more."""
        self._local_errors: dict[str, str] = {}
        self._lines: dict[str, list[ErrorLine]] = {}

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
    def error_line(self, key: str, parent: QWidget) -> ErrorLine:
        """A new message line for the field of ``key``; ``show_problems`` fills it."""
        line = ErrorLine(parent)
        line.setObjectName(f"error_{key}")
        self._lines.setdefault(key, []).append(line)
        return line

    def set_local_error(self, key: str, message: str | None) -> None:
        """Show (or with None, clear) a message about text that could not be read, then every message."""
        if message:
            self._local_errors[key] = message
        else:
            self._local_errors.pop(key, None)
        self.show_problems()

    def clear_local_errors(self) -> None:
        self._local_errors.clear()

    def show_problems(self) -> None:
        """Each line shows its own unreadable-text message, then the document's problems for its key."""
        for key, lines in self._lines.items():
            messages = self.doc.problems_for(key)
            if key == "rule" and not messages and self.is_calendar():
                messages = [self.rule_parse_error] if self.rule_parse_error else []
            local = self._local_errors.get(key)
            for line in lines:
                line.set_messages(([local] if local else []) + messages)

    def error_text(self, key: str) -> str:
        """The messages shown beside the fields of ``key``."""
        return "\n".join(line.message() for line in self._lines.get(key, []) if line.message())
