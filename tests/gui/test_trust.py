"""Trust: a task from a file that came from elsewhere cannot be test-run until
the person trusts it; trust is remembered per content digest."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_support import DEMO, demo_mapping
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit
from shell_fixtures import window_fixture  # noqa: F401

from core.spec.files import dump_yaml
from scheduler_gui.context import AppContext
from scheduler_gui.designer.task_editor import TaskEditor
from scheduler_gui.designer.trust import TrustStore, digest
from scheduler_gui.workspace.document import SpecDocument

FOREIGN = """\
# Sent by a colleague.
schema: scheduleSpec.v1
scheduleId: from-elsewhere
revision: 1
timeZone: Europe/Paris
kind: calendar
rule: FREQ=DAILY;BYHOUR=9
start: 2026-01-01T00:00:00
gapPolicy: SKIP
foldPolicy: FIRST_ONLY
task:
  argv: ["/bin/echo", "{text}"]
  cwd: /tmp
  env: {API_TOKEN: s3cret-value, MODE: fast}
"""


def _foreign(tmp_path: Path, text: str = "hello") -> Path:
    path = tmp_path / "foreign.yaml"
    path.write_text(FOREIGN.replace("{text}", text), encoding="utf-8")
    return path


def _editor(path: Path | None, ctx: AppContext, qtbot, data: dict | None = None) -> tuple[SpecDocument, TaskEditor]:
    doc = SpecDocument(data)
    if path is not None:
        doc.load(path)
    editor = TaskEditor(doc, ctx)
    qtbot.addWidget(editor)
    return doc, editor


def test_untrusted_file_shows_its_task_and_cannot_run(tmp_path: Path, ctx: AppContext, qtbot) -> None:
    _doc, editor = _editor(_foreign(tmp_path), ctx, qtbot)
    assert editor.trust_prompt.isVisibleTo(editor)
    shown = editor.trust_prompt.details.toPlainText()
    assert "/bin/echo" in shown and "hello" in shown
    assert "Working folder: /tmp" in shown
    assert "Environment: API_TOKEN, MODE" in shown
    assert "s3cret-value" not in shown  # names only, never values
    assert not editor.run_button.isEnabled()
    assert not editor.start_test_run()
    assert "Trust this file first" in editor.run_status.text()


def test_trusting_allows_the_run_and_is_remembered(tmp_path: Path, ctx: AppContext, qtbot) -> None:
    path = _foreign(tmp_path)
    _doc, editor = _editor(path, ctx, qtbot)
    editor.trust_prompt.trust_button.click()
    assert not editor.trust_prompt.isVisibleTo(editor)
    assert editor.run_button.isEnabled()
    with qtbot.waitSignal(editor.testRunFinished, timeout=15_000) as blocker:
        editor.run_button.click()
    assert blocker.args[0].result.stdout_tail == "hello\n"
    # Opened again, the same bytes need no second question.
    _doc2, again = _editor(path, ctx, qtbot)
    assert not again.trust_prompt.isVisibleTo(again)
    assert again.run_button.isEnabled()
    assert TrustStore(ctx.settings).is_trusted_digest(digest(path.read_bytes()))


def test_changed_content_asks_again(tmp_path: Path, ctx: AppContext, qtbot) -> None:
    path = _foreign(tmp_path)
    TrustStore(ctx.settings).trust_file(path)
    _foreign(tmp_path, text="something else")
    _doc, editor = _editor(path, ctx, qtbot)
    assert editor.trust_prompt.isVisibleTo(editor)
    assert not editor.run_button.isEnabled()


@pytest.mark.parametrize(
    "where", [pytest.param("bundled", id="bundled_demo"), pytest.param("workspace", id="copy_in_workspace")]
)
def test_demo_templates_are_trusted(where: str, ctx: AppContext, qtbot) -> None:
    path = DEMO / "mel-sync.yaml" if where == "bundled" else ctx.workspace / "mel-sync.yaml"
    _doc, editor = _editor(path, ctx, qtbot)
    assert not editor.trust_prompt.isVisibleTo(editor)
    assert editor.run_button.isEnabled()


def test_new_documents_and_their_saved_files_are_trusted(tmp_path: Path, ctx: AppContext, qtbot) -> None:
    data = demo_mapping("daily-ops-summary") | {"scheduleId": "made-here"}
    doc, editor = _editor(None, ctx, qtbot, data)
    assert editor.run_button.isEnabled()
    target = tmp_path / "made-here.yaml"
    doc.save(target)
    store = TrustStore(ctx.settings)
    qtbot.waitUntil(lambda: store.is_trusted_file(target), timeout=5000)
    _doc2, reopened = _editor(target, ctx, qtbot)
    assert not reopened.trust_prompt.isVisibleTo(reopened)


def test_saving_an_untrusted_file_does_not_trust_it(tmp_path: Path, ctx: AppContext, qtbot) -> None:
    path = _foreign(tmp_path)
    doc, editor = _editor(path, ctx, qtbot)
    doc.set_value("title", "Edited here")
    with qtbot.waitSignal(editor.keeper.changed, timeout=5000):
        doc.save()
    assert not TrustStore(ctx.settings).is_trusted_file(path)
    assert not editor.run_button.isEnabled()
    assert editor.trust_prompt.isVisibleTo(editor)


def test_a_file_without_a_task_needs_no_trust(tmp_path: Path, ctx: AppContext, qtbot) -> None:
    path = tmp_path / "no-task.yaml"
    data = demo_mapping("daily-ops-summary")
    del data["task"]
    path.write_text(dump_yaml(data), encoding="utf-8")
    doc = SpecDocument()
    doc.load(path)
    assert not TrustStore(ctx.settings).needs_trust(doc)


def test_publishing_asks_only_for_untrusted_tasks(tmp_path: Path, ctx: AppContext, qtbot, monkeypatch) -> None:
    from PySide6.QtWidgets import QDialog

    from scheduler_gui.designer import trust

    asked: list[str] = []

    def answer(dialog: QDialog) -> int:
        asked.append(dialog.prompt.details.toPlainText())
        dialog.prompt._trust()
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(trust.TrustDialog, "exec", answer)
    demo = SpecDocument()
    demo.load(DEMO / "daily-ops-summary.yaml")
    assert trust.ensure_trusted(demo, ctx.settings)
    assert asked == []
    path = _foreign(tmp_path)
    doc = SpecDocument()
    doc.load(path)
    assert trust.ensure_trusted(doc, ctx.settings)
    assert len(asked) == 1 and "API_TOKEN, MODE" in asked[0]
    assert TrustStore(ctx.settings).is_trusted_file(path)
    assert trust.ensure_trusted(doc, ctx.settings)
    assert len(asked) == 1


def test_the_publish_check_leaves_nothing_behind(ctx: AppContext, qtbot, qapp) -> None:
    """The keeper made for Publish's trust question is gone with it: editing the document and
    undoing back to the saved content (dirty, then clean again) afterwards raises nothing."""
    from PySide6.QtCore import QCoreApplication, QEvent

    from scheduler_gui.designer import trust

    doc = SpecDocument()
    doc.load(DEMO / "daily-ops-summary.yaml")
    assert trust.ensure_trusted(doc, ctx.settings)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the keeper's deleteLater
    doc.set_value("title", "Changed")
    doc.undo_stack.undo()  # clean again: a keeper still listening would be called, deleted
    qapp.processEvents()
    assert not doc.dirty


# --- publishing from the window -----------------------------------------------------------------


def _publish_counting_questions(window, qtbot, monkeypatch, path: Path) -> tuple[list[str], list[Path]]:
    """Press Publish twice (the publish dialog is a stand-in that publishes nothing); returns the trust
    questions asked (answered Cancel) and the files the publish dialog was opened for."""
    from PySide6.QtWidgets import QDialog, QFileDialog

    import scheduler_gui.monitor.publish_dialog as publish_dialog
    from scheduler_gui.designer import trust

    asked: list[str] = []
    opened: list[Path] = []

    class Dialog:
        def __init__(self, _ctx, _spec, _parent, *, source_file: Path) -> None:
            opened.append(source_file)

        def exec(self) -> int:
            return 0

    def cancel(dialog: QDialog) -> int:
        asked.append(dialog.prompt.heading.text())
        return QDialog.DialogCode.Rejected

    monkeypatch.setattr(trust.TrustDialog, "exec", cancel)
    monkeypatch.setattr(publish_dialog, "PublishDialog", Dialog)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), "Schedules (*.yaml *.yml)"))
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    for _ in range(2):
        window.acts.publish.trigger()
    return asked, opened


def _new_schedule_with_a_task(window, qtbot, monkeypatch, ctx: AppContext) -> None:
    """File ▸ New, then a command typed into the task editor's list: ``echo made-here``."""
    from shell_fixtures import keep_zones

    window.acts.new.trigger()
    keep_zones(monkeypatch)
    window.show()
    qtbot.waitExposed(window)
    qtbot.mouseClick(window.designer.task_section.button, Qt.MouseButton.LeftButton)
    editor = window.designer.task_editor
    for word in ("echo", "made-here"):
        qtbot.mouseClick(editor.argv.add_button, Qt.MouseButton.LeftButton)
        row = next(e for e in editor.argv.list.viewport().findChildren(QLineEdit) if e.isVisible())
        qtbot.keyClicks(row, word)
        qtbot.keyClick(row, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: not any(e.isVisible() for e in editor.argv.list.viewport().findChildren(QLineEdit)))
    assert window.document.value("task.argv") == ["echo", "made-here"]


