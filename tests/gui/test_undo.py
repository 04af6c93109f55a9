"""The document's undo history: QUndoStack's rules (merging, clean state, signals),
and nothing said when it goes away."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import shiboken6

from scheduler_gui.undo import Command, UndoStack


@dataclass
class _Set:
    """Sets ``box[0]`` to ``value``; remembers what was there."""

    box: list[str]
    value: str
    merge_key: str | None = None
    before: str = field(default="", init=False)

    @property
    def text(self) -> str:
        return f"set {self.value}"

    def redo(self) -> None:
        self.before, self.box[0] = self.box[0], self.value

    def undo(self) -> None:
        self.box[0] = self.before

    def merge(self, later: Command) -> bool:
        assert isinstance(later, _Set)
        self.value = later.value
        return True


@pytest.fixture
def stack(qapp) -> UndoStack:
    return UndoStack()


def test_push_undo_redo_and_dropping_the_undone(stack: UndoStack) -> None:
    box = ["a"]
    stack.push(_Set(box, "b"))
    stack.push(_Set(box, "c"))
    assert box == ["c"] and stack.count() == 2 and stack.undoText() == "set c"
    stack.undo()
    assert box == ["b"] and stack.canRedo() and stack.redoText() == "set c"
    stack.push(_Set(box, "d"))
    assert box == ["d"] and stack.count() == 2 and not stack.canRedo()
    stack.undo()
    stack.undo()
    assert box == ["a"] and not stack.canUndo()
    stack.undo()  # nothing left: nothing happens
    assert box == ["a"]


def test_typing_merges_until_the_history_is_marked_clean(stack: UndoStack) -> None:
    box = [""]
    for text in ("M", "Mo", "Mor"):
        stack.push(_Set(box, text, merge_key="title"))
    assert stack.count() == 1 and box == ["Mor"]
    stack.setClean()
    stack.push(_Set(box, "Morn", merge_key="title"))
    assert stack.count() == 2, "a save ends a run of typing"
    stack.push(_Set(box, "x", merge_key="other"))
    assert stack.count() == 3
    stack.undo()
    stack.undo()
    assert box == ["Mor"] and stack.isClean()


def test_clean_state_is_lost_when_the_steps_to_it_are_dropped(stack: UndoStack) -> None:
    box = ["a"]
    stack.push(_Set(box, "b"))
    stack.setClean()
    stack.undo()
    assert not stack.isClean()
    stack.push(_Set(box, "c"))
    stack.undo()
    assert box == ["a"] and not stack.isClean()
    stack.clear()
    assert stack.isClean() and stack.count() == 0


def test_signals_say_each_change_once(stack: UndoStack, qtbot) -> None:
    seen: list[tuple[str, object]] = []
    stack.canUndoChanged.connect(lambda v: seen.append(("canUndo", v)))
    stack.canRedoChanged.connect(lambda v: seen.append(("canRedo", v)))
    stack.cleanChanged.connect(lambda v: seen.append(("clean", v)))
    stack.undoTextChanged.connect(lambda v: seen.append(("undoText", v)))
    box = ["a"]
    stack.push(_Set(box, "b"))
    assert seen == [("canUndo", True), ("undoText", "set b"), ("clean", False)]
    seen.clear()
    stack.undo()
    assert seen == [("canUndo", False), ("canRedo", True), ("undoText", ""), ("clean", True)]


def test_a_history_going_away_says_nothing(qapp) -> None:
    heard: list[bool] = []
    stack = UndoStack()
    stack.push(_Set(["a"], "b"))
    stack.cleanChanged.connect(heard.append)
    stack.canUndoChanged.connect(heard.append)
    shiboken6.delete(stack)  # what a parent going away does to it
    assert heard == []
