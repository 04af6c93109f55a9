"""A schedule's names: the title a person types, the id that follows it, the id's
checks against the workspace and the ledger, the id fixed once published, new
ids for File ▸ New and Save As, the confirmation before a publish replaces
another file's schedule, and the sidebar's truth about which file is published."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from gui_support import demo_mapping
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox, QWidget
from shell_fixtures import answer, keep_zones, when_modal, window_fixture  # noqa: F401
from sqlalchemy import select

from core.ledger.materialize import materialize_all
from core.ledger.models import Revision
from core.ledger.publish import RevisionSource, publish
from core.spec.files import load_spec
from core.spec.validation import parse_spec
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.monitor.publish_dialog import PublishDialog

Button = QMessageBox.StandardButton


# --- helpers --------------------------------------------------------------------------------


def named(root: QWidget, name: str) -> Any:
    """The widget under ``root`` a screen reader calls ``name``."""
    return next(w for w in root.findChildren(QWidget) if w.accessibleName() == name)


def field(window: MainWindow, name: str) -> Any:
    """A widget of the designer now shown (a replaced page lingers until Qt deletes it)."""
    assert window.designer is not None
    return named(window.designer, name)


def retype(edit: QLineEdit, text: str) -> None:
    """Select what the field holds and type ``text`` over it, as a person does."""
    edit.setFocus()
    edit.selectAll()
    QTest.keyClicks(edit, text)


def open_ledger(window: MainWindow, qtbot: Any) -> None:
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()


def put(ctx: AppContext, name: str, source: Path | None, **changes: Any) -> None:
    """Publish a demo schedule (with ``changes``) as if from the file ``source``; materialize it."""
    data = demo_mapping(name)
    data.update(changes)
    where = RevisionSource(str(source), socket.gethostname()) if source is not None else None
    with ctx.ledger.write() as session:
        publish(session, parse_spec(data), ctx.clock, source=where)
        materialize_all(session, ctx.clock)


def save_as_to(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), "Schedules (*.yaml *.yml)"))


# --- the title and the id ----------------------------------------------------------------------


def test_the_id_follows_the_title_as_it_is_typed(window: MainWindow) -> None:
    window.acts.new.trigger()
    doc = window.document
    title, sid = field(window, "Title"), field(window, "Id")
    assert (title.text(), sid.text()) == ("New schedule", "new-schedule")
    retype(title, "Morning summary")
    assert sid.text() == "morning-summary"
    assert (doc.value("title"), doc.value("scheduleId")) == ("Morning summary", "morning-summary")
    assert window.acts.save.isEnabled()
    # Typing is one undo step, and it takes the id with it.
    window.acts.undo.trigger()
    assert (title.text(), sid.text()) == ("New schedule", "new-schedule")
    assert doc.value("scheduleId") == "new-schedule"


def test_a_taken_slug_gets_a_suffix(window: MainWindow) -> None:
    window.acts.new.trigger()
    retype(field(window, "Title"), "Mel sync")  # mel-sync.yaml holds "mel-sync"
    assert field(window, "Id").text() == "mel-sync-2"


def test_an_id_edited_by_hand_stops_following_the_title(window: MainWindow) -> None:
    window.acts.new.trigger()
    title, sid = field(window, "Title"), field(window, "Id")
    retype(title, "Morning summary")
    retype(sid, "digest")
    assert window.document.value("scheduleId") == "digest"
    QTest.keyClicks(title, " for ops")
    assert window.document.value("title") == "Morning summary for ops"
    assert sid.text() == "digest" and window.document.value("scheduleId") == "digest"
    # Typing the title's own id again makes it follow again.
    retype(sid, "morning-summary-for-ops")
    QTest.keyClicks(title, " team")
    assert sid.text() == "morning-summary-for-ops-team"


def test_an_opened_file_whose_id_is_not_its_titles_keeps_it(window: MainWindow) -> None:
    # daily-ops-summary.yaml: title "Operating summary", id daily-ops-summary.
    retype(field(window, "Title"), "Ops summary")
    assert field(window, "Id").text() == "daily-ops-summary"


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("Morning", "lower-case only"),
        ("-morning", "starting with a letter or digit"),
        ("morning summary", "cannot be an id"),
        ("m" * 65, "at most 64 characters"),
        ("", "Give the schedule an id"),
        ("mel-sync", "already the id of mel-sync.yaml in the workspace"),
    ],
    ids=["capitals", "leading_dash", "space", "too_long", "empty", "taken_in_the_workspace"],
)
def test_a_bad_id_is_said_under_the_field_and_save_waits(window: MainWindow, typed: str, said: str) -> None:
    window.acts.new.trigger()
    doc = window.document
    sid = field(window, "Id")
    problem = field(window, "Id: problem")
    retype(sid, typed) if typed else (sid.setFocus(), sid.selectAll(), QTest.keyClick(sid, "\b"))
    assert problem.isVisibleTo(window) and said in problem.text()
    assert not window.acts.save.isEnabled() and not window.acts.save_as.isEnabled()
    assert said in window.acts.save.toolTip()
    # The document never holds the bad id: it keeps the last good one typed (a prefix, or the first).
    assert doc.value("scheduleId") != typed and doc.value("scheduleId")
    retype(sid, "morning-digest")
    assert not problem.isVisibleTo(window) and window.acts.save.isEnabled()
    assert doc.value("scheduleId") == "morning-digest"


def test_an_id_published_from_another_file_is_refused_and_publish_waits(
    window: MainWindow, ctx: AppContext, qtbot: Any, tmp_path: Path
) -> None:
    put(ctx, "mel-sync", tmp_path / "elsewhere" / "melbourne.yaml", scheduleId="evening-digest")
    open_ledger(window, qtbot)
    window.acts.new.trigger()
    assert window.acts.publish.isEnabled()
    retype(field(window, "Id"), "evening-digest")
    problem = field(window, "Id: problem")
    assert problem.isVisibleTo(window)
    assert "“evening-digest” is already published, from melbourne.yaml" in problem.text()
    assert not window.acts.save.isEnabled() and not window.acts.publish.isEnabled()
    # The title's id avoids it too.
    retype(field(window, "Title"), "Evening digest")
    assert field(window, "Id").text() == "evening-digest"  # typed by hand: no longer follows
    retype(field(window, "Id"), "evening-digest-2")
    assert window.acts.publish.isEnabled()


def test_without_the_ledger_ids_are_checked_against_the_workspace_only(window: MainWindow) -> None:
    note = field(window, "Id: note")
    assert window.hub.state == "closed"
    assert note.isVisibleTo(window) and "workspace only" in note.text() and "Publish checks again" in note.text()


# --- File ▸ New and Save As ---------------------------------------------------------------------


def test_new_twice_saved_under_different_names_gets_different_ids(
    window: MainWindow, ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = []
    asked = keep_zones(monkeypatch)
    for name in ("first.yaml", "second.yaml"):
        window.acts.new.trigger()
        save_as_to(monkeypatch, ctx.workspace / name)
        window.acts.save.trigger()
        ids.append(load_spec(ctx.workspace / name).schedule_id)
    assert ids == ["new-schedule", "new-schedule-2"]
    assert len(asked) == 2  # once for each new schedule


def test_new_avoids_ids_published_to_the_ledger(
    window: MainWindow, ctx: AppContext, qtbot: Any, tmp_path: Path
) -> None:
    put(ctx, "mel-sync", tmp_path / "gone.yaml", scheduleId="new-schedule")
    open_ledger(window, qtbot)
    window.acts.new.trigger()
    assert window.document.value("scheduleId") == "new-schedule-2"


@pytest.mark.parametrize("reply", [Button.Save, Button.Cancel], ids=["fresh_id", "cancelled"])
def test_save_as_a_copy_whose_id_is_taken_offers_a_fresh_one(
    window: MainWindow, ctx: AppContext, monkeypatch: pytest.MonkeyPatch, reply: QMessageBox.StandardButton
) -> None:
    original = window.document.path
    before = original.read_text(encoding="utf-8")
    asked = answer(monkeypatch, reply)
    save_as_to(monkeypatch, ctx.workspace / "evening report.yaml")
    window.acts.save_as.trigger()
    assert len(asked) == 1
    assert "“daily-ops-summary” is already the id of daily-ops-summary.yaml" in asked[0]
    assert "“evening-report”" in asked[0]
    copy = ctx.workspace / "evening report.yaml"
    assert original.read_text(encoding="utf-8") == before
    if reply == Button.Save:
        saved = load_spec(copy)
        assert (saved.schedule_id, saved.revision) == ("evening-report", 1)
        assert window.document.path == copy.resolve()
        assert field(window, "Id").text() == "evening-report"
    else:
        assert not copy.exists() and window.document.path == original
        assert window.document.value("scheduleId") == "daily-ops-summary"


def test_save_as_a_copy_of_a_published_schedule_outside_the_workspace(
    window: MainWindow, ctx: AppContext, qtbot: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Outside the workspace only the ledger knows the id: it still belongs to the original file."""
    put(ctx, "daily-ops-summary", ctx.workspace / "daily-ops-summary.yaml")
    open_ledger(window, qtbot)
    asked = answer(monkeypatch, Button.Save)
    (ctx.workspace / "daily-ops-summary.yaml").rename(tmp_path / "moved-away.yaml")  # no workspace namesake
    assert window.save_as(tmp_path / "copy.yaml")
    assert "already published, from daily-ops-summary.yaml" in asked[0]
    assert load_spec(tmp_path / "copy.yaml").schedule_id == "copy"


