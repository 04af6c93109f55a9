"""Needs attention after a newer Tidemark's first start found schedules it computes
otherwise: a person reads the card, keeps the runs of one schedule and republishes
the other under the new version; buttons found by their accessible names."""

from __future__ import annotations

import json
from typing import Any

import pytest
from code_change import reword_gaps
from monitor_support import put
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton
from test_drift_card import _click, _daily, _named, _view

from core.cli import main as schedctl
from core.engine.context import EngineOptions
from core.engine.engine import Engine
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.drift_card import DriftCard
from scheduler_gui.monitor.ledger_watch import LedgerWatcher

SID = "nightly-report"


@pytest.fixture
def upgraded(qtbot, ctx: AppContext, monkeypatch: pytest.MonkeyPatch) -> AppContext:
    """Two schedules planned by Tidemark 0.1.0, then the first start of 0.2.0, which words the gap otherwise."""
    put(ctx, _daily())
    put(ctx, _daily("other-report"))
    Engine(ctx.ledger, ctx.clock, EngineOptions(max_workers=2, version="0.1.0")).run_once()
    reword_gaps(monkeypatch)
    Engine(ctx.ledger, ctx.clock, EngineOptions(max_workers=2, version="0.2.0")).run_once()
    return ctx


def _card(view: Any, schedule_id: str) -> DriftCard:
    return _named(view, DriftCard, f"new tidemark version: {schedule_id}")  # type: ignore[return-value]


def test_a_person_keeps_one_schedule_and_republishes_the_other(qtbot, upgraded: AppContext, capsys) -> None:
    watcher = LedgerWatcher(upgraded, interval_ms=3_600_000)
    watcher.poll_now()
    assert watcher.attention_count == 2
    view = _view(qtbot, upgraded, watcher)
    assert view.heading.text() == "Needs attention (2)"
    card = _card(view, SID)
    what = _named(card, QLabel, "What the new Tidemark version changes")
    assert what.text() == (
        "Tidemark 0.2.0 computes 1 future run otherwise than 0.1.0; republish to follow. "
        "The runs keep what Tidemark 0.1.0 planned until you decide."
    )
    for control in [*card.findChildren(QPushButton), *card.findChildren(QLineEdit)]:
        assert control.accessibleName() and control.toolTip(), control
    assert view.grab().save(str(upgraded.workspace / "shadow-card.png"))
    qtbot.keyClicks(_named(card, QLineEdit, "Note for the decision"), "the new wording says the same")
    with qtbot.waitSignal(view.decisionRecorded, timeout=30_000) as recorded:
        _click(qtbot, _named(card, QPushButton, "Keep as materialized"))
    assert recorded.args[1] == f"{SID}: kept 1 run Tidemark 0.2.0 computes otherwise as materialized"
    qtbot.waitUntil(lambda: view.count == 1, timeout=20_000)

    other = _card(view, "other-report")
    _click(qtbot, _named(other, QPushButton, "Republish under Tidemark 0.2.0"))
    qtbot.waitUntil(lambda: _named(other, QPushButton, "Publish revision 2").isVisible(), timeout=20_000)
    with qtbot.waitSignal(view.decisionRecorded, timeout=30_000):
        _click(qtbot, _named(other, QPushButton, "Publish revision 2"))
    qtbot.waitUntil(lambda: view.count == 0, timeout=20_000)
    capsys.readouterr()
    assert schedctl(["events", "--kind", "schedule.drift_kept", "--format", "json", "--db", upgraded.ledger_url]) == 0
    [event] = json.loads(capsys.readouterr().out)["events"]
    assert (event["scheduleId"], event["note"]) == (SID, "the new wording says the same")
    assert schedctl(["schedules", "--format", "json", "--db", upgraded.ledger_url]) == 0
    revisions = {s["scheduleId"]: s["revision"] for s in json.loads(capsys.readouterr().out)["schedules"]}
    assert revisions == {SID: 1, "other-report": 2}
    watcher.stop()
