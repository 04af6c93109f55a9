"""The first run (scheduler_gui.monitor.first_run): an empty ledger gets the demo
schedules once; and on the embedded engine the deliberately broken demos end in
FAILED and UNKNOWN_EFFECT, the two states Needs attention shows."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from gui_support import DEMO, NOW
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
