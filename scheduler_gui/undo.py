"""The undo history of a document: commands kept in Python, with the signals and
the behaviour of Qt's QUndoStack that the window relies on.

Qt's QUndoStack empties itself when it is destroyed and announces that through
its signals, into whatever is connected; when the document and its window are
going away too, those slots belong to objects half destroyed, and the process
crashes (after a garbage collection, at no predictable moment). This history is
plain Python under a QObject: destroying it says nothing, and its commands are
ordinary objects.

The rules follow QUndoStack's: :meth:`push` runs the command's ``redo``; a
command merges into the one before it when both carry the same merge key,
unless the history is marked clean between them (a save ends a run of typing);
pushing after an undo drops the commands that were undone.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QObject, Signal


class Command(Protocol):
    """One step of the history."""

    @property
    def text(self) -> str:
        """What the step did, for "Undo <text>"."""
        ...

    @property
    def merge_key(self) -> str | None:
        """Steps with the same key merge into one (typing into one field); None never merges."""
        ...

    def merge(self, later: Command) -> bool:
        """Take ``later`` (already done) into this step; False when it cannot be."""
        ...

    def redo(self) -> None: ...

    def undo(self) -> None: ...


class UndoStack(QObject):
    """A list of commands and the position in it; the position where the file was saved is "clean"."""

    canUndoChanged = Signal(bool)
    canRedoChanged = Signal(bool)
    undoTextChanged = Signal(str)
    redoTextChanged = Signal(str)
    cleanChanged = Signal(bool)
    indexChanged = Signal(int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._commands: list[Command] = []
        self._index = 0
        #: The position marked clean; None once the steps that led there were dropped.
        self._clean: int | None = 0

    # --- reading -----------------------------------------------------------------------------
    def count(self) -> int:
        return len(self._commands)

    def index(self) -> int:
        """How many commands are done (the next undo undoes command ``index - 1``)."""
        return self._index

    def canUndo(self) -> bool:
        return self._index > 0

    def canRedo(self) -> bool:
        return self._index < len(self._commands)

    def undoText(self) -> str:
        return self._commands[self._index - 1].text if self.canUndo() else ""

    def redoText(self) -> str:
        return self._commands[self._index].text if self.canRedo() else ""

    def isClean(self) -> bool:
        return self._clean == self._index

    # --- changing ----------------------------------------------------------------------------
    def push(self, command: Command) -> None:
        """Do ``command`` and put it on the history (merged into the previous step when it may be)."""
        before = self._state()
        command.redo()
        del self._commands[self._index :]
        if self._clean is not None and self._clean > self._index:
            self._clean = None
        top = self._commands[-1] if self._commands else None
        key = command.merge_key
        mergeable = top is not None and key is not None and top.merge_key == key and self._clean != self._index
        if mergeable and top is not None and top.merge(command):
            self._announce(before)
            return
        self._commands.append(command)
        self._index += 1
        self._announce(before)

    def undo(self) -> None:
        if not self.canUndo():
            return
        before = self._state()
        self._index -= 1
        self._commands[self._index].undo()
        self._announce(before)

    def redo(self) -> None:
        if not self.canRedo():
            return
        before = self._state()
        self._commands[self._index].redo()
        self._index += 1
        self._announce(before)

    def setClean(self) -> None:
        """Mark the present position as the saved one."""
        before = self._state()
        self._clean = self._index
        self._announce(before)

    def clear(self) -> None:
        """Forget every step; the empty history is clean."""
        before = self._state()
        self._commands.clear()
        self._index = 0
        self._clean = 0
        self._announce(before)

    # --- signals -----------------------------------------------------------------------------
    def _state(self) -> tuple[int, bool, bool, str, str, bool]:
        return (self._index, self.canUndo(), self.canRedo(), self.undoText(), self.redoText(), self.isClean())

    def _announce(self, before: tuple[int, bool, bool, str, str, bool]) -> None:
        index, can_undo, can_redo, undo_text, redo_text, clean = self._state()
        if index != before[0]:
            self.indexChanged.emit(index)
        if can_undo != before[1]:
            self.canUndoChanged.emit(can_undo)
        if can_redo != before[2]:
            self.canRedoChanged.emit(can_redo)
        if undo_text != before[3]:
            self.undoTextChanged.emit(undo_text)
        if redo_text != before[4]:
            self.redoTextChanged.emit(redo_text)
        if clean != before[5]:
            self.cleanChanged.emit(clean)
