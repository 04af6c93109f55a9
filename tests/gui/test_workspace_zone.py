"""The workspace's default zone, as a person meets it: the first start's prompt (keep or choose
another), a broken settings file, new schedules in the workspace's zone, the question on a new
schedule's first save (once), and the status bar when this machine is elsewhere. The machine's
zone is the test's (``ctx.machine_zone``), never the host's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from a11y_support import a11y_problems
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget
from shell_fixtures import when_modal, window_fixture  # noqa: F401

from core.spec.files import load_spec
from core.spec.workspace_settings import SETTINGS_NAME, choose_zone, read_settings
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.workspace.zone import ZoneQuestion

MACHINE = "Europe/Berlin"
SHOTS = Path("/tmp/tidemark-zone-shots")


@pytest.fixture
def ctx(ctx: AppContext) -> AppContext:
    """The test context on a machine set to Berlin."""
    ctx.machine_zone = lambda: MACHINE
    return ctx


def named(root: QWidget, name: str) -> Any:
    """The visible widget under ``root`` a screen reader calls ``name``."""
    found = [w for w in root.findChildren(QWidget) if w.accessibleName() == name and w.isVisibleTo(root)]
    assert found, f"nothing visible is called {name!r}"
    return found[0]


def click(root: QWidget, name: str) -> None:
    QTest.mouseClick(named(root, name), Qt.MouseButton.LeftButton)


def settings_file(ctx: AppContext) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ctx.workspace / SETTINGS_NAME).read_text(encoding="utf-8"))
    return data


def shot(widget: QWidget, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    assert widget.grab().save(str(SHOTS / f"{name}.png"))


def answer_zone_question(monkeypatch: pytest.MonkeyPatch, button: str) -> list[str]:
    """Let the zone question show, and click ``button`` on it as a person would; returns the texts asked."""
    monkeypatch.setattr(ZoneQuestion, "kept", ZONE_QUESTION_KEPT)
    asked: list[str] = []

    def press(box: ZoneQuestion) -> None:
        asked.append(box.text())
        click(box, button)

    when_modal(ZoneQuestion, press)
    return asked


ZONE_QUESTION_KEPT = ZoneQuestion.kept


def save_new_as(monkeypatch: pytest.MonkeyPatch, window: MainWindow, path: Path) -> bool:
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), "Schedules (*.yaml *.yml)"))
    return window.save()


# --- the first start ------------------------------------------------------------------------


def test_first_start_asks_and_keep_writes_the_file(window: MainWindow, ctx: AppContext, qtbot: Any) -> None:
    window.show()
    banner = window.zone_banner
    assert banner.isVisible()
    assert named(banner, "New schedules will run in Europe/Berlin (this machine's zone). Keep it?")
    assert not (ctx.workspace / SETTINGS_NAME).exists()  # unconfirmed until the person says so
    window.resize(1280, 800)
    shot(window, "first-start")
    shot(banner, "first-start-banner")
    click(banner, "Keep the zone")
    assert not banner.isVisible()
    assert settings_file(ctx) == {
        "schema": "workspaceSettings.v1",
        "defaultZone": "Europe/Berlin",
        "defaultZoneConfirmed": True,
    }
    assert window.zone_status.text() == "Zone Europe/Berlin"
    # The next start does not ask again.
    again = MainWindow(ctx)
    qtbot.addWidget(again)
    assert not again.zone_banner.isVisibleTo(again)


def test_choose_another_zone_with_the_picker(window: MainWindow, ctx: AppContext) -> None:
    window.show()
    banner = window.zone_banner
    click(banner, "Choose another zone")
    picker = named(banner, "Workspace zone")
    picker.setFocus()
    picker.selectAll()
    QTest.keyClicks(picker, "Asia/Tokyo")
    QTest.keyClick(picker, Qt.Key.Key_Return)
    shot(banner, "choose-another")
    click(banner, "Use Asia/Tokyo")
    assert not banner.isVisible()
    assert settings_file(ctx)["defaultZone"] == "Asia/Tokyo"
    # A new schedule starts there; the machine is elsewhere, and the status bar says so.
    window.acts.new.trigger()
    assert window.document.value("timeZone") == "Asia/Tokyo"
    assert window.zone_status.text() == "⚠ This machine is in Europe/Berlin; the workspace's zone is Asia/Tokyo"


def test_the_prompt_speaks_to_a_screen_reader(window: MainWindow) -> None:
    window.show()
    banner = window.zone_banner
    assert not a11y_problems(banner)
    click(banner, "Choose another zone")
    assert not a11y_problems(banner)
    assert not a11y_problems(window.zone_status)


def test_cancel_choosing_keeps_asking(window: MainWindow, ctx: AppContext) -> None:
    window.show()
    banner = window.zone_banner
    click(banner, "Choose another zone")
    click(banner, "Cancel")
    assert banner.isVisible() and named(banner, "Keep the zone")
    assert not (ctx.workspace / SETTINGS_NAME).exists()


def test_the_status_bar_changes_a_confirmed_zone(window: MainWindow, ctx: AppContext) -> None:
    window.show()
    click(window.zone_banner, "Keep the zone")
    QTest.mouseClick(window.zone_status, Qt.MouseButton.LeftButton)
    assert window.zone_banner.isVisible()
    picker = named(window.zone_banner, "Workspace zone")
    picker.setFocus()
    picker.selectAll()
    QTest.keyClicks(picker, "Europe/Lisbon")
    QTest.keyClick(picker, Qt.Key.Key_Return)
    click(window.zone_banner, "Use Europe/Lisbon")
    assert read_settings(ctx.workspace, MACHINE).zone == "Europe/Lisbon"


def test_a_broken_settings_file_says_so_and_keep_keeps_it_aside(
    ctx: AppContext, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = '{"defaultZone": "Asia/Tokyo",\n'
    (ctx.workspace / SETTINGS_NAME).write_text(broken, encoding="utf-8")
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    banner = window.zone_banner
    problem = named(banner, "Workspace settings problem").text()
    assert problem.startswith(f"{SETTINGS_NAME}: not JSON (line 2, column 1)")
    assert f"kept as {SETTINGS_NAME}.unreadable" in problem
    shot(banner, "broken-settings")
    click(banner, "Keep the zone")
    assert (ctx.workspace / f"{SETTINGS_NAME}.unreadable").read_text(encoding="utf-8") == broken
    assert settings_file(ctx)["defaultZone"] == MACHINE


def test_an_unconfirmed_zone_in_the_file_is_proposed_as_the_workspaces(ctx: AppContext, qtbot: Any) -> None:
    (ctx.workspace / SETTINGS_NAME).write_text('{"defaultZone": "Asia/Tokyo", "defaultZoneConfirmed": false}')
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    banner = window.zone_banner
    assert named(banner, "New schedules will run in Asia/Tokyo (the workspace's zone, not yet confirmed). Keep it?")
    click(banner, "Keep the zone")
    assert settings_file(ctx)["defaultZoneConfirmed"] is True and settings_file(ctx)["defaultZone"] == "Asia/Tokyo"


def test_settings_that_cannot_be_written_say_why_and_keep_asking(ctx: AppContext, qtbot: Any) -> None:
    (ctx.workspace / SETTINGS_NAME).mkdir()  # a folder where the file should be
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.show()
    banner = window.zone_banner
    assert "cannot be read" in named(banner, "Workspace settings problem").text()
    click(banner, "Keep the zone")
    assert "cannot be written" in named(banner, "Workspace settings problem").text()
    assert banner.isVisible() and not window.workspace_zone.confirmed


# --- new schedules and their first save --------------------------------------------------------


def test_new_schedule_first_save_asks_once_and_keep_saves(
    window: MainWindow, ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    choose_zone(ctx.workspace, "America/Chicago", MACHINE)
    window.refresh()
    window.acts.new.trigger()
    doc = window.document
    assert doc.value("timeZone") == "America/Chicago"
    asked = answer_zone_question(monkeypatch, "Keep")
    assert save_new_as(monkeypatch, window, ctx.workspace / "morning.yaml")
    assert asked == ["Runs in America/Chicago (the workspace's zone). Keep it?"]
    assert load_spec(ctx.workspace / "morning.yaml").time_zone == "America/Chicago"
    # Once per schedule: the next save does not ask.
    monkeypatch.setattr(ZoneQuestion, "kept", _never)
    doc.set_value("title", "Morning")
    assert window.save()


def test_change_focuses_the_zone_picker_and_does_not_save(
    window: MainWindow, ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.show()
    window.acts.new.trigger()
    target = ctx.workspace / "morning.yaml"
    asked = answer_zone_question(monkeypatch, "Change")
    assert not save_new_as(monkeypatch, window, target)
    assert asked == ["Runs in Europe/Berlin (the workspace's zone). Keep it?"]
    assert not target.exists()
    picker = window.designer.when_form.zone
    assert window.focusWidget() is picker.edit  # the window's focus, once the question has gone
    assert "Not saved" in window.statusBar().currentMessage()
    # The person types another zone; the save that follows does not ask again.
    QTest.keyClicks(picker.edit, "Europe/Madrid")
    QTest.keyClick(picker.edit, Qt.Key.Key_Return)
    assert window.document.value("timeZone") == "Europe/Madrid"
    monkeypatch.setattr(ZoneQuestion, "kept", _never)
    assert save_new_as(monkeypatch, window, target)
    assert load_spec(target).time_zone == "Europe/Madrid"


def test_a_zone_changed_and_put_back_counts_as_chosen(
    window: MainWindow, ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.acts.new.trigger()
    picker = window.designer.when_form.zone
    picker.choose("Asia/Tokyo")
    picker.choose(MACHINE)
    monkeypatch.setattr(ZoneQuestion, "kept", _never)
    assert save_new_as(monkeypatch, window, ctx.workspace / "morning.yaml")


def test_an_opened_file_does_not_ask(window: MainWindow, ctx: AppContext, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its zone is the workspace's, but a person wrote it in the file.
    path = ctx.workspace / "berlin.yaml"
    path.write_text(
        "schema: scheduleSpec.v1\nscheduleId: berlin\nrevision: 1\ntimeZone: Europe/Berlin\nkind: calendar\n"
        "rule: FREQ=DAILY;BYHOUR=9;BYMINUTE=0\nstart: '2027-03-01T09:00:00'\n"
        "gapPolicy: SHIFT_FORWARD\nfoldPolicy: FIRST_ONLY\n",
        encoding="utf-8",
    )
    assert window.open_path(path)
    window.document.set_value("title", "Berlin")
    monkeypatch.setattr(ZoneQuestion, "kept", _never)
    assert window.save()


# --- the machine elsewhere ---------------------------------------------------------------------


def test_the_status_bar_says_when_this_machine_is_elsewhere(ctx: AppContext, qtbot: Any) -> None:
    choose_zone(ctx.workspace, "Europe/Berlin", MACHINE)
    ctx.machine_zone = lambda: "America/New_York"
    window = MainWindow(ctx)
    qtbot.addWidget(window)
    window.open_initial()
    window.resize(1280, 800)
    window.show()
    assert not window.zone_banner.isVisible()  # confirmed: nothing to ask
    said = "This machine is in America/New_York; the workspace's zone is Europe/Berlin"
    assert window.zone_status.text() == f"⚠ {said}" and window.zone_status.accessibleName() == said
    shot(window.statusBar(), "status-bar-elsewhere")
    # New schedules still start in the workspace's zone, not the machine's.
    window.document.undo_stack.setClean()
    window.acts.new.trigger()
    assert window.document.value("timeZone") == "Europe/Berlin"
    window.document.undo_stack.setClean()
    # Back home (F5 reads the machine's zone again): the status bar only names the zone.
    ctx.machine_zone = lambda: "Europe/Berlin"
    window.refresh()
    assert window.zone_status.text() == "Zone Europe/Berlin"


def _never(box: QMessageBox) -> bool:
    raise AssertionError(f"asked again: {box.text()}")
