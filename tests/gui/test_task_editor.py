"""The task editor writes argv lists (never a shell string) and test-runs the
command off the GUI thread, with a Stop that works on a hanging command."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit, QListWidget, QPushButton, QTableWidget

from scheduler_gui.context import AppContext
from scheduler_gui.designer.task_editor import TaskEditor
from scheduler_gui.designer.trial_run import TrialOutcome
from scheduler_gui.workspace.document import SpecDocument

RUN_TIMEOUT_MS = 15_000


@pytest.fixture
def editor(document: SpecDocument, ctx: AppContext, qtbot) -> TaskEditor:
    widget = TaskEditor(document, ctx)
    qtbot.addWidget(widget)
    yield widget
    widget.stop_test_run()
    widget.wait()


def _run(editor: TaskEditor, qtbot) -> TrialOutcome:
    with qtbot.waitSignal(editor.testRunFinished, timeout=RUN_TIMEOUT_MS) as blocker:
        editor.run_button.click()
    return blocker.args[0]


def test_shows_the_documents_task(editor: TaskEditor) -> None:
    assert editor.argv.values() == ["/bin/echo", "operating summary for {period}"]
    assert editor.effect.currentData() == "idempotent"
    assert editor.timeout.edit.text() == "1 min"
    assert not editor.trust_prompt.isVisibleTo(editor)


def test_argv_is_edited_as_a_list(editor: TaskEditor, document: SpecDocument) -> None:
    editor.argv.add("--loud")
    assert document.value("task.argv") == ["/bin/echo", "operating summary for {period}", "--loud"]
    editor.argv.move_selected(-1)
    assert document.value("task.argv") == ["/bin/echo", "--loud", "operating summary for {period}"]
    editor.argv.list.item(1).setText("--quiet words with spaces")
    assert document.value("task.argv")[1] == "--quiet words with spaces"
    editor.argv.list.setCurrentRow(2)
    editor.argv.remove()
    assert document.value("task.argv") == ["/bin/echo", "--quiet words with spaces"]
    document.undo_stack.undo()
    assert editor.argv.values() == ["/bin/echo", "--quiet words with spaces", "operating summary for {period}"]


def test_an_empty_command_stays_in_the_list_and_says_why(editor: TaskEditor, document: SpecDocument) -> None:
    for _ in range(2):
        editor.argv.list.setCurrentRow(0)
        editor.argv.remove()
    # The list with its last row left is a command (an odd one); the empty list is none.
    assert document.value("task.argv") == ["operating summary for {period}"]
    assert editor.argv.values() == [] and not document.can_save
    assert editor.argv_problem.text() == "⚠ the command is empty: add the program to run"
    assert not editor.run_button.isEnabled()
    assert "the command is empty" in editor.run_button.toolTip()


def test_folder_environment_effect_and_verify(
    editor: TaskEditor, document: SpecDocument, tmp_path: Path, qtbot
) -> None:
    qtbot.keyClicks(editor.cwd, str(tmp_path))
    assert document.value("task.cwd") == str(tmp_path)
    editor.cwd.clear()
    qtbot.keyClicks(editor.cwd, "/no/such/folder")
    assert "not a folder on this computer" in editor.cwd_problem.text()
    editor._env_add()
    editor.env.item(0, 0).setText("REPORT_MODE")
    editor.env.item(0, 1).setText("full")
    assert document.value("task.env") == {"REPORT_MODE": "full"}
    editor.effect.setCurrentIndex(editor.effect.findData("non_idempotent"))
    editor.effect.activated.emit(editor.effect.currentIndex())
    assert document.value("task.effect") == "non_idempotent"
    assert "never re-sent blindly" in editor.effect_meaning.text()
    editor.verify.add("/usr/local/bin/check")
    editor.verify.add("{occurrenceId}")
    assert document.value("task.verify") == ["/usr/local/bin/check", "{occurrenceId}"]
    for _ in range(2):
        editor.verify.list.setCurrentRow(0)
        editor.verify.remove()
    assert "verify" not in document.value("task")


def test_bad_environment_name_is_refused_next_to_the_table(editor: TaskEditor, document: SpecDocument) -> None:
    editor._env_add()
    editor.env.item(0, 0).setText("2BAD")
    assert "env" not in document.value("task") and not document.can_save
    assert "'2BAD' is not a valid environment variable name" in editor.env_problem.text()


def test_test_run_of_echo_hello(editor: TaskEditor, document: SpecDocument, qtbot) -> None:
    document.set_value("task.argv", ["/bin/echo", "hello"])
    outcome = _run(editor, qtbot)
    assert outcome.result.exit_status == 0
    assert editor.run_status.text().startswith("Exit 0")
    text = editor.output.toPlainText()
    assert "--- stdout ---\nhello" in text
    assert editor.run_button.isEnabled() and not editor.stop_button.isEnabled()


def test_test_run_carries_the_next_runs_identity(editor: TaskEditor, document: SpecDocument, qtbot) -> None:
    document.set_value("task.argv", ["/usr/bin/printenv", "SCHED_NOMINAL_LOCAL", "SCHED_SCHEDULE_ID"])
    outcome = _run(editor, qtbot)
    # The fixed clock stands on 2027-03-01 12:00Z: the next run is 2027-03-02 02:30 in New York.
    assert outcome.result.stdout_tail.split() == ["2027-03-02T02:30:00", "daily-ops-summary"]
    assert outcome.identity.attempt_id.startswith("test-run-")


def test_a_program_that_does_not_exist(editor: TaskEditor, document: SpecDocument, qtbot) -> None:
    document.set_value("task.argv", ["/no/such/program"])
    outcome = _run(editor, qtbot)
    assert outcome.result.error_class == "spawn_error"
    assert editor.run_status.text() == "Could not start"
    assert "cannot start /no/such/program" in editor.output.toPlainText()


def test_a_hanging_command_can_be_stopped(editor: TaskEditor, document: SpecDocument, qtbot) -> None:
    document.set_value("task.argv", ["/bin/sleep", "600"])
    with qtbot.waitSignal(editor.testRunStarted, timeout=RUN_TIMEOUT_MS):
        editor.run_button.click()
    assert editor.running and editor.stop_button.isEnabled() and not editor.run_button.isEnabled()
    with qtbot.waitSignal(editor.testRunFinished, timeout=RUN_TIMEOUT_MS) as blocker:
        editor.stop_button.click()
    outcome = blocker.args[0]
    assert outcome.result.error_class == "signal"
    assert editor.run_status.text().startswith("Stopped by SIGTERM")
    assert not editor.running


def test_controls_are_named_and_explained(editor: TaskEditor) -> None:
    kinds = (QLineEdit, QComboBox, QListWidget, QTableWidget, QPushButton)
    for widget in [w for kind in kinds for w in editor.findChildren(kind)]:
        if widget.objectName().startswith("qt_"):
            continue
        assert widget.accessibleName(), widget
        assert widget.toolTip(), widget


def _show(qtbot, widget) -> None:
    widget.show()
    widget.activateWindow()
    qtbot.waitActive(widget)


def _row_editor(view) -> QLineEdit | None:
    editors = [e for e in view.viewport().findChildren(QLineEdit) if e.isVisible()]
    return editors[0] if editors else None


def _type_into_row(qtbot, view, item, text: str) -> None:
    """Open the row's editor as a person would (F2), type over its text, and press Enter."""
    view.setFocus()
    view.setCurrentItem(item)
    qtbot.keyClick(view, Qt.Key.Key_F2)
    editor = _row_editor(view)
    assert editor is not None
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _row_editor(view) is None)  # the view commits and closes the editor queued


