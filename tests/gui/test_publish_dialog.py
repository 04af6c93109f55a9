"""The publish dialog (scheduler_gui.monitor.publish_dialog): it lists the diff of
the future before publishing, and Publish writes the next revision."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from gui_support import demo_mapping
from PySide6.QtWidgets import QDialog
from sqlalchemy import select, update

from core.ledger.materialize import materialize_all
from core.ledger.models import Occurrence, Revision
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec
from core.time.zones import tzdb_version
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.publish_dialog import PublishDialog, counts_text, shift_text

SID = "daily-ops-summary"


def demo_spec(**changes: Any) -> ScheduleSpec:
    data = demo_mapping(SID)
    data.update(changes)
    return parse_spec(data)


@pytest.fixture
def live(ctx: AppContext) -> AppContext:
    """Revision 1 of the New York 02:30 demo, published a day ago and materialized; today's 02:30 runs."""
    with ctx.ledger.write() as session:
        publish(session, demo_spec(cutoverAt="2027-02-28T12:00:00Z"), ctx.clock)
        materialize_all(session, ctx.clock)
        session.execute(
            update(Occurrence)
            .where(Occurrence.nominal_local == "2027-03-01T02:30:00")
            .values(state=OccurrenceState.RUNNING)
        )
    return ctx


def opened(ctx: AppContext, spec: ScheduleSpec, qtbot: Any) -> PublishDialog:
    dialog = PublishDialog(ctx, spec)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.diff is not None, timeout=10_000)
    return dialog


def group_texts(dialog: PublishDialog) -> dict[str, list[list[str]]]:
    out = {}
    for i in range(dialog.tree.topLevelItemCount()):
        group = dialog.tree.topLevelItem(i)
        out[group.text(0)] = [[group.child(j).text(c) for c in range(3)] for j in range(group.childCount())]
    return out


def test_moving_0230_to_0330_lists_moves_the_new_gap_day_and_the_running_one(
    live: AppContext, qtbot: Any, tmp_path: Path
) -> None:
    dialog = opened(live, demo_spec(rule="FREQ=DAILY;BYHOUR=3;BYMINUTE=30"), qtbot)
    diff = dialog.diff
    assert diff is not None
    # Horizon P14D from 2027-03-01 12:00Z: 2027-03-02 ... 2027-03-15. 2027-03-14 02:30 does not exist.
    assert [r.nominal_local for r in diff.appear] == ["2027-03-14T03:30:00"]
    assert len(diff.moves) == 13 and diff.vanish == ()
    assert [(r.nominal_local, r.state) for r in diff.untouched] == [("2027-03-01T02:30:00", OccurrenceState.RUNNING)]
    assert (
        dialog.counts.text()
        == counts_text(diff)
        == ("+1 appear · −0 vanish · ↷13 move · ▶1 running or waiting, left alone · 0 unchanged")
    )
    groups = group_texts(dialog)
    assert list(groups) == ["+ 1 appear", "− 0 vanish", "↷ 13 move", "▶ 1 running or waiting, left alone"]
    [appear] = groups["+ 1 appear"]
    assert appear[0].endswith("2027-03-14 03:30 EDT −04:00") and appear[1] == "2027-03-14 07:30Z"
    first_move = groups["↷ 13 move"][0]
    assert first_move[0].endswith("2027-03-02 03:30 EST −05:00") and first_move[1] == "2027-03-02 08:30Z"
    assert first_move[2] == "+1 h · was 02:30 EST −05:00 (07:30Z)"
    [running] = groups["▶ 1 running or waiting, left alone"]
    assert running[2] == "▶ running (revision 1)"
    # Revision 1 of the designer's file is published already: this one publishes revision 2.
    assert dialog.heading.text().startswith("Publish daily-ops-summary revision 2 ")
    assert dialog.publish_button.isEnabled()
    dialog.grab().save(str(tmp_path / "publish.png"))

    dialog.accept()
    qtbot.waitUntil(lambda: not dialog.writing, timeout=10_000)
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.result_value is not None and dialog.result_value.revision == 2
    with live.ledger.read() as session:
        assert session.scalars(select(Revision.revision).where(Revision.schedule_id == SID)).all() == [1, 2]
        still = session.scalars(select(Occurrence.state).where(Occurrence.nominal_local == "2027-03-01T02:30:00")).one()
    assert still is OccurrenceState.RUNNING


