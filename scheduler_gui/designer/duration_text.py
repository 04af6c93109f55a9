"""A duration typed as a person would say it ("15 min", "1 h 30 min", "2 days")
or in ISO 8601 ("PT15M"): the parser, the words shown for a stored value, and
the text field that writes the ISO form to the document.

(The "When" forms use :class:`scheduler_gui.designer.when_fields.DurationField`
instead: a number and a unit for an interval, with no free text.)
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

from core.durations import format_duration, human_duration, parse_duration
from scheduler_gui.designer.notes import problem_label, show_problems
from scheduler_gui.document import SpecDocument

_UNITS = {
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
    "w": 604800,
    "wk": 604800,
    "week": 604800,
    "weeks": 604800,
}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)")
EXAMPLES = "15 min, 1 h 30 min, 2 days or PT15M"


def parse_friendly_duration(text: str) -> timedelta:
    """``15 min``, ``1 h 30 min``, ``90s``, ``2 days``, ``0`` or ISO 8601 (``PT15M``).

    Raises ``ValueError`` with a message a person can act on.
    """
    value = text.strip()
    if not value:
        raise ValueError("empty")
    if value[0] in "Pp":
        try:
            return parse_duration(value)
        except ValueError as exc:
            raise ValueError(f"{exc}; words such as {EXAMPLES} work too") from None
    if re.fullmatch(r"0+(\.0+)?", value):
        return timedelta(0)
    cleaned = re.sub(r"\s*(,|\band\b)\s*", " ", value.lower())
    total = 0.0
    pos = 0
    for match in _PART.finditer(cleaned):
        if cleaned[pos : match.start()].strip():
            break
        unit = _UNITS.get(match.group(2))
        if unit is None:
            raise ValueError(f"{value!r}: unknown unit {match.group(2)!r}; write e.g. {EXAMPLES}")
        total += float(match.group(1)) * unit
        pos = match.end()
    if pos == 0 or cleaned[pos:].strip():
        raise ValueError(f"{value!r} is not a length of time; write e.g. {EXAMPLES}")
    return timedelta(seconds=total)


def friendly(value: Any) -> str:
    """The words shown for a spec duration (``PT15M`` → ``15 min``); odd values as they are."""
    if value is None:
        return ""
    try:
        return human_duration(parse_duration(str(value)))
    except ValueError:
        return str(value)


class DurationField(QWidget):
    """A duration typed in words or ISO 8601, written to ``key`` as ISO; its problem under it.

    Empty text removes the key (its documented default applies). Text that is
    not a duration is written as typed, so the document is invalid and says so.
    """

    edited = Signal()

    def __init__(
        self,
        document: SpecDocument,
        key: str,
        name: str,
        tooltip: str,
        placeholder: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._doc = document
        self.key = key
        self._local_error: str | None = None
        self._writing = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(1)
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText(placeholder)
        self.edit.setAccessibleName(name)
        self.edit.setToolTip(f"{tooltip}\nType e.g. {EXAMPLES}; the file stores the ISO 8601 form ({key}).")
        self.setFocusProxy(self.edit)
        layout.addWidget(self.edit)
        self.problem = problem_label(self, f"{name}: problem")
        layout.addWidget(self.problem)
        self.edit.textEdited.connect(self._typed)
        self.edit.editingFinished.connect(self._finished)
        self.sync()

    def _typed(self, text: str) -> None:
        if not text.strip():
            self._local_error = None
            value: str | None = None
        else:
            try:
                value = format_duration(parse_friendly_duration(text))
                self._local_error = None
            except ValueError as exc:
                self._local_error = str(exc)
                value = text  # as typed: the document refuses it and names the key
        self._writing = True
        try:
            self._doc.set_value(self.key, value, label=f"Edit {self.key}", merge=True)
        finally:
            self._writing = False
        self._show_problem()
        self.edited.emit()

    def _finished(self) -> None:
        if self._local_error is None:
            self.edit.setText(friendly(self._doc.value(self.key)))

    def sync(self) -> None:
        """Show the document's value, unless it came from typing in this field (no feedback loop)."""
        if not self._writing:
            value = self._doc.value(self.key)
            self.edit.setText(friendly(value))
            if value is None or friendly(value) != str(value):
                self._local_error = None
        self._show_problem()

    def _show_problem(self) -> None:
        problems = self._doc.problems_for(self.key)
        show_problems(self.problem, [self._local_error] if self._local_error and problems else problems)