def test_a_new_argument_reaches_the_command_once_typed(editor: TaskEditor, document: SpecDocument, qtbot) -> None:
    _show(qtbot, editor)
    before = document.value("task.argv")
    qtbot.mouseClick(editor.argv.add_button, Qt.MouseButton.LeftButton)
    # The row is there to be typed into; it is not an empty argument of the command.
    assert document.value("task.argv") == before and document.undo_stack.count() == 0
    assert editor.argv_problem.text() == "⚠ row 3 is empty: type the argument or remove the row"
    assert not document.can_save and not editor.run_button.isEnabled()
    row_editor = _row_editor(editor.argv.list)  # Add opened it
    assert row_editor is not None
    qtbot.keyClicks(row_editor, "--loud")
    qtbot.keyClick(row_editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: _row_editor(editor.argv.list) is None)
    assert document.value("task.argv") == [*before, "--loud"] and document.undo_stack.count() == 1
    assert editor.argv_problem.isHidden() and document.can_save and editor.run_button.isEnabled()


def test_an_environment_row_is_written_once_it_has_a_good_name(
    editor: TaskEditor, document: SpecDocument, qtbot
) -> None:
    _show(qtbot, editor)
    qtbot.mouseClick(editor.env_table.add_button, Qt.MouseButton.LeftButton)
    name_editor = _row_editor(editor.env)  # Add opened it; leave it empty for now
    assert name_editor is not None
    qtbot.keyClick(name_editor, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: _row_editor(editor.env) is None)
    _type_into_row(qtbot, editor.env, editor.env.item(0, 1), "full")
    assert editor.env_problem.text() == "⚠ row 1 has a value but no name"
    assert "env" not in document.value("task") and not document.can_save
    _type_into_row(qtbot, editor.env, editor.env.item(0, 0), "2BAD")
    assert "'2BAD' is not a valid environment variable name" in editor.env_problem.text()
    _type_into_row(qtbot, editor.env, editor.env.item(0, 0), "REPORT_MODE")
    assert document.value("task.env") == {"REPORT_MODE": "full"} and document.undo_stack.count() == 1
    assert editor.env_problem.isHidden() and document.can_save


def test_undo_gives_the_lists_back(editor: TaskEditor, document: SpecDocument, qtbot) -> None:
    editor.effect.setCurrentIndex(editor.effect.findData("non_idempotent"))
    editor.effect.activated.emit(editor.effect.currentIndex())
    for _ in range(2):
        editor.verify.add("")
    assert not document.can_save and "the program (first row) is empty" in editor.verify_problem.text()
    document.undo_stack.undo()
    assert editor.verify.values() == [] and editor.verify_problem.isHidden() and document.can_save
