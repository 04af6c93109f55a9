"""The task editor writes argv lists (never a shell string) and test-runs the
command off the GUI thread, with a Stop that works on a hanging command."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QComboBox, QLineEdit, QListWidget, QPushButton, QTableWidget

from scheduler_gui.context import AppContext
from scheduler_gui.designer.task_editor import TaskEditor
from scheduler_gui.designer.trial_run import TrialOutcome
from scheduler_gui.document import SpecDocument

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


def test_empty_command_shows_the_cores_message(editor: TaskEditor, document: SpecDocument) -> None:
    for _ in range(2):
        editor.argv.list.setCurrentRow(0)
        editor.argv.remove()
    assert document.value("task.argv") == []
    assert not document.valid
    assert editor.argv_problem.text().startswith("⚠")
    assert not editor.run_button.isEnabled()


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
    assert not document.valid
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
