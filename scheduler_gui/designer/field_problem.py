"""A typed field and the document: what a person types reaches the schedule
only when the whole text is complete and valid.

While a field's text is not (yet) a value ("2" on the way to "25:61", a 0 in
"Repeat every", "PT1.5S"), the field keeps the text, the document is told
(:meth:`SpecDocument.set_field_problem`: Save and Publish wait, the status bar
names the problem) and the message sits on the line under that field. Once
the text is a value it is written and the problem goes.

A field drops its unfinished text and shows the document again when the value
it edits changes from elsewhere (another field, the RRULE text), when the
document forgets field problems (undo, redo, loading a file), when the field
is hidden, and when the person presses Esc in it. Leaving the field keeps the
text and its message, so it can be fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, SignalInstance
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractSpinBox, QLineEdit, QWidget

from core.errors import Problem, UserError
from scheduler_gui.designer.zone_picker import ErrorLine
from scheduler_gui.workspace.document import SpecDocument

#: What a field's reading raises when its text is not a value (core's user errors included).
NOT_A_VALUE = (ValueError, UserError)


class FieldProblem:
    """Why the text in one field is not a value, kept in the document under a stable field name.

    ``basis`` is the document's value the field was showing when its text went wrong: while the
    document still holds that value and still knows the problem, the field keeps its text.
    """

    def __init__(self, doc: SpecDocument, field: str, key: str, on_change: Callable[[], None] | None = None) -> None:
        self.doc = doc
        self.field = field
        self.key = key
        self._on_change = on_change
        self._message: str | None = None
        self._basis: Any = None

    @property
    def message(self) -> str | None:
        return self._message

    def set(self, message: str, basis: Any) -> None:
        """The text is not a value because of ``message``; the document holds ``basis`` meanwhile."""
        self._message, self._basis = message, basis
        self.doc.set_field_problem(self.field, message, key=self.key)
        self._changed()

    def clear(self) -> None:
        """The field shows a value again (its own, or the document's)."""
        if self._message is None:
            return
        self._message = self._basis = None
        self.doc.set_field_problem(self.field, None)
        self._changed()

    def holds(self, basis: Any) -> bool:
        """True while the field should keep its unfinished text: it has a problem, the document still knows
        it and still holds ``basis``. Otherwise the problem is dropped and the caller shows the document."""
        if self._message is None:
            return False
        known = Problem(self.key, self._message) in self.doc.field_problems
        if known and basis == self._basis:
            return True
        self.clear()
        return False

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()


class ProblemLine(ErrorLine):
    """The line under one field: its own problem, or else the document's problems it is given.

    Its accessible name stays "<field>: problem" (the text is its description), so a screen reader
    and a test find the line of a field by the field's name.
    """

    def __init__(
        self, name: str, parent: QWidget | None = None, *, document_messages: Callable[[], list[str]] | None = None
    ) -> None:
        super().__init__(parent)
        self._name = f"{name}: problem"
        self._document_messages = document_messages
        self._sources: list[FieldProblem] = []
        self.setObjectName(f"problem:{name}")
        self.setAccessibleName(self._name)

    def attach(self, problem: FieldProblem) -> None:
        """Show ``problem``'s message on this line."""
        self._sources.append(problem)

    def refresh(self) -> None:
        # While a field holds text that is not a value, the document's messages speak of a value the
        # field no longer shows: the field's own message is the one to act on.
        own = [p.message for p in self._sources if p.message]
        self.set_messages(own or (self._document_messages() if self._document_messages else []))

    def set_messages(self, messages: list[str]) -> None:
        super().set_messages(messages)
        self.setAccessibleName(self._name)
        self.setAccessibleDescription(self.message())


class TypedField(QObject):
    """Couples one typed text to the document.

    ``parse`` reads the whole text as a value or raises ValueError (or a core user error) saying
    why not; ``current`` is the document's value for the field; ``write`` puts a value into the
    document; ``show`` puts a value into the widget. Each change of the text is read: a value is
    written, anything else becomes the field's problem (see :class:`FieldProblem`). For a spin box,
    ``edit`` is its line edit, ``keys_from`` the box (it gets the keys) and ``also`` its
    ``valueChanged`` and ``editingFinished``: the box changes its text with the line edit's signals
    blocked (arrows, putting the text back on focus-out).
    """

    def __init__(
        self,
        problem: FieldProblem,
        edit: QLineEdit,
        *,
        parse: Callable[[str], Any],
        current: Callable[[], Any],
        write: Callable[[Any], None],
        show: Callable[[Any], None],
        busy: Callable[[], bool] | None = None,
        keys_from: QWidget | None = None,
        also: tuple[SignalInstance, ...] = (),
    ) -> None:
        super().__init__(edit)
        self.problem = problem
        self.edit = edit
        self._parse = parse
        self._current = current
        self._write = write
        self._show = show
        self._busy = busy
        self._showing = False
        for signal in (edit.textChanged, edit.editingFinished, *also):
            signal.connect(self._typed)
        (keys_from or edit).installEventFilter(self)

    @classmethod
    def for_spin(
        cls,
        problem: FieldProblem,
        spin: QAbstractSpinBox,
        *,
        current: Callable[[], Any],
        write: Callable[[Any], None],
        parse: Callable[[str], Any] | None = None,
        show: Callable[[Any], None] | None = None,
        busy: Callable[[], bool] | None = None,
    ) -> TypedField:
        """A spin box's text as a typed field; its ``number`` reads it and ``setValue`` shows a value
        unless ``parse`` and ``show`` say otherwise."""
        return cls(
            problem,
            spin.lineEdit(),
            parse=parse or spin.number,  # type: ignore[attr-defined]
            current=current,
            write=write,
            show=show or spin.setValue,  # type: ignore[attr-defined]
            busy=busy,
            keys_from=spin,
            also=(spin.valueChanged, spin.editingFinished),  # type: ignore[attr-defined]
        )

    def _typed(self) -> None:
        if self._showing or (self._busy is not None and self._busy()):
            return
        self.check()

    def check(self) -> None:
        """Read the text now: write its value, or make it the field's problem."""
        try:
            value = self._parse(self.edit.text())
        except NOT_A_VALUE as exc:
            self.problem.set(str(exc), self._current())
            return
        self.problem.clear()
        self._write(value)

    def show_document(self) -> None:
        """Show the document's value, unless the text already means it or is still being fixed."""
        value = self._current()
        if self.problem.holds(value):
            return
        try:
            same = self._parse(self.edit.text()) == value
        except NOT_A_VALUE:
            same = False
        if not same:
            self._put(value)

    def reset(self) -> None:
        """Drop the text and its problem; show the document's value."""
        self.problem.clear()
        self._put(self._current())

    def forget(self) -> None:
        """The field is not shown: its problem must not hold the schedule back."""
        self.problem.clear()

    def _put(self, value: Any) -> None:
        self._showing = True
        try:
            self._show(value)
        finally:
            self._showing = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Esc gives up the unfinished text: the field shows the document's value again.
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
            and self.problem.message is not None
        ):
            self.reset()
            return True
        return False
