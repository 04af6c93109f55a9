"""Closing while tasks run (scheduler_gui.monitor.close_guard): each answer's
accept path, the offer to install the engine service, and systemd's absence."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core.desktop.service import Ran, ServiceResult, ServiceSetup, install_service
from scheduler_gui.monitor.close_guard import CloseGuardDialog, ask_on_close


def host(tasks: int = 2) -> Any:
    return SimpleNamespace(tasks_running=tasks, ctx=SimpleNamespace(ledger_url="sqlite:////srv/tidemark/ledger.db"))


class Installer:
    def __init__(self, result: ServiceResult) -> None:
        self.result = result
        self.asked: list[str | None] = []
        self.options: list[list[str]] = []

    def __call__(self, db: str | None, options: Sequence[str] = ()) -> ServiceResult:
        self.asked.append(db)
        self.options.append(list(options))
        return self.result


OK = ServiceResult(True, ("installed",), Path("/u/tidemark-engine.service"), written=True)


def test_nothing_running_closes_without_asking() -> None:
    assert ask_on_close(host(0)) == "stop"


@pytest.mark.parametrize("mode", ["wait", "stop"])
def test_wait_and_stop_answer_directly(qtbot: Any, mode: str) -> None:
    installer = Installer(OK)
    dialog = CloseGuardDialog(host(), installer=installer, installed=lambda: False)
    qtbot.addWidget(dialog)
    getattr(dialog, f"{mode}_button").click()
    assert dialog.choice == mode and installer.asked == []


def test_keep_running_installs_the_service_when_missing(qtbot: Any, tmp_path: Path) -> None:
    installer = Installer(OK)
    dialog = CloseGuardDialog(host(1), installer=installer, installed=lambda: False)
    qtbot.addWidget(dialog)
    assert dialog.install_box.isChecked() and not dialog.install_box.isHidden()
    dialog.grab().save(str(tmp_path / "close_guard.png"))
    dialog.detach_button.click()
    assert dialog.choice == "detach"
    assert installer.asked == ["sqlite:////srv/tidemark/ledger.db"]


def test_keep_running_with_the_service_installed_asks_nothing_more(qtbot: Any) -> None:
    installer = Installer(OK)
    dialog = CloseGuardDialog(host(), installer=installer, installed=lambda: True)
    qtbot.addWidget(dialog)
    assert dialog.install_box.isHidden()
    dialog.choose("detach")
    assert dialog.choice == "detach" and installer.asked == []


def test_without_systemd_it_says_so_and_offers_the_command(qtbot: Any, tmp_path: Path) -> None:
    setup = ServiceSetup(
        unit_dir=tmp_path, schedctl=("/opt/t/schedctl",), runner=lambda argv: Ran(0), has_systemctl=False
    )
    installer = Installer(install_service("/srv/t.db", setup))
    dialog = CloseGuardDialog(host(), installer=installer, installed=lambda: False)
    qtbot.addWidget(dialog)
    dialog.choose("detach")
    assert dialog.choice is None, "the window stays open: the person picks another answer"
    assert dialog.problem.text() == "systemd is not available on this machine (no systemctl); nothing was installed"
    assert (
        dialog.instead.text()
        == "SCHEDULER_DB_URL=/srv/t.db nohup /opt/t/schedctl engine run >>tidemark-engine.log 2>&1 &"
    )
    assert not dialog.instead.isHidden()
    dialog.install_box.setChecked(False)  # keep running headless anyway: the tasks finish, nothing takes over
    dialog.choose("detach")
    assert dialog.choice == "detach"


def test_cancel_keeps_the_window(qtbot: Any) -> None:
    dialog = CloseGuardDialog(host(), installer=Installer(OK), installed=lambda: False)
    qtbot.addWidget(dialog)
    dialog.cancel_button.click()
    assert dialog.choice is None


def test_the_service_taking_over_keeps_the_window_engines_labels_and_trust(qtbot: Any, tmp_path: Path) -> None:
    """Engine Settings' labels and trusted users go into the service's command, so the engine
    that takes over runs what the window's engine ran (docs/ledger.md, "Teams")."""
    from PySide6.QtCore import QSettings

    from scheduler_gui.monitor.engine_settings import save_settings

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    save_settings(settings, "gpu=yes", "alice, bob")
    guarded = host(1)
    guarded.ctx.settings = settings
    installer = Installer(OK)
    dialog = CloseGuardDialog(guarded, installer=installer, installed=lambda: False)
    qtbot.addWidget(dialog)
    dialog.install_box.setChecked(True)
    qtbot.mouseClick(dialog.detach_button, Qt.MouseButton.LeftButton)
    assert dialog.choice == "detach"
    assert installer.options == [["--label", "gpu=yes", "--trust", "alice", "--trust", "bob"]]


def test_notifications_turned_off_stay_off_in_the_service_taking_over(qtbot: Any, tmp_path: Path) -> None:
    """A person who turned the tray's notifications off in Engine Settings is not notified by
    the service that takes over either."""
    from PySide6.QtCore import QSettings

    from scheduler_gui.monitor.tray import NOTIFY_KEY

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    settings.setValue(NOTIFY_KEY, False)
    guarded = host(1)
    guarded.ctx.settings = settings
    installer = Installer(OK)
    dialog = CloseGuardDialog(guarded, installer=installer, installed=lambda: False)
    qtbot.addWidget(dialog)
    dialog.install_box.setChecked(True)
    qtbot.mouseClick(dialog.detach_button, Qt.MouseButton.LeftButton)
    assert installer.options == [["--no-notify"]]
