"""Files: new, new from template, open, save, save as, recent files, the
unsaved-changes guard, save blocked while invalid, and autosave recovery;
saving keeps a person's file as they wrote it, changing only what they changed."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QMessageBox, QToolButton, QWidget
from shell_fixtures import answer, keep_zones, window_fixture  # noqa: F401
from spec_texts import COMMENTED

from core.clock import FixedClock
from core.spec.canonical import KEY_ORDER
from core.spec.files import load_spec, load_text
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.workspace.autosave import Autosaver
from scheduler_gui.workspace.folder import (
    blank_spec,
    from_template,
    names_in_use,
    seed_workspace,
    slug,
    templates,
    unique_id,
)
from scheduler_gui.workspace.recent import LIMIT, RecentFiles

Button = QMessageBox.StandardButton


def test_new_is_a_valid_daily_schedule_with_policies_chosen(window: MainWindow, ctx: AppContext) -> None:
    assert window.new_document()
    doc = window.document
    assert doc is not None and doc.path is None and doc.valid
    assert doc.value("kind") == "calendar"
    assert doc.value("rule") == "FREQ=DAILY;BYHOUR=9;BYMINUTE=0"
    assert doc.value("gapPolicy") == "SHIFT_FORWARD" and doc.value("foldPolicy") == "FIRST_ONLY"
    assert doc.value("timeZone") == "UTC"  # the workspace's zone: the test machine's until one is chosen
    assert doc.value("start") == "2027-03-01T09:00:00"  # today in the fixed clock
    assert doc.value("scheduleId") == "new-schedule"
    assert window.windowTitle() == "Tidemark — new-schedule.yaml"
    assert window.sidebar.schedule_view.selectionModel().selectedIndexes() == []


def test_the_window_title_follows_a_new_schedules_id_as_its_title_is_typed(window: MainWindow) -> None:
    window.new_document()
    title = next(w for w in window.designer.findChildren(QWidget) if w.accessibleName() == "Title")
    title.setFocus()
    title.selectAll()
    QTest.keyClicks(title, "Morning summary")
    assert window.document.value("scheduleId") == "morning-summary"
    assert window.windowTitle() == "Tidemark — morning-summary.yaml ●"


def test_the_sidebar_lists_schedules_by_title_not_by_file_name(window: MainWindow, ctx: AppContext) -> None:
    (ctx.workspace / "aaa.yaml").write_text(
        (ctx.workspace / "mel-sync.yaml")
        .read_text(encoding="utf-8")
        .replace("Melbourne weekly sync", "Zulu report")
        .replace("scheduleId: mel-sync", "scheduleId: zulu-report"),
        encoding="utf-8",
    )
    window.refresh_sidebar()
    labels = [row.label for row in window.sidebar.schedules.rows()]
    assert labels == sorted(labels, key=str.casefold)
    assert labels[-1] == "Zulu report" and labels[0] == "Backup (always fails)"


def test_blank_spec_in_a_zone_where_it_is_already_tomorrow(tmp_path: Path) -> None:
    # 2027-03-01 12:00Z is already 2027-03-02 in Kiritimati (UTC+14).
    from datetime import UTC, datetime

    data = blank_spec(FixedClock(datetime(2027, 3, 1, 12, 0, tzinfo=UTC)), tmp_path, "Pacific/Kiritimati")
    assert data["start"] == "2027-03-02T09:00:00"


def test_unique_ids_avoid_the_ids_inside_files_and_their_names(tmp_path: Path) -> None:
    assert unique_id("New schedule", names_in_use(tmp_path)) == "new-schedule"
    (tmp_path / "new-schedule.yaml").write_text("x: 1\n", encoding="utf-8")  # a name
    (tmp_path / "morning.yaml").write_text("scheduleId: new-schedule-2\n", encoding="utf-8")  # an id inside
    assert names_in_use(tmp_path) == {"new-schedule", "morning", "new-schedule-2"}
    assert unique_id("New schedule", names_in_use(tmp_path)) == "new-schedule-3"
    assert unique_id("Mel Sync!", set()) == "mel-sync"
    assert unique_id("x" * 64, {"x" * 64}) == "x" * 62 + "-2"  # the suffix fits in 64 characters


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Morning summary", "morning-summary"),
        ("  Morning   summary  ", "morning-summary"),
        ("Zürich Straße", "zurich-strasse"),
        ("Crème brûlée — 02:30", "creme-brulee-02-30"),
        ("ØRESUND bridge", "oresund-bridge"),
        ("v2.1 export!", "v2-1-export"),
        ("_private_", "private"),
        ("日本の報告", "schedule"),
        ("", "schedule"),
        ("a" * 70, "a" * 64),
        ("a" * 63 + " b", "a" * 63),
    ],
    ids=[
        "plain",
        "spaces",
        "umlaut_and_eszett",
        "accents_and_dash",
        "capital_o_slash",
        "dots",
        "underscores",
        "no_latin_letters",
        "empty",
        "too_long",
        "trimmed_at_a_separator",
    ],
)
def test_slug_of_a_title(title: str, expected: str) -> None:
    assert slug(title) == expected


@given(st.text(max_size=120))
def test_a_slug_is_always_a_valid_id(title: str) -> None:
    from core.spec.model import SCHEDULE_ID

    assert SCHEDULE_ID.fullmatch(slug(title))


def test_every_template_is_a_valid_spec() -> None:
    found = templates()
    assert {e.schedule_id for e in found} >= {"daily-ops-summary", "mel-sync", "invoice-month-end"}
    for entry in found:
        assert load_spec(entry.path).schedule_id == entry.schedule_id


def test_new_from_template_gets_a_fresh_id(window: MainWindow, ctx: AppContext, monkeypatch) -> None:
    options = templates()
    mel = next(i for i, e in enumerate(options) if e.schedule_id == "mel-sync")
    labels: list[str] = []

    def pick(_parent, _title, _label, items, *args, **kwargs):
        labels.extend(items)
        return items[mel], True

    monkeypatch.setattr(QInputDialog, "getItem", pick)
    window.acts.new_from_template.trigger()
    doc = window.document
    assert any("Melbourne" in label for label in labels)
    # mel-sync.yaml is already in the workspace: the copy gets its own id.
    assert doc.value("scheduleId") == "mel-sync-2" and doc.value("timeZone") == "Australia/Melbourne"
    assert doc.path is None and doc.valid


def test_template_from_a_damaged_file_says_why(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(Exception, match="not a mapping"):
        from_template(bad, tmp_path)


def test_save_writes_the_file_and_marks_clean(window: MainWindow) -> None:
    doc = window.document
    path = doc.path
    doc.set_value("title", "Ops summary (renamed)")
    assert window.windowTitle().endswith("●")
    window.acts.save.trigger()
    assert not doc.dirty and not window.windowTitle().endswith("●")
    assert load_spec(path).title == "Ops summary (renamed)"
    assert window.recent.paths()[0] == path


def test_save_of_a_new_document_asks_where(window: MainWindow, ctx: AppContext, monkeypatch) -> None:
    window.new_document()
    keep_zones(monkeypatch)
    target = ctx.workspace / "morning"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), "Schedules (*.yaml *.yml)"))
    assert window.save()
    saved = ctx.workspace / "morning.yaml"
    assert window.document.path == saved.resolve()
    assert load_spec(saved).rule is not None
    assert "morning.yaml" in [row.path.name for row in window.sidebar.schedules.rows()]
    assert window.windowTitle() == "Tidemark — morning.yaml"


def test_save_as_cancelled_changes_nothing(window: MainWindow, monkeypatch) -> None:
    before = window.document.path
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: ("", ""))
    assert not window.save_as()
    assert window.document.path == before


def test_save_as_moves_the_document(window: MainWindow, tmp_path: Path, monkeypatch) -> None:
    original = window.document.path
    text = original.read_text(encoding="utf-8")
    window.document.set_value("title", "copy")
    # The original keeps its id: the copy is offered one of its own (see test_schedule_names.py).
    answer(monkeypatch, Button.Save)
    assert window.save_as(tmp_path / "copy.yml")
    assert window.document.path == (tmp_path / "copy.yml").resolve()
    assert original.read_text(encoding="utf-8") == text
    assert window.recent.paths()[0] == (tmp_path / "copy.yml").resolve()


def test_save_is_blocked_while_invalid_and_says_why(window: MainWindow, monkeypatch) -> None:
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _p, _t, text, *a, **k: warned.append(text))
    doc = window.document
    before = doc.path.read_text(encoding="utf-8")
    doc.set_value("timeZone", "EST")
    assert not window.acts.save.isEnabled() and not window.acts.save_as.isEnabled()
    assert "timeZone" in window.acts.save.toolTip() and "abbreviation" in window.acts.save.toolTip()
    assert "abbreviation" in window.statusBar().currentMessage()
    assert not window.save()  # a shortcut that slips through still writes nothing
    assert warned and "timeZone" in warned[0]
    assert doc.path.read_text(encoding="utf-8") == before
    doc.undo_stack.undo()
    assert window.acts.save.isEnabled() and "Save the schedule" in window.acts.save.toolTip()


def test_save_to_an_unwritable_place_says_why(window: MainWindow, tmp_path: Path, monkeypatch) -> None:
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _p, _t, text, *a, **k: warned.append(text))
    answer(monkeypatch, Button.Save)  # yes, give the copy an id of its own
    assert not window.save_as(tmp_path / "no-such-folder" / "x.yaml")
    assert warned and "cannot be saved" in warned[0]
    assert window.document.path.parent != tmp_path / "no-such-folder"
    # Not saved: the id offered for the copy is taken back too.
    assert window.document.value("scheduleId") == "daily-ops-summary" and not window.document.dirty


def test_open_through_the_dialog_and_recent(window: MainWindow, ctx: AppContext, monkeypatch) -> None:
    mel = ctx.workspace / "mel-sync.yaml"
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(mel), ""))
    window.acts.open.trigger()
    assert window.document.path == mel.resolve()
    assert window.windowTitle() == "Tidemark — mel-sync.yaml"
    # The recent menu lists it, newest first, and opens it again.
    window.open_path(ctx.workspace / "invoice-month-end.yaml")
    window._fill_recent()
    names = [a.text() for a in window.recent_menu.actions() if a.text()]
    assert names[:2] == ["invoice-month-end.yaml", "mel-sync.yaml"]
    next(a for a in window.recent_menu.actions() if a.text() == "mel-sync.yaml").trigger()
    assert window.document.path == mel.resolve()


def test_opening_a_damaged_file_says_why_and_keeps_the_current_one(
    window: MainWindow, ctx: AppContext, monkeypatch
) -> None:
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _p, _t, text, *a, **k: warned.append(text))
    bad = ctx.workspace / "bad.yaml"
    bad.write_text("rule: [unclosed\n", encoding="utf-8")
    current = window.document
    assert not window.open_path(bad)
    assert window.document is current
    assert len(warned) == 1 and "bad.yaml" in warned[0] and "YAML" in warned[0]
    assert warned[0] in window.statusBar().currentMessage()


def test_invalid_spec_opens_to_be_fixed(window: MainWindow, ctx: AppContext) -> None:
    wrong = ctx.workspace / "wrong.yaml"
    wrong.write_text(
        (ctx.workspace / "mel-sync.yaml").read_text(encoding="utf-8").replace("Australia/Melbourne", "AEST"),
        encoding="utf-8",
    )
    assert window.open_path(wrong)
    assert not window.document.valid and not window.acts.save.isEnabled()


def test_recent_files_keep_the_last_eight(tmp_path: Path) -> None:
    recent = RecentFiles(QSettings(str(tmp_path / "r.ini"), QSettings.Format.IniFormat))
    files = [tmp_path / f"f{i}.yaml" for i in range(10)]
    for f in files:
        f.write_text("x: 1\n", encoding="utf-8")
        recent.add(f)
    recent.add(files[5])
    assert len(recent.paths()) == LIMIT
    assert recent.paths()[0] == files[5].resolve() and recent.paths()[1] == files[9].resolve()
    files[9].unlink()
    assert files[9].resolve() not in recent.existing()
    recent.clear()
    assert recent.paths() == []


@pytest.mark.parametrize(
    ("reply", "goes_on", "saved"),
    [(Button.Save, True, True), (Button.Discard, True, False), (Button.Cancel, False, False)],
    ids=["save", "discard", "cancel"],
)
def test_unsaved_changes_guard_on_new(window: MainWindow, monkeypatch, reply, goes_on: bool, saved: bool) -> None:
    asked = answer(monkeypatch, reply)
    doc = window.document
    path = doc.path
    doc.set_value("title", "guarded")
    assert window.new_document() is goes_on
    assert len(asked) == 1 and path.name in asked[0]
    assert ("guarded" in path.read_text(encoding="utf-8")) is saved
    assert (window.document is doc) is not goes_on


def test_guard_on_close(window: MainWindow, monkeypatch) -> None:
    window.show()
    asked = answer(monkeypatch, Button.Cancel)
    window.document.set_value("title", "not yet")
    assert not window.close()
    assert window.isVisible() and len(asked) == 1
    answer(monkeypatch, Button.Discard)
    assert window.close()


def test_clean_document_closes_without_asking(window: MainWindow, monkeypatch) -> None:
    asked = answer(monkeypatch, Button.Cancel)
    window.show()
    assert window.close() and asked == []


def test_autosave_after_idle_and_recovery_next_start(window: MainWindow, ctx: AppContext, qtbot, monkeypatch) -> None:
    saver: Autosaver = window.autosaver
    saver.set_idle_ms(50)
    window.document.set_value("title", "typed but not saved")
    assert not saver.text_file.exists()
    qtbot.waitUntil(saver.text_file.exists, timeout=10_000)
    assert "typed but not saved" in saver.text_file.read_text(encoding="utf-8")
    assert saver.text_file.parent == Path(ctx.settings.fileName()).parent / "autosave"
    original = window.document.path
    # The app dies here, without saving; the next start offers the changes back.
    second = MainWindow(ctx)
    qtbot.addWidget(second)
    asked = answer(monkeypatch, Button.Yes)
    assert second.offer_recovery()
    assert len(asked) == 1 and original.name in asked[0]
    assert second.document.path == original and second.document.dirty
    assert second.document.value("title") == "typed but not saved"
    assert "●" in second.windowTitle()
    # One undo step goes back to the file as saved.
    second.acts.undo.trigger()
    assert second.document.value("title") == "Operating summary" and not second.document.dirty
    second.designer.shutdown()


def test_recovery_declined_forgets_it(window: MainWindow, monkeypatch) -> None:
    saver = window.autosaver
    saver.text_file.parent.mkdir(parents=True, exist_ok=True)
    saver.text_file.write_text("scheduleId: lost\n", encoding="utf-8")
    answer(monkeypatch, Button.No)
    assert not window.offer_recovery()
    assert saver.pending() is None


def test_saving_clears_the_autosave(window: MainWindow, qtbot) -> None:
    window.document.set_value("title", "x")
    window.autosaver.write_now()
    assert window.autosaver.pending() is not None
    assert window.save()
    assert window.autosaver.pending() is None


def test_first_start_copies_the_demo_schedules(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    copied = seed_workspace(target)
    assert {p.name for p in copied} == {e.path.name for e in templates()}
    assert seed_workspace(target) == []  # never twice, never over a person's files
    assert load_text((target / "mel-sync.yaml").read_text(encoding="utf-8"))["scheduleId"] == "mel-sync"


def test_workspace_entries_are_read_again_only_when_the_file_changes(tmp_path: Path) -> None:
    from scheduler_gui.workspace.folder import read_entry

    spec = tmp_path / "a.yaml"
    spec.write_text("scheduleId: first\nkind: calendar\n", encoding="utf-8")
    first = read_entry(spec)
    assert first.schedule_id == "first" and read_entry(spec) is first
    spec.write_text("scheduleId: second-id\nkind: interval\n", encoding="utf-8")
    again = read_entry(spec)
    assert again.schedule_id == "second-id" and again.kind == "interval"
    spec.unlink()
    assert read_entry(spec).problem is not None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(opened=st.lists(st.integers(min_value=0, max_value=12), max_size=30))
def test_recent_files_property(tmp_path: Path, opened: list[int]) -> None:
    store = tmp_path / f"recent-{len(opened)}-{hash(tuple(opened)) & 0xFFFF}.ini"
    store.unlink(missing_ok=True)
    recent = RecentFiles(QSettings(str(store), QSettings.Format.IniFormat))
    for n in opened:
        recent.add(tmp_path / f"f{n}.yaml")
    paths = recent.paths()
    # Newest first, each file once, at most LIMIT, and exactly the last distinct ones opened.
    expected: list[Path] = []
    for n in reversed(opened):
        p = (tmp_path / f"f{n}.yaml").resolve()
        if p not in expected:
            expected.append(p)
    assert paths == expected[:LIMIT]


# --- saving keeps what the person wrote ---------------------------------------------------------


def find(root: QWidget, name: str) -> QWidget:
    """The widget under ``root`` with this accessible name."""
    return next(w for w in root.findChildren(QWidget) if w.accessibleName() == name)


def changed(before: str, after: str) -> list[tuple[str, str]]:
    """The lines taken out and put in, paired in order (a one-field edit is one pair)."""
    lines = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    out = [x[2:] for x in lines if x.startswith("- ")]
    into = [x[2:] for x in lines if x.startswith("+ ")]
    assert len(out) == len(into), (out, into)
    return list(zip(out, into, strict=True))


def open_commented(window: MainWindow, ctx: AppContext, qtbot) -> Path:
    # The person's own copy of the demo schedule, the only file of the workspace with its id.
    (ctx.workspace / "daily-ops-summary.yaml").unlink()
    path = ctx.workspace / "commented.yaml"
    path.write_text(COMMENTED, encoding="utf-8")
    window.resize(1280, 800)
    window.show()
    assert window.open_path(path)
    qtbot.waitExposed(window)
    return path


def click_save(window: MainWindow, qtbot) -> None:
    """Click Save in the tool bar."""
    button = next(w for w in window.findChildren(QToolButton) if w.defaultAction() is window.acts.save)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_a_policy_clicked_and_saved_changes_one_line(window: MainWindow, ctx: AppContext, qtbot) -> None:
    path = open_commented(window, ctx, qtbot)
    radio = find(window.designer, "Missing time (clocks jump forward): Next valid time")
    qtbot.mouseClick(radio, Qt.MouseButton.LeftButton, pos=QPoint(8, radio.height() // 2))
    assert window.document.value("gapPolicy") == "SHIFT_FORWARD"
    click_save(window, qtbot)
    assert not window.document.dirty
    # One line: the new value, its comment still there at the same column.
    assert changed(COMMENTED, path.read_text(encoding="utf-8")) == [
        ("gapPolicy: SKIP                 # no run at 02:30 on the spring day",
         "gapPolicy: SHIFT_FORWARD        # no run at 02:30 on the spring day")
    ]  # fmt: skip


def test_a_time_typed_in_at_changes_the_rule_line_only(window: MainWindow, ctx: AppContext, qtbot) -> None:
    path = open_commented(window, ctx, qtbot)
    times = find(window.designer, "At")
    times.setFocus()
    times.selectAll()
    QTest.keyClicks(times, "03:45")
    QTest.keyClick(times, Qt.Key.Key_Return)
    click_save(window, qtbot)
    assert changed(COMMENTED, path.read_text(encoding="utf-8")) == [
        ("rule: FREQ=DAILY;BYHOUR=2;BYMINUTE=30   # 02:30 every day",
         "rule: FREQ=DAILY;BYHOUR=3;BYMINUTE=45   # 02:30 every day")
    ]  # fmt: skip
    # Saving again with nothing changed writes the same text.
    again = path.read_text(encoding="utf-8")
    window.save()
    assert path.read_text(encoding="utf-8") == again


def test_a_new_schedule_is_saved_in_block_style_in_contract_order(
    window: MainWindow, ctx: AppContext, monkeypatch
) -> None:
    # File ▸ New has no task yet: the old writer put such a schedule on one `{schema: …}` line.
    window.acts.new.trigger()
    keep_zones(monkeypatch)
    target = ctx.workspace / "morning.yaml"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), "Schedules (*.yaml *.yml)"))
    window.acts.save.trigger()
    text = target.read_text(encoding="utf-8")
    assert "{" not in text and "task" not in text
    keys = [line.split(":")[0] for line in text.splitlines()]
    assert keys == [k for k in KEY_ORDER if k in window.document.data]
    assert load_text(text) == window.document.data


def test_autosave_and_recovery_keep_the_comments(window: MainWindow, ctx: AppContext, qtbot, monkeypatch) -> None:
    path = open_commented(window, ctx, qtbot)
    radio = find(window.designer, "Repeated time (clocks fall back): Both")
    qtbot.mouseClick(radio, Qt.MouseButton.LeftButton, pos=QPoint(8, radio.height() // 2))
    window.autosaver.write_now()
    autosaved = window.autosaver.text_file.read_text(encoding="utf-8")
    assert changed(COMMENTED, autosaved) == [("foldPolicy: FIRST_ONLY", "foldPolicy: BOTH")]
    # The app dies; the next start offers the change back, and saving it keeps the file as it was written.
    second = MainWindow(ctx)
    qtbot.addWidget(second)
    answer(monkeypatch, Button.Yes)
    assert second.offer_recovery() and second.document.value("foldPolicy") == "BOTH"
    assert second.save()
    assert path.read_text(encoding="utf-8") == autosaved
    second.designer.shutdown()


def test_a_json_file_stays_json_in_its_order(window: MainWindow, ctx: AppContext) -> None:
    data = load_text(COMMENTED)
    data = {"title": data.pop("title"), **data}  # the person's own order
    (ctx.workspace / "daily-ops-summary.yaml").unlink()  # the only file with this id
    path = ctx.workspace / "summary.json"
    text = json.dumps(data, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    assert window.open_path(path)
    window.document.set_value("revision", 2)
    assert window.save()
    saved = path.read_text(encoding="utf-8")
    assert json.loads(saved) == {**data, "revision": 2} and list(json.loads(saved)) == list(data)
    assert changed(text, saved) == [('  "revision": 1,', '  "revision": 2,')]


def test_a_read_only_file_says_so_once_and_stays(window: MainWindow, ctx: AppContext, qtbot, monkeypatch) -> None:
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _p, _t, text, *a, **k: warned.append(text))
    path = open_commented(window, ctx, qtbot)
    path.chmod(0o444)
    try:
        window.document.set_value("title", "mine")
        click_save(window, qtbot)
        assert len(warned) == 1 and "read-only" in warned[0] and str(path) in warned[0]
        assert path.read_text(encoding="utf-8") == COMMENTED and window.document.dirty
        assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []
    finally:
        path.chmod(0o644)


def open_with_alerts(window: MainWindow, ctx: AppContext, qtbot, alerts: str) -> tuple[Path, str]:
    """The commented spec with ``alerts`` (YAML text) before its task, alone in the workspace and open
    in the window at 1280x800; returns its path and its text."""
    text = COMMENTED.replace("task:\n", alerts + "task:\n")
    (ctx.workspace / "daily-ops-summary.yaml").unlink()
    path = ctx.workspace / "alerting.yaml"
    path.write_text(text, encoding="utf-8")
    window.resize(1280, 800)
    window.show()
    assert window.open_path(path)
    qtbot.waitExposed(window)
    return path, text


def test_a_files_alerts_are_kept_when_a_policy_is_saved(window: MainWindow, ctx: AppContext, qtbot) -> None:
    alerts = "alerts:   # who is told\n  - to: mailto:ops@example.com\n    on: [FAILED]\n  - to: {secret: TEAM_HOOK}\n"
    path, text = open_with_alerts(window, ctx, qtbot, alerts)
    radio = find(window.designer, "Missing time (clocks jump forward): Next valid time")
    qtbot.mouseClick(radio, Qt.MouseButton.LeftButton, pos=QPoint(8, radio.height() // 2))
    assert window.document.value("gapPolicy") == "SHIFT_FORWARD", window.statusBar().currentMessage()
    click_save(window, qtbot)
    assert not window.document.dirty, window.statusBar().currentMessage()
    saved = path.read_text(encoding="utf-8")
    assert changed(text, saved) == [
        ("gapPolicy: SKIP                 # no run at 02:30 on the spring day",
         "gapPolicy: SHIFT_FORWARD        # no run at 02:30 on the spring day")
    ]  # fmt: skip
    assert load_text(saved)["alerts"] == [
        {"to": "mailto:ops@example.com", "on": ["FAILED"]},
        {"to": {"secret": "TEAM_HOOK"}},
    ]


def test_a_route_typed_in_the_window_is_saved_beside_the_files_own(window: MainWindow, ctx: AppContext, qtbot) -> None:
    alerts = "alerts:   # who is told\n  - to: mailto:ops@example.com  # the on-call box\n    on: [FAILED]\n"
    path, _text = open_with_alerts(window, ctx, qtbot, alerts)
    window.activateWindow()  # the window's Ctrl+Z reaches it
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    qtbot.mouseClick(find(window.designer, "When things go wrong — misfire · overlap · retry · jitter · alerts"),
                     Qt.MouseButton.LeftButton)  # fmt: skip
    qtbot.mouseClick(find(window.designer, "Alerts: add a route"), Qt.MouseButton.LeftButton)
    qtbot.keyClicks(find(window.designer, "Alert route 2"), "https://hooks.example.com/tm")
    missed = find(window.designer, "Alert route 2: Missed")
    qtbot.mouseClick(missed, Qt.MouseButton.LeftButton, pos=QPoint(20, missed.height() // 2))
    click_save(window, qtbot)
    assert not window.document.dirty, window.statusBar().currentMessage()
    saved = path.read_text(encoding="utf-8")
    assert "alerts:   # who is told\n  - to: mailto:ops@example.com  # the on-call box\n    on: [FAILED]\n" in saved
    assert load_text(saved)["alerts"] == [
        {"to": "mailto:ops@example.com", "on": ["FAILED"]},
        {"to": "https://hooks.example.com/tm", "on": ["FAILED", "UNKNOWN_EFFECT"]},
    ]
    window.sidebar.schedule_view.setFocus()  # Ctrl+Z from outside a text field: the window's undo
    QTest.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.document.value("alerts")[1] == {"to": "https://hooks.example.com/tm"}
    QTest.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.document.value("alerts") == [{"to": "mailto:ops@example.com", "on": ["FAILED"]}]
    assert find(window.designer, "Alert route 1").text() == "mailto:ops@example.com"  # type: ignore[attr-defined]