def test_a_new_schedule_only_appears(ctx: AppContext, qtbot: Any) -> None:
    dialog = opened(ctx, demo_spec(horizon="P3D"), qtbot)
    assert dialog.diff is not None and dialog.diff.new_schedule
    assert [r.nominal_local for r in dialog.diff.appear] == [
        "2027-03-02T02:30:00",
        "2027-03-03T02:30:00",
        "2027-03-04T02:30:00",
    ]
    assert "a new schedule" in dialog.explain.text()
    assert dialog.heading.text() == "Publish daily-ops-summary revision 1"


def test_a_refused_publish_is_shown_and_writes_nothing(ctx: AppContext, qtbot: Any) -> None:
    dialog = opened(ctx, demo_spec(task={"argv": ["/no/such/program"]}), qtbot)
    dialog.accept()
    qtbot.waitUntil(lambda: not dialog.writing, timeout=10_000)
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.problem.text() == ("daily-ops-summary revision 1: task.argv[0]: '/no/such/program' does not exist")
    with ctx.ledger.read() as session:
        assert session.scalars(select(Revision)).all() == []


@pytest.mark.parametrize(
    ("shift", "text"),
    [
        pytest.param(timedelta(hours=1), "+1 h", id="hour_later"),
        pytest.param(timedelta(hours=-4, minutes=-30), "−4 h 30 min", id="earlier_half_hour"),
        pytest.param(timedelta(minutes=15), "+15 min", id="quarter"),
        pytest.param(timedelta(days=1, hours=2), "+1 d 2 h", id="next_day"),
        pytest.param(timedelta(0), "+0 min", id="none"),
    ],
)
def test_shift_text(shift: timedelta, text: str) -> None:
    assert shift_text(shift) == text


def test_the_dialog_says_where_the_schedule_will_run(
    ctx: AppContext, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIDEMARK_HOSTNAME", "alpha")
    new = opened(ctx, demo_spec(horizon="P3D"), qtbot)
    assert new.runs_on.isVisibleTo(new) and new.runs_on.text() == "Runs on engines with host=alpha"
    assert new.runs_on.accessibleName() == "Where it runs"
    new.grab().save("/tmp/placement-publish-new.png")
    with ctx.ledger.write() as session:
        publish(session, demo_spec(), ctx.clock)
    same = opened(ctx, demo_spec(revision=2), qtbot)
    assert not same.runs_on.isVisibleTo(same)
    anywhere = opened(ctx, demo_spec(revision=2, runsOn={"any": True}), qtbot)
    assert anywhere.runs_on.text() == "Runs on engines with host=alpha → any engine"
    anywhere.grab().save("/tmp/placement-publish-change.png")


def test_the_dialog_says_when_the_schedule_pins_or_follows_the_tz_database(ctx: AppContext, qtbot: Any) -> None:
    with ctx.ledger.write() as session:
        publish(session, demo_spec(), ctx.clock)
    same = opened(ctx, demo_spec(revision=2), qtbot)
    assert not same.tzdb_policy.isVisibleTo(same)
    pinned = opened(ctx, demo_spec(revision=2, tzdbPolicy="PIN"), qtbot)
    assert pinned.tzdb_policy.isVisibleTo(pinned) and pinned.tzdb_policy.accessibleName() == "Time zone rules"
    assert pinned.tzdb_policy.text() == (
        f"Time zone rules: follows the installed tz database → pinned to tz database {tzdb_version()}"
    )
    pinned.grab().save("/tmp/tzdb-policy-publish.png")


def test_a_move_that_would_drop_a_business_period_shows_the_carried_run(ctx: AppContext, qtbot: Any) -> None:
    """At 12:00Z, moving the daily 09:00 report from New York to Paris: Paris's 09:00 (08:00Z)
    has passed, New York's (14:00Z) is superseded; the dialog says the day runs at 14:00Z."""
    daily = {"rule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0", "businessPeriod": "{nominal:%Y-%m-%d}"}
    with ctx.ledger.write() as session:
        publish(session, demo_spec(cutoverAt="2027-02-28T12:00:00Z", **daily), ctx.clock)
        materialize_all(session, ctx.clock)
    dialog = opened(ctx, demo_spec(revision=2, timeZone="Europe/Paris", **daily), qtbot)
    assert dialog.diff is not None and [r.nominal_local for r in dialog.diff.carried] == ["2027-03-01T09:00:00"]
    assert "⇥1 carried" in dialog.counts.text()
    [carried] = group_texts(dialog)["⇥ 1 keep their business period at the superseded time"]
    assert carried[1] == "2027-03-01 14:00Z" and carried[2] == "period 2027-03-01 runs here, as revision 2's"
