"""The first run (scheduler_gui.monitor.first_run): an empty ledger gets the demo
schedules once; and on the embedded engine the deliberately broken demos end in
FAILED and UNKNOWN_EFFECT, the two states Needs attention shows."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from gui_support import DEMO, NOW
from shell_fixtures import window_fixture  # noqa: F401
from sqlalchemy import select

from core.clock import FixedClock
from core.ledger.models import Attempt, Occurrence, Revision, Schedule
from scheduler_gui.context import AppContext
from scheduler_gui.monitor import first_run
from scheduler_gui.monitor.engine_host import EngineHost

NOON = NOW  # 2027-03-01 12:00Z: both broken demos have an occurrence then


def schedule_ids(ctx: AppContext) -> list[str]:
    with ctx.ledger.read() as session:
        return list(session.scalars(select(Schedule.id).order_by(Schedule.id)))


def test_seeding_publishes_every_demo_once(ctx: AppContext) -> None:
    expected = sorted(yaml.safe_load(p.read_text())["scheduleId"] for p in DEMO.glob("*.yaml"))
    assert {"inbox-sync", "nightly-backup"} <= set(expected)
    assert first_run.seed_demo_ledger(ctx) == len(expected)
    assert schedule_ids(ctx) == expected
    assert first_run.last_skipped == []
    assert first_run.seed_demo_ledger(ctx) == 0, "a ledger with schedules is left alone"
    assert schedule_ids(ctx) == expected
    # Each revision records the workspace file it came from, as a publish from the window does.
    with ctx.ledger.read() as session:
        sources = {r.schedule_id: r.source_path for r in session.scalars(select(Revision))}
    files = {yaml.safe_load(p.read_text())["scheduleId"]: str(p.resolve()) for p in ctx.workspace.glob("*.yaml")}
    assert sources == files


def test_a_workspace_copy_wins_and_a_broken_one_is_skipped(ctx: AppContext) -> None:
    edited = yaml.safe_load((DEMO / "mel-sync.yaml").read_text())
    edited["title"] = "Edited in the workspace"
    (ctx.workspace / "mel-sync.yaml").write_text(yaml.safe_dump(edited))
    (ctx.workspace / "hourly-fallback.yaml").write_text("schema: scheduleSpec.v1\nscheduleId: Bad Id\n")
    missing = yaml.safe_load((DEMO / "daily-ops-summary.yaml").read_text())
    missing["task"]["argv"] = ["/no/such/report"]
    (ctx.workspace / "daily-ops-summary.yaml").write_text(yaml.safe_dump(missing))
    first_run.seed_demo_ledger(ctx)
    with ctx.ledger.read() as session:
        text = session.scalars(select(Revision.spec_json).where(Revision.schedule_id == "mel-sync")).one()
    assert '"title": "Edited in the workspace"' in text
    assert not {"hourly-fallback", "daily-ops-summary"} & set(schedule_ids(ctx))
    assert "mel-sync" in schedule_ids(ctx), "one refused publish does not undo the others"
    assert [line.split(":")[0] for line in first_run.last_skipped] == ["hourly-fallback.yaml", "daily-ops-summary"]
    assert first_run.last_skipped[1].endswith("task.argv[0]: '/no/such/report' does not exist")


def faster(ctx: AppContext, name: str, **changes: Any) -> None:
    """A workspace copy of a broken demo that breaks sooner (the bundled ones wait 10 minutes and 20 s)."""
    data = yaml.safe_load((DEMO / f"{name}.yaml").read_text())
    for key, value in changes.items():
        if isinstance(value, dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    (ctx.workspace / f"{name}.yaml").write_text(yaml.safe_dump(data))


def test_the_broken_demos_need_attention(ctx: AppContext, clock: FixedClock, qtbot: Any, tmp_path: Path) -> None:
    # ALLOW: on a clock that never moves, SKIP could count a run still being claimed as an overlap.
    faster(ctx, "nightly-backup", anchor="2027-03-01T12:00:00Z", overlapPolicy="ALLOW")
    faster(ctx, "inbox-sync", task={"timeout": "PT1S"}, overlapPolicy="ALLOW")
    first_run.seed_demo_ledger(ctx)
    host = EngineHost(ctx, poll_seconds=0.05)
    try:

        def state_of(sid: str) -> str | None:
            with ctx.ledger.read() as session:
                found = session.scalars(
                    select(Occurrence.state).where(Occurrence.schedule_id == sid, Occurrence.position_utc == NOON)
                ).first()
            return found.value if found is not None else None

        host.start()
        qtbot.waitUntil(lambda: state_of("nightly-backup") == "RETRY_WAIT", timeout=20_000)
        qtbot.waitUntil(lambda: state_of("inbox-sync") == "UNKNOWN_EFFECT", timeout=20_000)
        clock.advance(timedelta(seconds=31))  # past the backoff: the second and last attempt
        qtbot.waitUntil(lambda: state_of("nightly-backup") == "FAILED", timeout=20_000)
    finally:
        host.shutdown("stop")
    with ctx.ledger.read() as session:
        tails = session.scalars(
            select(Attempt.stderr_tail)
            .join(Occurrence, Occurrence.occurrence_id == Attempt.occurrence_id)
            .where(Occurrence.schedule_id == "nightly-backup")
        ).all()
        errors = session.scalars(
            select(Attempt.error_class)
            .join(Occurrence, Occurrence.occurrence_id == Attempt.occurrence_id)
            .where(Occurrence.schedule_id == "inbox-sync")
        ).all()
    assert [t.strip() for t in tails] == ["backup target unreachable"] * 2
    assert errors == ["timeout"]


# --- the broken demos stop after their first attention --------------------------------------------


def _needs_attention(ctx: AppContext, sid: str, state: str) -> None:
    """The demo's first occurrence ends as the engine would leave it (FAILED, UNKNOWN_EFFECT)."""
    from sqlalchemy import update

    from core.ledger.materialize import materialize_all
    from core.ledger.states import OccurrenceState

    with ctx.ledger.write() as session:
        materialize_all(session, ctx.clock)
    with ctx.ledger.write() as session:
        first = session.scalars(
            select(Occurrence.occurrence_id).where(Occurrence.schedule_id == sid).order_by(Occurrence.position_utc)
        ).first()
        session.execute(
            update(Occurrence).where(Occurrence.occurrence_id == first).values(state=OccurrenceState(state))
        )


