"""The screenshot command: every view renders from real data to a PNG that is
not blank. One window per view, on one demo ledger simulated once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QDialog

from core.clock import FixedClock
from core.ledger.alert_queries import load_alert_settings
from scheduler_gui.app import VIEWS
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.monitor.demo_ledger import populate_demo_ledger
from scheduler_gui.screenshot import (
    ALERTS_SPEC,
    DEFAULT_ROUTES,
    SCREENSHOT_NOW,
    announce_team,
    render,
    seed_default_routes,
)
from scheduler_gui.workspace.folder import seed_workspace

MIN_BYTES = 20_000


def distinct_colours(path: Path) -> int:
    image = QImage(str(path))
    assert not image.isNull()
    step = 7
    return len({image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)})


@pytest.fixture(scope="module")
def demo_ctx(tmp_path_factory: pytest.TempPathFactory, qapp) -> Iterator[AppContext]:
    root = tmp_path_factory.mktemp("shots")
    seed_workspace(root / "workspace")
    ctx = AppContext(
        clock=FixedClock(SCREENSHOT_NOW),
        workspace=root / "workspace",
        ledger_url=f"sqlite:///{root / 'ledger.db'}",
        settings=QSettings(str(root / "settings.ini"), QSettings.Format.IniFormat),
    )
    populate_demo_ledger(ctx)
    yield ctx
    ctx.close()


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_renders_a_real_picture(view: str, demo_ctx: AppContext, tmp_path: Path, qtbot) -> None:
    if view == "engines":
        announce_team(demo_ctx)  # as --screenshot does for this view
    window = MainWindow(demo_ctx)
    window.open_initial(demo_ctx.workspace / "daily-ops-summary.yaml")
    window.start_monitor()
    target = tmp_path / f"{view}.png"
    try:
        assert render(window, view, (1280, 800), target)
        expected = {"monitor": "occurrences", "detail": "occurrences"}.get(view, view)
        if view in ("preview", "timeline", "whatif"):
            assert window.current_view() == "designer" and window.designer.current_tab() == view
        else:
            assert window.current_view() == expected
        # Drawn from the demo ledger, not from an empty or still-loading view.
        if view == "monitor":
            assert window.page("occurrences").view.model.rowCount() > 100
        if view == "detail":
            detail = window.page("occurrences").detail
            assert detail.occurrence_id is not None and "unknown effect" in detail.text()
        if view == "attention":
            assert window.page("attention").count >= 1
        if view == "engines":  # three engines, each with the line of what it runs and refuses
            page = window.page("engines")
            names = [page.model.index(row, 0).data() for row in range(0, page.model.rowCount(), 2)]
            assert len(names) == 3 and names[-1] == "laptop-bob · window"  # the stale one last
            assert "build-1 · schedctl" in names
    finally:
        window.hub.shutdown("stop")
        window.designer.shutdown()
        window.close()
        window.deleteLater()
    assert target.stat().st_size >= MIN_BYTES
    assert distinct_colours(target) >= 8
    assert QImage(str(target)).size().width() == 1280


def test_the_wake_and_alerts_scene_shows_both(demo_ctx: AppContext, tmp_path: Path, qtbot) -> None:
    window = MainWindow(demo_ctx)
    window.open_initial(ALERTS_SPEC)
    window.start_monitor()
    target = tmp_path / "wake-alerts.png"
    try:
        assert render(window, "wake-alerts", (1280, 1400), target)
        recovery = window.designer.recovery
        area = window.designer.settings_area
        for part in (recovery.wake, recovery.alerts.route_rows[-1]):  # on the picture, within the scrolled area
            top = part.mapTo(area.viewport(), part.rect().topLeft()).y()
            assert top >= 0 and top + part.height() <= area.viewport().height()
        assert recovery.wake.isChecked() and [r.row()[0] for r in recovery.alerts.route_rows] == [
            "mailto:ops@example.com",
            "secret:TEAM_CHAT_HOOK",
        ]
    finally:
        window.hub.shutdown("stop")
        window.designer.shutdown()
        window.close()
        window.deleteLater()
    assert QImage(str(target)).size().height() == 1400 and distinct_colours(target) >= 8


def test_the_alert_settings_scene_is_the_dialog_with_its_routes(demo_ctx: AppContext, tmp_path: Path, qtbot) -> None:
    seed_default_routes(demo_ctx)
    window = MainWindow(demo_ctx)
    window.open_initial(demo_ctx.workspace / "daily-ops-summary.yaml")
    target = tmp_path / "alert-settings.png"
    try:
        assert render(window, "alert-settings", (1280, 800), target)
        shown = [d for d in window.findChildren(QDialog) if d.accessibleName() == "Engine Settings" and d.isVisible()]
        assert shown == []  # closed once drawn
    finally:
        window.hub.shutdown("stop")
        window.designer.shutdown()
        window.close()
        window.deleteLater()
    image = QImage(str(target))
    assert 400 < image.width() < 1280 and image.height() > 600 and distinct_colours(target) >= 8
    assert load_alert_settings(demo_ctx.ledger).routes == DEFAULT_ROUTES  # what the dialog read and drew


def test_the_command_writes_a_png(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    target = tmp_path / "designer.png"
    done = subprocess.run(
        [sys.executable, "-m", "scheduler_gui.app", "--screenshot", str(target), "--size", "1024x700"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert QImage(str(target)).size().width() == 1024
    assert target.stat().st_size >= MIN_BYTES and distinct_colours(target) >= 8