# --- published: the id is fixed -----------------------------------------------------------------


def test_a_published_id_is_fixed_and_a_new_schedule_is_offered(
    window: MainWindow, ctx: AppContext, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = ctx.workspace / "daily-ops-summary.yaml"
    before = original.read_text(encoding="utf-8")
    put(ctx, "daily-ops-summary", original)
    open_ledger(window, qtbot)
    sid = field(window, "Id")
    assert sid.isReadOnly() and "Published as revision 1" in sid.toolTip()
    assert field(window, "Id: published").text() == "published · revision 1 · fixed"
    QTest.keyClicks(sid, "-renamed")
    assert window.document.value("scheduleId") == "daily-ops-summary"
    # The title is not the id: it still changes, and the id stays.
    retype(field(window, "Title"), "Morning summary")
    assert sid.text() == "daily-ops-summary"

    save_as_to(monkeypatch, ctx.workspace / "morning.yaml")
    field(window, "Make a new schedule from this").click()
    new = window.document
    assert new.path == (ctx.workspace / "morning.yaml").resolve() and not new.dirty
    saved = load_spec(ctx.workspace / "morning.yaml")
    assert (saved.schedule_id, saved.revision, saved.title) == ("morning-summary", 1, "Morning summary")
    assert original.read_text(encoding="utf-8") == before  # the published file is left as it was
    sid = field(window, "Id")
    assert not sid.isReadOnly() and sid.text() == "morning-summary"
    assert not window.designer.identity.new_button.isVisibleTo(window)


def test_a_new_schedule_from_this_cancelled_changes_nothing(
    window: MainWindow, ctx: AppContext, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    put(ctx, "daily-ops-summary", ctx.workspace / "daily-ops-summary.yaml")
    open_ledger(window, qtbot)
    doc = window.document
    files = sorted(p.name for p in ctx.workspace.iterdir())
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: ("", ""))
    field(window, "Make a new schedule from this").click()
    assert window.document is doc and doc.value("scheduleId") == "daily-ops-summary"
    assert sorted(p.name for p in ctx.workspace.iterdir()) == files


# --- publishing over another file's schedule ----------------------------------------------------


def _publish_answering(window: MainWindow, qtbot: Any, replace: bool) -> dict[str, Any]:
    """Publish with the window's action; in the publish dialog press Publish, then answer the
    replacement question (Replace, or Cancel and close the dialog). Returns what the question showed."""
    seen: dict[str, Any] = {}

    def on_box(box: QMessageBox) -> None:
        seen["text"] = f"{box.text()}\n{box.informativeText()}"
        seen["default"] = box.defaultButton().text()
        seen["title"] = box.windowTitle()
        replace_name = next(b.accessibleName() for b in box.buttons() if b.accessibleName().startswith("Replace"))
        assert replace_name.startswith("Replace with ")  # the button's words: "Replace with <this file>"
        chosen = named(box, replace_name) if replace else box.button(QMessageBox.StandardButton.Cancel)
        QTest.mouseClick(chosen, Qt.MouseButton.LeftButton)

    def on_dialog(dialog: PublishDialog) -> bool:
        if dialog.diff is None or not dialog.publish_button.isEnabled():
            return False
        seen["warning"] = dialog.replacing.text() if dialog.replacing.isVisibleTo(dialog) else None
        when_modal(QMessageBox, on_box)
        dialog.publish_button.click()
        if not replace:
            seen["still_open"] = dialog.isVisible()
            dialog.reject()
        return True

    when_modal(PublishDialog, on_dialog)
    window.acts.publish.trigger()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=30_000)
    return seen


