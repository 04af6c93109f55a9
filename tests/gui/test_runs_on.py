"""The task's "Runs on" (scheduler_gui.designer.runs_on), used as a person does: each
choice writes the spec's runsOn as one undoable edit, label rows are typed, a row that is
not a label is refused with its reason, a file's runsOn is shown and saved, and the line
under it says which live engines on the ledger would run the schedule."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from a11y_support import a11y_problems
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QListWidget, QPushButton, QRadioButton
from typing_support import named, problem_text

from core.clock import FixedClock
from core.engine.presence import announce
from core.ledger.states import EngineKind
from core.team.actor import Actor, os_user
from core.team.placement import Placement
from scheduler_gui.context import AppContext
from scheduler_gui.designer.task_editor import TaskEditor
from scheduler_gui.workspace.document import SpecDocument

ME = os_user()
THIS_MACHINE = "Runs on: This machine (where it is published from)"
ANY = "Runs on: Any engine"
LABELS = "Runs on: Engines with labels"


@pytest.fixture(autouse=True)
def _on_alpha(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIDEMARK_HOSTNAME", "alpha")


@pytest.fixture
def editor(document: SpecDocument, ctx: AppContext, qtbot) -> Iterator[TaskEditor]:
    widget = TaskEditor(document, ctx)
    qtbot.addWidget(widget)
    widget.show()
    widget.activateWindow()
    qtbot.waitActive(widget)
    yield widget
    widget.wait()


def click(qtbot, editor: TaskEditor, name: str) -> None:
    button = named(editor, name)
    assert isinstance(button, (QRadioButton, QPushButton))
    # On its words: a radio button takes the row's width, and only its mark and words are clicks.
    at = QPoint(button.fontMetrics().horizontalAdvance(button.text()) // 2 + 20, button.height() // 2)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=at)


def checked(editor: TaskEditor) -> str:
    [on] = [b.accessibleName() for b in editor.findChildren(QRadioButton) if b.isChecked()]
    return on


def engines_line(qtbot, editor: TaskEditor) -> str:
    """The line under "Runs on", once the engines are read."""
    qtbot.waitUntil(lambda: not editor.runs_on.reading)  # the answer crosses back through the event loop
    line = named(editor, "Runs on: live engines")
    assert isinstance(line, QLabel)
    return line.text()


def _row_editor(view: QListWidget) -> QLineEdit | None:
    editors = [e for e in view.viewport().findChildren(QLineEdit) if e.isVisible()]
    return editors[0] if editors else None


def type_row(qtbot, editor: TaskEditor, text: str) -> None:
    """Add a label row with the Add button and type it, as a person would."""
    view = named(editor, "Runs on labels")
    assert isinstance(view, QListWidget)
    click(qtbot, editor, "Labels: add")
    row = _row_editor(view)  # Add opened it
    assert row is not None
    qtbot.keyClicks(row, text)
    qtbot.keyClick(row, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _row_editor(view) is None)


def test_each_choice_writes_runs_on_and_undo_restores_it(editor: TaskEditor, document: SpecDocument, qtbot) -> None:
    assert document.value("runsOn") is None and checked(editor) == THIS_MACHINE
    assert not named(editor, "Runs on labels").isVisibleTo(editor)
    click(qtbot, editor, ANY)
    assert document.value("runsOn") == {"any": True}
    click(qtbot, editor, LABELS)
    assert document.value("runsOn") == {"host": "alpha"}  # this machine's host, to start from
    assert editor.runs_on.labels.values() == ["host=alpha"] and named(editor, "Runs on labels").isVisibleTo(editor)
    click(qtbot, editor, THIS_MACHINE)
    assert document.value("runsOn") is None and editor.runs_on.labels.values() == []
    assert document.undo_stack.count() == 3 and document.undo_stack.undoText() == "Runs on: this machine"

    document.undo_stack.undo()
    assert document.value("runsOn") == {"host": "alpha"} and checked(editor) == LABELS
    assert editor.runs_on.labels.values() == ["host=alpha"]
    document.undo_stack.undo()
    assert document.value("runsOn") == {"any": True} and checked(editor) == ANY
    document.undo_stack.undo()
    assert document.value("runsOn") is None and checked(editor) == THIS_MACHINE


def test_every_part_is_named_for_a_screen_reader(editor: TaskEditor, qtbot) -> None:
    click(qtbot, editor, LABELS)  # the rows and their buttons show
    assert editor.runs_on.labels.values() == ["host=alpha"]
    assert a11y_problems(editor.runs_on) == []


def test_a_typed_label_row_reaches_the_spec(editor: TaskEditor, document: SpecDocument, qtbot) -> None:
    click(qtbot, editor, LABELS)
    type_row(qtbot, editor, "gpu=yes")
    assert document.value("runsOn") == {"host": "alpha", "gpu": "yes"}
    assert problem_text(editor, "Runs on") == "" and document.can_save
    assert document.undo_stack.undoText() == "Edit the labels it runs on"
    document.undo_stack.undo()
    assert document.value("runsOn") == {"host": "alpha"} and editor.runs_on.labels.values() == ["host=alpha"]


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        pytest.param("gpu", "row 2: 'gpu' is not KEY=VALUE; write e.g. gpu=yes", id="no_equals"),
        pytest.param("any=true", "row 2: any is not a label; choose Any engine instead", id="any"),
        pytest.param("host=beta", "row 2: host is given twice", id="twice"),
        pytest.param("gpu=", "row 2: gpu has no value; write gpu=VALUE", id="no_value"),
    ],
)
def test_a_bad_label_is_refused_and_the_spec_keeps_its_labels(
    editor: TaskEditor, document: SpecDocument, qtbot, typed: str, why: str
) -> None:
    click(qtbot, editor, LABELS)
    steps = document.undo_stack.count()
    type_row(qtbot, editor, typed)
    assert problem_text(editor, "Runs on") == f"⚠ {why}"
    assert document.value("runsOn") == {"host": "alpha"} and document.undo_stack.count() == steps
    assert not document.can_save  # Save and Publish wait for the row
    assert editor.runs_on.labels.values() == ["host=alpha", typed]  # kept, to be fixed
    assert engines_line(qtbot, editor) == "Fix the labels to see which engines match."
    click(qtbot, editor, ANY)  # another choice leaves the rows
    assert document.value("runsOn") == {"any": True} and document.can_save
    assert problem_text(editor, "Runs on") == ""


DEMO_TEXT = (Path(__file__).resolve().parents[2] / "resources" / "demo" / "daily-ops-summary.yaml").read_text()


@pytest.fixture
def open_file(ctx: AppContext, qtbot, tmp_path: Path) -> Iterator[Callable[[str], tuple[TaskEditor, SpecDocument]]]:
    """Open the demo schedule with ``tail`` added to its file, in a task editor on screen."""
    editors: list[TaskEditor] = []

    def opened(tail: str) -> tuple[TaskEditor, SpecDocument]:
        path = tmp_path / "ops.yaml"
        path.write_text(DEMO_TEXT + tail, encoding="utf-8")
        document = SpecDocument()
        document.load(path)
        editor = TaskEditor(document, ctx)
        qtbot.addWidget(editor)
        editor.show()
        editors.append(editor)
        return editor, document

    yield opened
    for editor in editors:
        editor.wait()


def test_a_files_runs_on_is_shown_and_saved_in_place(
    open_file: Callable[[str], tuple[TaskEditor, SpecDocument]], qtbot
) -> None:
    editor, document = open_file("# where it runs\nrunsOn: {host: beta}  # the build box\n")
    assert checked(editor) == LABELS and editor.runs_on.labels.values() == ["host=beta"]
    type_row(qtbot, editor, "gpu=yes")
    path = document.save()
    text = path.read_text(encoding="utf-8")
    assert text.startswith(DEMO_TEXT) and "# where it runs\n" in text and "# the build box" in text
    assert SpecDocument.read_mapping(path)["runsOn"] == {"host": "beta", "gpu": "yes"}


def test_a_wrong_runs_on_in_a_file_is_shown_with_its_problem(
    open_file: Callable[[str], tuple[TaskEditor, SpecDocument]], qtbot
) -> None:
    editor, document = open_file("runsOn: {any: false}\n")
    assert checked(editor) == LABELS
    assert "any: False; write {any: true}" in problem_text(editor, "Runs on") and not document.can_save
    click(qtbot, editor, ANY)
    assert document.value("runsOn") == {"any": True} and document.can_save


def test_the_line_names_the_live_engines_that_match(
    editor: TaskEditor, ctx: AppContext, clock: FixedClock, qtbot
) -> None:
    assert engines_line(qtbot, editor) == "Cannot tell which engines match: no ledger is open."
    ledger = ctx.ledger
    announce(ledger, clock, EngineKind.APP, placement=Placement.of(Actor(ME, "alpha")))
    announce(ledger, clock, EngineKind.HEADLESS, placement=Placement.of(Actor("ci", "build-1"), {"gpu": "yes"}, ("*",)))
    announce(ledger, clock, EngineKind.HEADLESS, placement=Placement.of(Actor("bob", "beta"), {"gpu": "yes"}))
    distrust = f"(schedctl engine run --trust {ME})"

    editor.runs_on.refresh()
    assert engines_line(qtbot, editor) == f"Matches 1 live engine: alpha ({ME})"
    click(qtbot, editor, ANY)
    assert engines_line(qtbot, editor) == (
        f"Matches 2 live engines: alpha ({ME}), build-1 (ci); not counted: beta (bob), which does not trust {ME} "
        + distrust
    )
    click(qtbot, editor, LABELS)
    named(editor, "Runs on labels").setFocus()
    type_row(qtbot, editor, "gpu=yes")  # host=alpha and gpu=yes: no engine has both
    assert engines_line(qtbot, editor) == (
        "No live engine matches: the runs will wait — no engine with gpu=yes, host=alpha was ever seen on this ledger"
    )

    clock.set(clock.now() + timedelta(hours=3))  # every engine fell silent
    click(qtbot, editor, THIS_MACHINE)
    assert engines_line(qtbot, editor) == (
        "No live engine matches: the runs will wait — last seen engine with host=alpha 3 h ago"
    )