def _states(window: Any) -> dict[str, str]:
    return {s.schedule_id: str(s.state) for s in window.hub.summaries}


@pytest.mark.parametrize(
    ("source", "paused"),
    [
        pytest.param("nightly-backup.yaml", True, id="the_demo_pauses_once"),
        pytest.param("my-backup.yaml", False, id="the_same_id_from_another_file_is_not_the_demo"),
    ],
)
def test_the_broken_demos_pause_after_their_first_attention(
    window: Any, ctx: AppContext, qtbot: Any, monkeypatch: pytest.MonkeyPatch, source: str, paused: bool
) -> None:
    from core.ledger.publish import Gate, change_gate
    from core.ledger.states import ScheduleState
    from scheduler_gui.monitor.demo_pause import pause_note

    first_run.seed_demo_ledger(ctx)
    if source != "nightly-backup.yaml":  # the person's own schedule took the id over, as revision 2
        from core.ledger.publish import RevisionSource, publish_to
        from core.spec.files import load_spec

        mine = ctx.workspace / source
        mine.write_text(
            (ctx.workspace / "nightly-backup.yaml").read_text(encoding="utf-8").replace("revision: 1", "revision: 2")
        )
        publish_to(ctx.ledger, load_spec(str(mine)), ctx.clock, source=RevisionSource.of_file(mine))
    _needs_attention(ctx, "nightly-backup", "FAILED")
    _needs_attention(ctx, "inbox-sync", "UNKNOWN_EFFECT")
    with qtbot.waitSignal(window.hub.ledgerReady, timeout=30_000):
        window.start_monitor()
    expected = {"inbox-sync": "paused", "nightly-backup": "paused" if paused else "active"}
    qtbot.waitUntil(lambda: {k: _states(window)[k] for k in expected} == expected, timeout=20_000)
    from core.ledger.models import Event

    with ctx.ledger.read() as session:
        notes = [e.data.get("note") for e in session.scalars(select(Event).where(Event.kind == "schedule.paused"))]
    assert pause_note("inbox-sync") in notes
    assert (pause_note("nightly-backup") in notes) is paused
    assert "always hangs" in pause_note("inbox-sync") and "Resume it to watch it again" in pause_note("inbox-sync")
    # A person resumes it: it is not paused again, however many attentions it adds.
    change_gate(ctx.ledger, "inbox-sync", Gate.RESUME, ctx.clock)
    window.hub.refresh_summaries()
    qtbot.waitUntil(lambda: _states(window)["inbox-sync"] == str(ScheduleState.ACTIVE), timeout=20_000)
    window.hub.refresh_summaries()
    window.hub.wait()
    qtbot.wait(200)
    assert _states(window)["inbox-sync"] == str(ScheduleState.ACTIVE)


def test_the_first_window_says_where_to_start_until_closed(window: Any, ctx: AppContext, qtbot: Any) -> None:
    from PySide6.QtCore import Qt
    from typing_support import named

    from scheduler_gui.main_window import MainWindow

    window.show()
    qtbot.waitExposed(window)
    card = named(window, "Start here")
    assert card.isVisible()
    text = named(window, "Start here: what to do first").text()
    assert "Pick a schedule" in text and "Publish" in text and "Monitor" in text and "fail on purpose" in text
    qtbot.mouseClick(named(card, "Got it"), Qt.MouseButton.LeftButton)
    assert not card.isVisible()
    again = MainWindow(ctx)  # the next start, on the same settings
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert not again.first_run_card.isVisible()