def _revisions(ctx: AppContext) -> list[tuple[int, str | None]]:
    with ctx.ledger.read() as session:
        rows = session.scalars(select(Revision).where(Revision.schedule_id == "daily-ops-summary"))
        return sorted((r.revision, r.source_path) for r in rows)


@pytest.mark.parametrize("replace", [False, True], ids=["cancel_publishes_nothing", "replace"])
def test_publishing_over_another_files_schedule_asks_first(
    window: MainWindow, ctx: AppContext, qtbot: Any, tmp_path: Path, replace: bool
) -> None:
    other = tmp_path / "team" / "ops.yaml"
    put(ctx, "daily-ops-summary", other)
    open_ledger(window, qtbot)
    this = window.document.path
    note = field(window, "Id: note")
    assert "also published, from ops.yaml" in note.text()  # said before anything is published
    assert window.acts.publish.isEnabled()
    seen = _publish_answering(window, qtbot, replace)
    assert seen["warning"] and "not from daily-ops-summary.yaml" in seen["warning"]
    assert seen["default"] == "Cancel"
    assert seen["title"] == "Replace a schedule published from another file?"
    text = seen["text"]
    assert "daily-ops-summary.yaml and ops.yaml both use the id “daily-ops-summary”" in text
    assert str(other) in text  # the other file, in full
    # What stops running: that schedule, in words, and its next run.
    assert "What stops running: “Operating summary” (daily-ops-summary), revision 1" in text
    assert "Every day at 02:30 in America/New_York." in text
    assert "its next run Tue 2027-03-02 02:30 EST −05:00 · 2027-03-02 07:30Z among them" in text
    assert "Cancel keeps the schedule from ops.yaml running" in text
    if not replace:
        assert seen["still_open"]
        assert _revisions(ctx) == [(1, str(other))]
    else:
        assert _revisions(ctx) == [(1, str(other)), (2, str(this))]
        qtbot.waitUntil(lambda: field(window, "Id").isReadOnly(), timeout=10_000)


