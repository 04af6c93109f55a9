"""Schedule actions (scheduler_gui.monitor.schedule_actions): each dialog's accept
path writes the ledger through the core; a refusal shows one message next to the
field and changes nothing."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from gui_support import DEMO
from PySide6.QtWidgets import QDialog
from sqlalchemy import select, update

from core.errors import LedgerUnavailable
from core.ledger.materialize import materialize_all
from core.ledger.models import Event, Occurrence, Schedule
from core.ledger.publish import publish
from core.ledger.states import OccurrenceKind, OccurrenceState, ScheduleState
from core.spec.files import load_spec
from core.spec.validation import parse_spec
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.schedule_actions import BackfillDialog, GateDialog, RunNowDialog, problem_text, zone_time

SID = "daily-ops-summary"


@pytest.fixture
def published(ctx: AppContext) -> AppContext:
    """The New York 02:30 demo, published with a cutover ten days back."""
    spec = load_spec(str(DEMO / f"{SID}.yaml"))
    data = spec.model_dump(by_alias=True, mode="json", exclude_none=True)
    data["cutoverAt"] = "2027-02-19T00:00:00Z"
    with ctx.ledger.write() as session:
        publish(session, parse_spec(data), ctx.clock)
    return ctx


def confirm(dialog: Any, qtbot: Any) -> None:
    """Press OK and wait for the write it starts off the GUI thread."""
    dialog.accept()
    qtbot.waitUntil(lambda: not dialog.writing, timeout=10_000)


def schedule(ctx: AppContext) -> Schedule:
    with ctx.ledger.read() as session:
        found = session.get(Schedule, SID)
        assert found is not None
        return found


@pytest.mark.parametrize(
    ("action", "note", "state"),
    [
        pytest.param("pause", None, ScheduleState.PAUSED, id="pause_without_note"),
        pytest.param("pause", "maintenance window", ScheduleState.PAUSED, id="pause_with_note"),
        pytest.param("disable", "replaced by the new report", ScheduleState.DISABLED, id="disable_with_note"),
    ],
)
def test_gates_write_the_ledger(
    published: AppContext, qtbot: Any, action: str, note: str | None, state: ScheduleState
) -> None:
    dialog = GateDialog(published, SID, action)
    qtbot.addWidget(dialog)
    if note:
        dialog.note.setText(note)
    confirm(dialog, qtbot)
    assert dialog.result() == QDialog.DialogCode.Accepted
    row = schedule(published)
    assert (row.state, row.note) == (state, note)


def test_disable_needs_a_note(published: AppContext, qtbot: Any) -> None:
    dialog = GateDialog(published, SID, "disable")
    qtbot.addWidget(dialog)
    dialog.note.setText("   ")
    confirm(dialog, qtbot)
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.problem.text() == "Note: required to disable a schedule; say why it is disabled"
    assert not dialog.problem.isHidden()
    assert schedule(published).state is ScheduleState.ACTIVE


def test_a_refused_gate_says_why_and_changes_nothing(published: AppContext, qtbot: Any) -> None:
    first = GateDialog(published, SID, "disable")
    first.note.setText("gone")
    confirm(first, qtbot)
    dialog = GateDialog(published, SID, "pause")
    qtbot.addWidget(dialog)
    confirm(dialog, qtbot)
    assert dialog.problem.text() == f"{SID}: the schedule is disabled; resume it before pausing it"
    assert schedule(published).state is ScheduleState.DISABLED
    resume = GateDialog(published, SID, "resume")
    confirm(resume, qtbot)
    assert schedule(published).state is ScheduleState.ACTIVE


def test_run_now_creates_a_manual_occurrence(published: AppContext, qtbot: Any) -> None:
    dialog = RunNowDialog(published, SID)
    qtbot.addWidget(dialog)
    dialog.note.setText("customer asked")
    confirm(dialog, qtbot)
    assert dialog.result() == QDialog.DialogCode.Accepted
    with published.ledger.read() as session:
        occ = session.get(Occurrence, dialog.result_value)
        assert occ is not None
        assert (occ.kind, occ.state, occ.reason) == (
            OccurrenceKind.MANUAL,
            OccurrenceState.DUE,
            "run now by a person (customer asked)",
        )


def test_run_now_on_a_paused_schedule_is_refused(published: AppContext, qtbot: Any) -> None:
    confirm(GateDialog(published, SID, "pause"), qtbot)
    dialog = RunNowDialog(published, SID)
    qtbot.addWidget(dialog)
    confirm(dialog, qtbot)
    assert dialog.problem.text() == f"{SID} is paused; resume it first"


def test_the_write_waits_for_a_locked_ledger_off_the_gui_thread(published: AppContext, qtbot: Any) -> None:
    dialog = GateDialog(published, SID, "pause")
    qtbot.addWidget(dialog)
    closed: list[int] = []
    dialog.finished.connect(closed.append)
    holder = sqlite3.connect(published.ledger.where, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another program in the middle of a write
    try:
        dialog.accept()  # returns at once: the write waits on its own thread
        assert dialog.writing
        assert not any(button.isEnabled() for button in dialog.buttons.buttons())
        dialog.reject()  # a write under way is not abandoned half done
        assert dialog.writing and closed == []
        assert schedule(published).state is ScheduleState.ACTIVE
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    qtbot.waitUntil(lambda: not dialog.writing, timeout=10_000)
    assert closed == [QDialog.DialogCode.Accepted] and dialog.result() == QDialog.DialogCode.Accepted
    assert all(button.isEnabled() for button in dialog.buttons.buttons())
    assert schedule(published).state is ScheduleState.PAUSED


def test_a_database_that_refuses_is_said_in_the_window_s_words() -> None:
    """The core's LedgerUnavailable, never a driver's type, reaches the dialogs."""
    locked = LedgerUnavailable("database is locked", busy=True)
    assert problem_text(locked) == "the ledger is locked by another program (database is locked); try again in a moment"
    assert (
        problem_text(LedgerUnavailable("connection refused", busy=False))
        == "the ledger cannot be used (connection refused)"
    )
    assert problem_text(LedgerUnavailable("database or disk is full", busy=False, full=True)) == (
        "the ledger is full: no room is left on its disk, or the database reached its size limit "
        "(database or disk is full)"
    )


def pick(dialog: BackfillDialog, which: str, local: str) -> None:
    edit = dialog.from_edit if which == "from" else dialog.to_edit
    dialog.set_wall(edit, datetime.fromisoformat(local))


def test_backfill_previews_then_runs_what_never_ran(published: AppContext, qtbot: Any, tmp_path: Path) -> None:
    ctx = published
    with ctx.ledger.write() as session:
        materialize_all(session, ctx.clock)
        session.execute(
            update(Occurrence)
            .where(Occurrence.schedule_id == SID, Occurrence.nominal_local == "2027-02-26T02:30:00")
            .values(state=OccurrenceState.SUCCEEDED)
        )
    dialog = BackfillDialog(ctx, SID)
    qtbot.addWidget(dialog)
    assert dialog.zone == "America/New_York"
    pick(dialog, "from", "2027-02-25T00:00")
    pick(dialog, "to", "2027-03-01T00:00")
    assert dialog.from_label.text().endswith("2027-02-25 00:00 EST −05:00 · 2027-02-25 05:00Z")
    qtbot.waitUntil(lambda: dialog.preview.text() == "3 would run · 1 left alone", timeout=10_000)
    dialog.resize(640, dialog.sizeHint().height())
    dialog.grab().save(str(tmp_path / "backfill.png"))
    dialog.note.setText("missed during the move")
    confirm(dialog, qtbot)
    assert dialog.result() == QDialog.DialogCode.Accepted
    result: Any = dialog.result_value
    assert len(result.queued) == 3 and result.left
    with ctx.ledger.read() as session:
        reasons = session.scalars(
            select(Occurrence.reason).where(Occurrence.schedule_id == SID, Occurrence.state == OccurrenceState.DUE)
        ).all()
    assert sorted(reasons) == ["due now: backfill requested (missed during the move)"] * 3


def test_backfill_of_the_future_is_refused_in_words(published: AppContext, qtbot: Any) -> None:
    dialog = BackfillDialog(published, SID)
    qtbot.addWidget(dialog)
    pick(dialog, "to", "2027-03-02T00:00")
    qtbot.waitUntil(lambda: not dialog.problem.isHidden(), timeout=10_000)
    assert dialog.problem.text() == "the end is in the future; a backfill runs a past range"
    confirm(dialog, qtbot)
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.problem.text() == "--to 2027-03-02T05:00:00Z is in the future; a backfill runs a past range"
    with published.ledger.read() as session:
        assert not session.scalars(select(Event).where(Event.kind == "occurrence.created")).all()


@pytest.mark.parametrize(
    ("instant", "zone", "text"),
    [
        pytest.param(
            datetime(2027, 3, 14, 7, 30, tzinfo=UTC),
            "America/New_York",
            "03:30 EDT −04:00 · 2027-03-14 07:30Z",
            id="ny_after_spring",
        ),
        pytest.param(
            datetime(2027, 3, 14, 6, 30, tzinfo=UTC),
            "America/New_York",
            "01:30 EST −05:00 · 2027-03-14 06:30Z",
            id="ny_before_spring",
        ),
        pytest.param(
            datetime(2027, 4, 3, 15, 30, tzinfo=UTC),
            "Australia/Lord_Howe",
            "02:00 UTC+10:30 · 2027-04-03 15:30Z",
            id="lord_howe",
        ),
    ],
)
def test_zone_time_shows_abbreviation_offset_and_utc(instant: datetime, zone: str, text: str) -> None:
    assert zone_time(instant, zone).endswith(text)


def test_an_unpublished_schedule_is_refused_in_the_windows_words(ctx: AppContext, qtbot: Any) -> None:
    """Nothing published: the refusal says how to publish from the window, never a command to type."""
    dialog = RunNowDialog(ctx, SID)
    qtbot.addWidget(dialog)
    confirm(dialog, qtbot)
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.problem.text() == (
        "This schedule is not published in this ledger: publish it first (Schedule ▸ Publish…, Ctrl+Enter)"
    )
    assert "schedctl" not in dialog.problem.text()
