"""The task editor's "Store as a secret": a person types a variable, selects it and clicks the
button; the value goes to this computer's keyring (or its 0600 secrets file), the schedule holds
only ``{secret: NAME}`` (one undoable edit), and a test run gets the value with its output masked."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QTableWidget, QWidget

from core.team import secrets
from scheduler_gui.context import AppContext
from scheduler_gui.designer.task_editor import TaskEditor
from scheduler_gui.designer.trial_run import TrialOutcome
from scheduler_gui.workspace.document import SpecDocument
from tests.gui.test_task_editor import _row_editor, _show, _type_into_row
from tests.secret_stores import STORES, secret_store

VALUE = "pw-Loft-4417-teal"


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with secret_store(request.param, tmp_path / "config", monkeypatch):
        yield request.param


@pytest.fixture
def editor(document: SpecDocument, ctx: AppContext, qtbot) -> Iterator[TaskEditor]:
    widget = TaskEditor(document, ctx)
    qtbot.addWidget(widget)
    yield widget
    widget.stop_test_run()
    widget.wait()


def named(root: QWidget, kind: type[QWidget], name: str) -> QWidget:
    [found] = [w for w in root.findChildren(kind) if w.accessibleName() == name]
    return found


def type_variable(qtbot, editor: TaskEditor, name: str, value: str) -> QTableWidget:
    """Add a row with the Add button, type its name and value as a person would."""
    table = named(editor, QTableWidget, "Environment variables")
    assert isinstance(table, QTableWidget)
    qtbot.mouseClick(named(editor, QPushButton, "Environment: add"), Qt.MouseButton.LeftButton)
    name_editor = _row_editor(table)  # Add opened the new row's name
    assert name_editor is not None
    qtbot.keyClicks(name_editor, name)
    qtbot.keyClick(name_editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _row_editor(table) is None)
    _type_into_row(qtbot, table, table.item(table.rowCount() - 1, 1), value)
    return table


def test_a_value_stored_as_a_secret_leaves_only_the_reference_in_the_schedule(
    store: str, editor: TaskEditor, document: SpecDocument, qtbot, tmp_path: Path
) -> None:
    _show(qtbot, editor)
    button = named(editor, QPushButton, "Environment: store as a secret")
    assert not button.isEnabled()  # nothing selected
    table = type_variable(qtbot, editor, "DB_PASSWORD", VALUE)
    assert document.value("task.env") == {"DB_PASSWORD": VALUE}
    assert button.isEnabled()
    steps = document.undo_stack.count()

    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert document.value("task.env") == {"DB_PASSWORD": {"secret": "DB_PASSWORD"}}
    assert secrets.lookup("DB_PASSWORD") == VALUE
    assert [(e.name, e.store.value) for e in secrets.entries()] == [("DB_PASSWORD", store)]
    assert document.undo_stack.count() == steps + 1 and document.can_save
    assert table.item(0, 1).text() == "{secret: DB_PASSWORD}"
    assert not table.item(0, 1).flags() & Qt.ItemFlag.ItemIsEditable
    assert not button.isEnabled()  # it is a secret already
    note = named(editor, QLabel, "Environment: secret")
    assert isinstance(note, QLabel) and note.isVisible()
    assert note.text().startswith("DB_PASSWORD is kept as the secret DB_PASSWORD in ")
    assert VALUE not in note.text()
    editor.resize(760, 900)
    assert editor.grab().save(str(tmp_path / f"env-secret-{store}.png"))

    # The schedule as it would be saved or published holds the reference, never the value.
    assert document.spec is not None and document.spec.task is not None
    assert document.spec.task.secret_names() == {"DB_PASSWORD": "DB_PASSWORD"}
    assert VALUE not in document.spec.model_dump_json()

    document.undo_stack.undo()
    assert document.value("task.env") == {"DB_PASSWORD": VALUE}
    assert table.item(0, 1).text() == VALUE


def test_a_test_run_gets_the_secret_and_shows_it_masked(
    store: str, editor: TaskEditor, document: SpecDocument, qtbot
) -> None:
    _show(qtbot, editor)
    document.set_value("task.argv", [sys.executable, "-c", "import os; print('pw', os.environ['DB_PASSWORD'])"])
    type_variable(qtbot, editor, "DB_PASSWORD", VALUE)
    qtbot.mouseClick(named(editor, QPushButton, "Environment: store as a secret"), Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(editor.testRunFinished, timeout=15_000) as blocker:
        qtbot.mouseClick(named(editor, QPushButton, "Test run"), Qt.MouseButton.LeftButton)
    outcome = blocker.args[0]
    assert isinstance(outcome, TrialOutcome) and outcome.result.succeeded
    assert outcome.result.stdout_tail == "pw ***\n"
    assert VALUE not in editor.output.toPlainText()


def test_a_name_kept_with_another_value_is_refused_and_nothing_changes(
    editor: TaskEditor, document: SpecDocument, qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with secret_store("file", tmp_path / "config", monkeypatch):
        secrets.store("DB_PASSWORD", "an older one")
        _show(qtbot, editor)
        type_variable(qtbot, editor, "DB_PASSWORD", VALUE)
        qtbot.mouseClick(named(editor, QPushButton, "Environment: store as a secret"), Qt.MouseButton.LeftButton)
        assert document.value("task.env") == {"DB_PASSWORD": VALUE}
        assert secrets.lookup("DB_PASSWORD") == "an older one"
        note = named(editor, QLabel, "Environment: secret")
        assert isinstance(note, QLabel)
        assert note.text() == (
            "⚠ a secret DB_PASSWORD is already kept on this computer with another value; "
            "remove it first (schedctl secret delete DB_PASSWORD) or rename the variable"
        )