def _edited_demo(window, qtbot, monkeypatch, ctx: AppContext) -> None:
    """The demo the window opens with, its title retyped."""
    title = next(w for w in window.designer.findChildren(QLineEdit) if w.accessibleName() == "Title")
    title.setFocus()
    title.selectAll()
    QTest.keyClicks(title, "Ops summary, edited")
    assert window.document.dirty


def _changed_outside(window, qtbot, monkeypatch, ctx: AppContext) -> None:
    """The open demo's file is rewritten by another program, and the window follows it."""
    path = window.document.path
    path.write_text(path.read_text(encoding="utf-8").replace("/bin/echo", "/bin/rm"), encoding="utf-8")
    window.document.load(path)


@pytest.mark.parametrize(
    ("make", "questions"),
    [
        pytest.param(_new_schedule_with_a_task, 0, id="new_schedule_with_a_task"),
        pytest.param(_edited_demo, 0, id="edited_demo"),
        pytest.param(_changed_outside, 2, id="file_changed_outside_asks_each_time"),
    ],
)
def test_publish_asks_about_trust_only_for_a_file_changed_outside(
    make, questions: int, window, ctx: AppContext, qtbot, monkeypatch
) -> None:
    make(window, qtbot, monkeypatch, ctx)
    asked, opened = _publish_counting_questions(window, qtbot, monkeypatch, ctx.workspace / "made-here.yaml")
    assert len(asked) == questions
    assert all("came from elsewhere" in text for text in asked)
    assert len(opened) == 2 - questions  # what is trusted goes on to the publish dialog, both times