def test_publishing_the_file_the_schedule_came_from_asks_nothing(
    window: MainWindow, ctx: AppContext, qtbot: Any
) -> None:
    this = ctx.workspace / "daily-ops-summary.yaml"
    put(ctx, "daily-ops-summary", this)
    open_ledger(window, qtbot)

    def press_publish(dialog: PublishDialog) -> bool:
        if dialog.diff is None or not dialog.publish_button.isEnabled():
            return False
        assert dialog.replaces is None and not dialog.replacing.isVisibleTo(dialog)
        dialog.publish_button.click()
        return True

    when_modal(PublishDialog, press_publish)
    window.acts.publish.trigger()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=30_000)
    assert _revisions(ctx) == [(1, str(this.resolve())), (2, str(this.resolve()))]


def test_publishing_over_a_schedule_of_unrecorded_origin_asks_once(
    window: MainWindow, ctx: AppContext, qtbot: Any
) -> None:
    """Published from standard input (or by an older ledger): nobody can say it is this file's, so the
    first publish from the window asks; once replaced, the file is recorded and the next publish does not."""
    put(ctx, "daily-ops-summary", None)
    open_ledger(window, qtbot)
    this = str(window.document.path)
    seen = _publish_answering(window, qtbot, replace=True)
    assert seen["default"] == "Cancel"
    assert "published from a file the ledger did not record" in seen["text"]
    assert _revisions(ctx) == [(1, None), (2, this)]

    def press_publish(dialog: PublishDialog) -> bool:
        if dialog.diff is None or not dialog.publish_button.isEnabled():
            return False
        assert dialog.replaces is None
        dialog.publish_button.click()
        return True

    when_modal(PublishDialog, press_publish)
    window.acts.publish.trigger()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=30_000)
    assert _revisions(ctx) == [(1, None), (2, this), (3, this)]


