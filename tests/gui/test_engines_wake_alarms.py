"""The Engines view lists the wake alarms armed on this computer, as the backend lists them
(a fake ``systemctl`` on PATH here), or says why this computer cannot be woken."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.desktop.service_command import timed_runner
from core.desktop.wake.alarms import CannotWake, WakeBackend
from core.desktop.wake.systemd_timer import SystemdTimers
from scheduler_gui.context import AppContext
from scheduler_gui.monitor import engines_view
from scheduler_gui.monitor.engines_view import EnginesView
from tests.fake_systemd import install


def _shown(ctx: AppContext, qtbot, backend: WakeBackend, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(engines_view, "host_backend", lambda: backend)
    view = EnginesView(ctx)
    qtbot.addWidget(view)
    view.show()
    label = view.wake_alarms
    assert label.accessibleName() == "Wake alarms"
    qtbot.waitUntil(lambda: not label.text().endswith("reading…"), timeout=20_000)
    return label.text()


def test_the_armed_alarms_are_listed(ctx: AppContext, qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = install(tmp_path / "fake")
    monkeypatch.setenv("PATH", f"{tools.folder}:/usr/bin:/bin")
    timers = SystemdTimers(timed_runner(10))
    timers.arm("daily-ops-summary", datetime(2027, 3, 2, 7, 29, 30, tzinfo=UTC))
    text = _shown(ctx, qtbot, timers, monkeypatch)
    assert text == "Wakes this computer for daily-ops-summary at 2027-03-02 07:29:30 UTC (2027-03-02T07:29:30Z)"
    timers.disarm("daily-ops-summary")
    assert _shown(ctx, qtbot, timers, monkeypatch) == "No wake alarm is armed on this computer (systemd user timer)."


def test_a_computer_that_cannot_wake_says_why(ctx: AppContext, qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _shown(ctx, qtbot, CannotWake("systemd is not installed"), monkeypatch)
    assert text == "This computer cannot be woken for runs: systemd is not installed."
