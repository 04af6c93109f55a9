"""Needs attention for a schedule whose planned runs new time zone data would move:
a person reads the card, keeps the runs, or asks to republish, reads the diff of
the future first, and publishes; buttons found by their accessible names."""

from __future__ import annotations

import json

import pytest
from gui_support import NOW
from monitor_support import engine, put
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QWidget
from tzdata_change import NEW_RELEASE, install_tzdata, new_york_a_week_late

from core.cli import main as schedctl
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.attention import AttentionView
from scheduler_gui.monitor.drift_card import DriftCard
from scheduler_gui.monitor.ledger_watch import LedgerWatcher

SID = "nightly-report"


def _daily(schedule_id: str = SID) -> dict:
    """Every day at 02:30 in New York: 2027's spring change (03-14) lies in its 14-day horizon
    and the day materialized beyond it."""
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "America/New_York",
        "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        "start": "2027-01-01T00:00:00",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "horizon": "P14D",
        "task": {"argv": ["/bin/true"]},
    }


def _named(parent: QWidget, kind: type, name: str) -> QWidget:
    found = [w for w in parent.findChildren(kind) if w.accessibleName() == name]
    assert len(found) == 1, (name, [w.accessibleName() for w in parent.findChildren(kind)])
    return found[0]


def _click(qtbot, button: QWidget) -> None:
    qtbot.waitUntil(lambda: button.isVisible() and button.isEnabled(), timeout=5_000)  # shown by the event loop
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


@pytest.fixture
def drifted(qtbot, ctx: AppContext, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> AppContext:
    """Two schedules planned under the real tzdata; then a release in which New York springs forward a week late,
    seen by the engine's drift check."""
    put(ctx, _daily())
    put(ctx, _daily("other-report"))
    engine(ctx).run_once()
    install_tzdata(monkeypatch, request, {"America/New_York": new_york_a_week_late()})
    engine(ctx).run_once()
    return ctx


def _view(qtbot, ctx: AppContext, watcher: LedgerWatcher) -> AttentionView:
    view = AttentionView(ctx, watcher)
    qtbot.addWidget(view)
    view.resize(900, 760)
    view.show()
    with qtbot.waitSignal(view.loaded, timeout=20_000):
        view.reload()
    qtbot.waitUntil(lambda: all(card.isVisible() for card in view.drift_cards.values()), timeout=5_000)
    return view


def _card(view: AttentionView, schedule_id: str) -> DriftCard:
    return _named(view, DriftCard, f"time zone data changed: {schedule_id}")  # type: ignore[return-value]


def test_a_person_keeps_the_runs_as_materialized(qtbot, drifted: AppContext, capsys) -> None:
    watcher = LedgerWatcher(drifted, interval_ms=3_600_000)
    watcher.poll_now()
    assert watcher.attention_count == 2
    view = _view(qtbot, drifted, watcher)
    assert view.count == 2 and view.heading.text() == "Needs attention (2)"
    card = _card(view, SID)
    what = _named(card, QLabel, "What the new time zone data changes")
    assert what.text() == (
        f"tzdata {NEW_RELEASE} moves 3 future runs by up to 1 h; republish to follow. "
        "The runs keep the instants they were planned at (tzdata 2026f) until you decide."
    )
    for control in [*card.findChildren(QPushButton), *card.findChildren(QLineEdit)]:
        assert control.accessibleName() and control.toolTip(), control
    assert view.grab().save(str(drifted.workspace / "drift-card.png"))
    qtbot.keyClicks(_named(card, QLineEdit, "Note for the decision"), "the new law is not in force yet")
    with qtbot.waitSignal(view.decisionRecorded, timeout=30_000) as recorded:
        _click(qtbot, _named(card, QPushButton, "Keep as materialized"))
    assert recorded.args == [f"{SID} (tz drift)", f"{SID}: kept 3 drifted runs as materialized"]
    qtbot.waitUntil(lambda: view.count == 1, timeout=20_000)
    assert [c.item.schedule_id for c in view.drift_cards.values()] == ["other-report"]
    capsys.readouterr()
    assert schedctl(["events", "--kind", "schedule.drift_kept", "--format", "json", "--db", drifted.ledger_url]) == 0
    [event] = json.loads(capsys.readouterr().out)["events"]
    assert (event["scheduleId"], event["note"]) == (SID, "the new law is not in force yet")
    watcher.stop()


def test_republish_shows_the_future_first_and_cancel_publishes_nothing(qtbot, drifted: AppContext, capsys) -> None:
    watcher = LedgerWatcher(drifted, interval_ms=3_600_000)
    view = _view(qtbot, drifted, watcher)
    card = _card(view, SID)
    _click(qtbot, _named(card, QPushButton, f"Republish under {NEW_RELEASE}"))
    outlook = _named(card, QLabel, "Diff of the future")
    qtbot.waitUntil(outlook.isVisible, timeout=20_000)
    lines = outlook.text().splitlines()
    assert lines[0].startswith("Republishing as revision 2 (cutover ")
    assert lines[0].endswith(": 1 run moves, 1 run appears, 0 runs vanish.")
    assert lines[1:] == [
        "  2027-03-15 02:30: 2027-03-15 06:30Z → 2027-03-15 07:30Z (+1 h)",
        "  appears: 2027-03-14 02:30",
    ]
    assert view.grab().save(str(drifted.workspace / "drift-outlook.png"))
    _click(qtbot, _named(card, QPushButton, "Cancel republishing"))
    assert not outlook.isVisible()
    capsys.readouterr()
    assert schedctl(["schedules", "--format", "json", "--db", drifted.ledger_url]) == 0
    assert {s["scheduleId"]: s["revision"] for s in json.loads(capsys.readouterr().out)["schedules"]}[SID] == 1

    _click(qtbot, _named(card, QPushButton, f"Republish under {NEW_RELEASE}"))
    qtbot.waitUntil(lambda: _named(card, QPushButton, "Publish revision 2").isVisible(), timeout=20_000)
    with qtbot.waitSignal(view.decisionRecorded, timeout=30_000) as recorded:
        _click(qtbot, _named(card, QPushButton, "Publish revision 2"))
    assert recorded.args[1] == f"{SID}: republished as revision 2 under tzdata {NEW_RELEASE}"
    qtbot.waitUntil(lambda: view.count == 1, timeout=20_000)
    capsys.readouterr()
    assert schedctl(["schedules", "--format", "json", "--db", drifted.ledger_url]) == 0
    assert {s["scheduleId"]: s["revision"] for s in json.loads(capsys.readouterr().out)["schedules"]}[SID] == 2
    assert NOW.year == 2027
    watcher.stop()