def test_publishing_an_unsaved_schedule_saves_it_first(
    window: MainWindow, ctx: AppContext, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_ledger(window, qtbot)
    window.acts.new.trigger()
    keep_zones(monkeypatch)
    retype(field(window, "Title"), "Morning summary")
    save_as_to(monkeypatch, ctx.workspace / "morning.yaml")
    opened: list[Path] = []

    class Dialog:
        def __init__(self, _ctx: Any, spec: Any, _parent: Any, *, source_file: Path) -> None:
            opened.append(source_file)

        def exec(self) -> int:
            return 0

    import scheduler_gui.monitor.publish_dialog as publish_dialog

    monkeypatch.setattr(publish_dialog, "PublishDialog", Dialog)
    window.acts.publish.trigger()
    assert opened == [(ctx.workspace / "morning.yaml").resolve()]
    assert load_spec(ctx.workspace / "morning.yaml").schedule_id == "morning-summary"


# --- the sidebar --------------------------------------------------------------------------------


def test_the_sidebar_shows_a_file_as_published_only_when_it_is_the_one_published(
    window: MainWindow, ctx: AppContext, qtbot: Any, tmp_path: Path
) -> None:
    put(ctx, "daily-ops-summary", ctx.workspace / "daily-ops-summary.yaml")  # from its own file
    put(ctx, "mel-sync", tmp_path / "elsewhere.yaml")  # the same id, from another file
    put(ctx, "interval-15min", None)  # no file recorded: the file holding the id is taken to be it
    open_ledger(window, qtbot)
    rows = {r.path.name: r for r in window.sidebar.schedules.rows()}
    assert rows["daily-ops-summary.yaml"].look.word == "active"
    mel = rows["mel-sync.yaml"]
    assert mel.look.word == "not published · id in use" and mel.label == "Melbourne weekly sync"
    assert mel.look.glyph == "○" and mel.next_run is None and mel.attention == 0
    assert "published from elsewhere.yaml, not from this file" in mel.tooltip
    assert "mel-sync.yaml" in mel.tooltip and "Id mel-sync" in mel.tooltip
    heartbeat = rows["interval-15min.yaml"]
    assert heartbeat.look.word == "active" and "did not record which file" in heartbeat.tooltip
    # What is shown and read out: the title, then the state in words.
    index = window.sidebar.schedules.index(window.sidebar.schedules.row_of(mel.path), 0)
    assert index.data().startswith("○ Melbourne weekly sync\n")
    spoken = index.data(Qt.ItemDataRole.AccessibleTextRole)
    assert spoken == "Melbourne weekly sync, calendar · not published · id in use"
    assert index.data(Qt.ItemDataRole.ToolTipRole) == mel.tooltip


def test_a_schedule_published_on_another_host_is_not_this_file(tmp_path: Path) -> None:
    from scheduler_gui.workspace.schedule_names import Published, this_host

    path = tmp_path / "ops.yaml"
    mine = Published("ops", 1, None, str(path), this_host())
    theirs = Published("ops", 1, None, str(path), "beta-" + this_host())
    unknown = Published("ops", 1, None, None, None)
    assert mine.came_from(path) and not mine.came_from(tmp_path / "other.yaml") and not mine.came_from(None)
    assert not theirs.came_from(path) and theirs.where() == f"ops.yaml on host beta-{this_host()}"
    assert unknown.came_from(path) and not unknown.came_from(None)


def test_the_next_run_shows_as_soon_as_the_ledger_opens(window: MainWindow, ctx: AppContext, qtbot: Any) -> None:
    data = demo_mapping("daily-ops-summary")
    with ctx.ledger.write() as session:  # published, nothing materialized, no engine running
        publish(
            session,
            parse_spec(data),
            ctx.clock,
            source=RevisionSource.of_file(ctx.workspace / "daily-ops-summary.yaml"),
        )
    open_ledger(window, qtbot)
    assert window.hub.engine is None or str(window.hub.engine.state) != "running"
    row = next(r for r in window.sidebar.schedules.rows() if r.path.name == "daily-ops-summary.yaml")
    assert row.next_run == "Tue 03-02 02:30 EST · 07:30Z"
    assert "Next run Tue 2027-03-02 02:30 EST −05:00 · 07:30Z (from the published rule" in row.tooltip


def test_a_replaced_designer_page_no_longer_listens_to_the_ledger(
    window: MainWindow, ctx: AppContext, qtbot: Any
) -> None:
    open_ledger(window, qtbot)
    old = window.designer.identity
    window.acts.new.trigger()
    with qtbot.waitSignal(old.destroyed, timeout=5000):
        pass  # the old page is deleted once the event loop runs
    with qtbot.waitSignal(window.hub.summariesChanged, timeout=30_000):
        window.hub.refresh_summaries()  # raised "already deleted" in the old page's slot before
    assert field(window, "Id").text() == "new-schedule"
