"""A duration typed as a person would say it ("15 min", "1 h 30 min", "2 days")
or in ISO 8601 ("PT15M"): the parser, the words shown for a stored value, and
the text field that writes the ISO form to the document once the whole text
is a duration (see :mod:`scheduler_gui.designer.field_problem`).

(The "When" forms use :class:`scheduler_gui.designer.when_fields.DurationField`
instead: a number and a unit for an interval, with no free text.)
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

from core.time.durations import format_duration, human_duration, parse_duration
from scheduler_gui.a11y import accessible
from scheduler_gui.designer.field_problem import FieldProblem, TypedField
from scheduler_gui.designer.notes import problem_label, show_problems
from scheduler_gui.workspace.document import SpecDocument

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
    """``15 min``, ``1 h 30 min``, ``90s``, ``2 days``, ``0`` or ISO 8601 (``PT15M``), in whole seconds.

    Raises ``ValueError`` with a message a person can act on.
    """
    value = text.strip()
    if not value:
        raise ValueError("empty")
    if value[0] in "Pp":
        try:
            length = parse_duration(value)
        except ValueError as exc:
            raise ValueError(f"{exc}; words such as {EXAMPLES} work too") from None
        return _whole_seconds(value, length)
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
    return _whole_seconds(value, timedelta(seconds=total))


def _whole_seconds(text: str, length: timedelta) -> timedelta:
    """``length`` when it is a whole number of seconds, as every duration of a spec is."""
    if length.microseconds:
        raise ValueError(f"{text!r} is not a whole number of seconds; durations are counted in whole seconds")
    return length


def friendly(value: Any) -> str:
    """The words shown for a spec duration (``PT15M`` → ``15 min``); odd values as they are."""
    if value is None:
        return ""
    try:
        return human_duration(parse_duration(str(value)))
    except ValueError:
        return str(value)


def read_duration(text: str) -> str | None:
    """What a duration field's text stores: the ISO form, or None for an empty field (the key's
    default applies). ValueError says why the text is not a duration."""
    if not text.strip():
        return None
    return format_duration(parse_friendly_duration(text))


def _canonical(value: Any) -> Any:
    """A stored duration in its canonical ISO form, so equal lengths compare equal."""
    try:
        return format_duration(parse_duration(value)) if isinstance(value, str) else value
    except ValueError:
        return value


class DurationField(QWidget):
    """A duration typed in words or ISO 8601, written to ``key`` as ISO; its problem under it.

    Empty text removes the key (its documented default applies). Text that is
    not (yet) a duration stays in the field with its message under it; the
    document keeps its value and cannot be saved meanwhile.
    """

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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(1)
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText(placeholder)
        accessible(self.edit, name, f"{tooltip}\nType e.g. {EXAMPLES}; the file stores the ISO 8601 form ({key}).")
        self.setFocusProxy(self.edit)
        layout.addWidget(self.edit)
        self.problem = problem_label(self, f"{name}: problem")
        layout.addWidget(self.problem)
        self.field = TypedField(
            FieldProblem(document, key, key, self._show_problem),
            self.edit,
            parse=read_duration,
            current=lambda: _canonical(document.value(key)),
            write=lambda value: document.set_value(key, value, label=f"Edit {key}", merge=True),
            show=lambda value: self.edit.setText(friendly(value)),
        )
        self.edit.editingFinished.connect(self._finished)
        self.sync()

    def _finished(self) -> None:
        # A duration read in full is shown again in the words the app uses ("90s" → "1 min 30 s").
        if self.field.problem.message is None:
            self.field.reset()

    def sync(self) -> None:
        """Show the document's value, unless the text already means it or is still being fixed."""
        self.field.show_document()
        self._show_problem()

    def _show_problem(self) -> None:
        own = self.field.problem.message
        show_problems(self.problem, [own] if own else self._doc.problems_for(self.key))
