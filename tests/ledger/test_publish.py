"""Publishing revisions (invariant 8) and gating schedules, with their events."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, text, update
from sqlalchemy.exc import IntegrityError

from core.clock import FixedClock
from core.errors import LedgerError, PublishError, UnknownScheduleError
from core.ledger import events
from core.ledger.db import Ledger
from core.ledger.materialize import materialize
from core.ledger.models import Event, Occurrence, Revision, Schedule
from core.ledger.publish import disable, pause, publish, resume
from core.ledger.states import OccurrenceState, ScheduleState
from core.spec.canonical import canonical_dict
from core.time.zones import tzdb_version

from . import NOW, by_nominal, occurrences, spec, utc

SID = "daily-ops-summary"


def _events(ledger: Ledger) -> list[Event]:
    with ledger.read() as session:
        return list(session.scalars(select(Event).order_by(Event.id)))


def _walk(session: object, occ: Occurrence, *states: OccurrenceState) -> None:
    """Move an occurrence along legal arrows, as the engine would."""
    for state in states:
        events.transition(session, occ, state, NOW)  # type: ignore[arg-type]


# --- what a revision stores ---------------------------------------------------------------


def test_publish_stores_the_canonical_text_with_defaults_filled(ledger: Ledger, clock: FixedClock) -> None:
    published = spec()
    with ledger.write() as session:
        result = publish(session, published, clock)
    assert result.created and result.revision == 1 and result.cutover_at == NOW
    assert result.tzdb_version == tzdb_version()
    with ledger.read() as session:
        row = session.get(Revision, (SID, 1))
        assert row is not None
        assert row.spec_json == json.dumps(canonical_dict(published, cutover_at=NOW), sort_keys=False)
        stored = json.loads(row.spec_json)
        assert stored["cutoverAt"] == "2026-03-01T12:00:00Z"
        assert stored["tzdbVersion"] == tzdb_version()
        assert stored["horizon"] == "P14D" and stored["misfirePolicy"] == "CATCH_UP_BOUNDED"
        assert stored["maxCatchUp"] == 1 and stored["overlapPolicy"] == "SKIP"
        assert (row.cutover_at, row.published_at, row.tzdb_version) == (NOW, NOW, tzdb_version())
        schedule = session.get(Schedule, SID)
        assert schedule is not None
        assert schedule.state is ScheduleState.ACTIVE and schedule.active_revision == 1
        assert schedule.cursor_utc == NOW and schedule.gate_version == 0


def test_an_explicit_cutover_and_tzdb_version_are_kept(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        result = publish(session, spec(cutoverAt="2026-03-04T00:00:00Z", tzdbVersion="2025b"), clock)
    assert result.cutover_at == utc("2026-03-04T00:00:00Z") and result.tzdb_version == "2025b"
    with ledger.read() as session:
        schedule = session.get(Schedule, SID)
        assert schedule is not None and schedule.cursor_utc == utc("2026-03-04T00:00:00Z")


# --- refusals --------------------------------------------------------------------------------


def _nothing_written(ledger: Ledger) -> None:
    with ledger.read() as session:
        assert session.scalar(select(func.count()).select_from(Schedule)) == 0
        assert session.scalar(select(func.count()).select_from(Revision)) == 0
        assert session.scalar(select(func.count()).select_from(Event)) == 0


def test_a_spec_without_task_is_refused(ledger: Ledger, clock: FixedClock) -> None:
    message = r"daily-ops-summary revision 1: task: required to publish"
    with pytest.raises(PublishError, match=message), ledger.write() as session:
        publish(session, spec(task=None), clock)
    _nothing_written(ledger)


def _script(tmp_path: Path, name: str, mode: int) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(mode)
    return str(path)


@pytest.mark.parametrize(
    ("argv0", "message"),
    [
        pytest.param("/no/such/program", r"task.argv\[0\]: '/no/such/program' does not exist", id="missing_absolute"),
        pytest.param("bin/run.sh", r"task.argv\[0\]: 'bin/run.sh' is a relative path", id="relative_without_cwd"),
        pytest.param("no-such-program-tidemark", r"is not found on PATH", id="not_on_path"),
        pytest.param("NOT_EXECUTABLE", r"is not executable", id="not_executable"),
        pytest.param("DIRECTORY", r"is not a file", id="a_directory"),
    ],
)
def test_a_program_that_cannot_start_is_refused(
    ledger: Ledger, clock: FixedClock, tmp_path: Path, argv0: str, message: str
) -> None:
    argv0 = {"NOT_EXECUTABLE": _script(tmp_path, "plain.sh", 0o644), "DIRECTORY": str(tmp_path)}.get(argv0, argv0)
    with pytest.raises(PublishError, match=message), ledger.write() as session:
        publish(session, spec(task={"argv": [argv0, "x"]}), clock)
    _nothing_written(ledger)


def test_a_missing_working_directory_is_refused(ledger: Ledger, clock: FixedClock, tmp_path: Path) -> None:
    missing = str(tmp_path / "gone")
    with pytest.raises(PublishError, match=r"task.cwd: '.*gone' is not a directory"), ledger.write() as session:
        publish(session, spec(task={"argv": ["/bin/true"], "cwd": missing}), clock)


def test_the_verify_probe_is_checked_too(ledger: Ledger, clock: FixedClock) -> None:
    with pytest.raises(PublishError, match=r"task.verify\[0\]: '/no/probe' does not exist"), ledger.write() as session:
        publish(session, spec(task={"argv": ["/bin/true"], "verify": ["/no/probe"]}), clock)


@pytest.mark.parametrize(
    "task",
    [
        pytest.param({"argv": ["true"]}, id="name_on_path"),
        pytest.param({"argv": ["EXEC"]}, id="absolute_executable"),
        pytest.param({"argv": ["./ok.sh"], "cwd": "TMP"}, id="relative_to_cwd"),
    ],
)
def test_programs_that_can_start_are_accepted(
    ledger: Ledger, clock: FixedClock, tmp_path: Path, task: dict[str, object]
) -> None:
    exe = _script(tmp_path, "ok.sh", 0o755)
    argv = [exe if a == "EXEC" else a for a in task["argv"]]  # type: ignore[attr-defined]
    task = {**task, "argv": argv, **({"cwd": str(tmp_path)} if task.get("cwd") else {})}
    with ledger.write() as session:
        assert publish(session, spec(task=task), clock).revision == 1


def test_check_task_false_skips_the_program_check(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(task={"argv": ["/not/here/yet"]}), clock, check_task=False)


@pytest.mark.parametrize(
    ("again", "message"),
    [
        pytest.param(2, "revision 2 is already published; publish revision 3 or higher", id="equal"),
        pytest.param(1, "revision 1 is older than the published revision 2; publish revision 3 or higher", id="lower"),
    ],
)
def test_the_revision_must_grow(ledger: Ledger, clock: FixedClock, again: int, message: str) -> None:
    with ledger.write() as session:
        publish(session, spec(revision=1), clock)
        publish(session, spec(revision=2), clock)
    before = _events(ledger)
    with pytest.raises(PublishError, match=message), ledger.write() as session:
        publish(session, spec(revision=again, rule="FREQ=DAILY;BYHOUR=9"), clock)
    with ledger.read() as session:
        assert session.scalars(select(Revision.revision).order_by(Revision.revision)).all() == [1, 2]
    assert [e.id for e in _events(ledger)] == [e.id for e in before]


def test_revisions_may_skip_numbers(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(revision=1), clock)
        assert publish(session, spec(revision=5), clock).revision == 5


# --- cutover ------------------------------------------------------------------------------


CUTOVER = utc("2026-03-05T00:00:00Z")


def _published_and_materialized(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock)
        materialize(session, SID, clock)


def test_cutover_cancels_only_not_started_rows_at_or_after_it(ledger: Ledger, clock: FixedClock) -> None:
    _published_and_materialized(ledger, clock)
    with ledger.write() as session:
        rows = by_nominal(session, SID)
        _walk(session, rows[("2026-03-03T02:30:00", 0)], OccurrenceState.DUE)  # before C: kept
        _walk(session, rows[("2026-03-05T02:30:00", 0)], OccurrenceState.DUE)  # after C, DUE: cancelled
        _walk(
            session,
            rows[("2026-03-06T02:30:00", 0)],
            OccurrenceState.DUE,
            OccurrenceState.DISPATCHING,
            OccurrenceState.RUNNING,
        )  # after C but started: kept
    with ledger.write() as session:
        result = publish(session, spec(revision=2, cutoverAt="2026-03-05T00:00:00Z"), clock)
    with ledger.read() as session:
        old = {o.nominal_local: o for o in occurrences(session, SID) if o.revision == 1}
    cancelled = {n for n, o in old.items() if o.state is OccurrenceState.CANCELLED}
    expected = {f"2026-03-{d:02d}T02:30:00" for d in (5, 7, 9, 10, 11, 12, 13, 14, 15)}
    assert cancelled == expected  # 03-06 runs; 03-08 is a SKIPPED_GAP fact
    assert sorted(result.cancelled) == sorted(old[n].occurrence_id for n in expected)
    assert {old[n].reason for n in expected} == {"superseded by revision 2"}
    assert old["2026-03-03T02:30:00"].state is OccurrenceState.DUE
    assert old["2026-03-04T02:30:00"].state is OccurrenceState.PLANNED
    assert old["2026-03-06T02:30:00"].state is OccurrenceState.RUNNING
    assert old["2026-03-08T02:30:00"].state is OccurrenceState.SKIPPED_GAP
    # One event per cancelled occurrence, saying where it came from, then the publish.
    tail = [e for e in _events(ledger) if e.kind == "occurrence.transitioned" and e.data["to"] == "CANCELLED"]
    assert {e.occurrence_id for e in tail} == set(result.cancelled)
    assert {e.data["from"] for e in tail} == {"PLANNED", "DUE"}
    published = [e for e in _events(ledger) if e.kind == "schedule.published"]
    assert published[-1].data == {
        "revision": 2,
        "cutoverAt": "2026-03-05T00:00:00Z",
        "tzdbVersion": tzdb_version(),
        "cancelled": 9,
    }


def test_the_new_revision_takes_the_released_slots(ledger: Ledger, clock: FixedClock) -> None:
    _published_and_materialized(ledger, clock)
    with ledger.write() as session:
        running = by_nominal(session, SID)[("2026-03-06T02:30:00", 0)]
        _walk(session, running, OccurrenceState.DUE, OccurrenceState.DISPATCHING, OccurrenceState.RUNNING)
    with ledger.write() as session:
        publish(session, spec(revision=2, cutoverAt="2026-03-05T00:00:00Z", title="same instants"), clock)
        result = materialize(session, SID, clock)
    assert result.from_utc == CUTOVER
    with ledger.read() as session:
        all_rows = occurrences(session, SID)
    old = {o.nominal_local: o for o in all_rows if o.revision == 1}
    new = {o.nominal_local: o for o in all_rows if o.revision == 2}
    assert min(o.position_utc for o in new.values()) >= CUTOVER
    # Same instant, new occurrence id, same slot: the cancelled one let go of it.
    taken = new["2026-03-05T02:30:00"]
    assert taken.state is OccurrenceState.PLANNED
    assert taken.logical_slot_id == old["2026-03-05T02:30:00"].logical_slot_id
    assert taken.occurrence_id != old["2026-03-05T02:30:00"].occurrence_id
    # The running one keeps its instant; the new revision's row says who has it.
    clash = new["2026-03-06T02:30:00"]
    assert clash.state is OccurrenceState.SKIPPED_DUPLICATE
    assert clash.logical_slot_id is None and clash.resolved_utc is None and clash.due_at is None
    assert clash.reason == (
        f"resolves to the same instant (2026-03-06T07:30:00Z) as {running.occurrence_id} of revision 1, which keeps it"
    )
    _at_most_one_live_per_slot(ledger)


def _at_most_one_live_per_slot(ledger: Ledger) -> None:
    """Invariant 2, as data: no (schedule, slot) has two rows that are not cancelled."""
    with ledger.read() as session:
        doubles = session.execute(
            select(Occurrence.schedule_id, Occurrence.logical_slot_id, func.count())
            .where(Occurrence.logical_slot_id.is_not(None), Occurrence.state != OccurrenceState.CANCELLED)
            .group_by(Occurrence.schedule_id, Occurrence.logical_slot_id)
            .having(func.count() > 1)
        ).all()
    assert doubles == []


def test_the_cutover_instant_itself_belongs_to_the_new_revision(ledger: Ledger, clock: FixedClock) -> None:
    _published_and_materialized(ledger, clock)
    with ledger.write() as session:
        publish(session, spec(revision=2, cutoverAt="2026-03-05T07:30:00Z"), clock)  # exactly the 5th's run
        materialize(session, SID, clock)
    with ledger.read() as session:
        live = {
            o.nominal_local: o.revision for o in occurrences(session, SID) if o.state is not OccurrenceState.CANCELLED
        }
    assert live["2026-03-04T02:30:00"] == 1
    assert live["2026-03-05T02:30:00"] == 2


def test_at_most_one_live_occurrence_per_slot_across_revisions(ledger: Ledger, clock: FixedClock) -> None:
    _published_and_materialized(ledger, clock)
    for number, cutover in ((2, "2026-03-04T00:00:00Z"), (3, "2026-03-02T00:00:00Z"), (4, "2026-03-10T00:00:00Z")):
        with ledger.write() as session:
            publish(session, spec(revision=number, cutoverAt=cutover), clock)
            materialize(session, SID, clock)
        _at_most_one_live_per_slot(ledger)
    with ledger.read() as session:
        live = [o for o in occurrences(session, SID) if o.state is not OccurrenceState.CANCELLED]
    # Revision 3 cut over before revision 2, so 2 never governs anything; 4 from the 10th.
    by_revision = {o.nominal_local: o.revision for o in live}
    assert by_revision["2026-03-02T02:30:00"] == 3  # 07:30Z on the 2nd: after revision 3's cutover
    assert by_revision["2026-03-09T02:30:00"] == 3
    assert by_revision["2026-03-10T02:30:00"] == 4
    assert set(by_revision.values()) == {3, 4}


def test_the_database_refuses_a_second_live_occurrence_on_a_slot(ledger: Ledger, clock: FixedClock) -> None:
    _published_and_materialized(ledger, clock)
    with ledger.write() as session:
        publish(session, spec(revision=2, cutoverAt="2027-01-01T00:00:00Z"), clock)
    with ledger.read() as session:
        first = occurrences(session, SID)[0]
    copy = {c.name: getattr(first, c.key) for c in Occurrence.__table__.columns}
    copy.update(occurrence_id="occ-" + "0" * 32, revision=2, nominal_local="2026-03-02T02:31:00")
    with pytest.raises(IntegrityError), ledger.write() as session:
        session.add(Occurrence(**copy))
    with ledger.write() as session:
        session.execute(
            update(Occurrence).where(Occurrence.occurrence_id == first.occurrence_id).values(state="CANCELLED")
        )
        session.add(Occurrence(**copy))  # a cancelled occurrence no longer holds the slot


def test_cursor_goes_back_to_the_cutover_only(ledger: Ledger, clock: FixedClock) -> None:
    _published_and_materialized(ledger, clock)
    with ledger.write() as session:
        publish(session, spec(revision=2, cutoverAt="2026-03-05T00:00:00Z"), clock)
        assert session.get(Schedule, SID).cursor_utc == CUTOVER  # type: ignore[union-attr]
        publish(session, spec(revision=3, cutoverAt="2026-06-01T00:00:00Z"), clock)
        # Beyond the cursor: revision 2 still owns the range up to it.
        assert session.get(Schedule, SID).cursor_utc == CUTOVER  # type: ignore[union-attr]


def test_history_is_kept(ledger: Ledger, clock: FixedClock) -> None:
    _published_and_materialized(ledger, clock)
    with ledger.read() as session:
        before = session.scalar(select(func.count()).select_from(Occurrence))
    with ledger.write() as session:
        publish(session, spec(revision=2), clock)
    with ledger.read() as session:
        assert session.scalar(select(func.count()).select_from(Occurrence)) == before
        assert session.scalars(select(Revision.revision).order_by(Revision.revision)).all() == [1, 2]


def test_a_failed_unit_of_work_leaves_no_revision_and_no_events(ledger: Ledger, clock: FixedClock) -> None:
    with pytest.raises(RuntimeError), ledger.write() as session:
        publish(session, spec(), clock)
        raise RuntimeError("the command failed after publishing")
    _nothing_written(ledger)


# --- the gate -------------------------------------------------------------------------------


def test_pause_resume_disable_move_the_gate_with_notes(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock)
    steps = [
        (pause, "maintenance window", ScheduleState.PAUSED, "schedule.paused"),
        (resume, "back", ScheduleState.ACTIVE, "schedule.resumed"),
        (disable, "retired", ScheduleState.DISABLED, "schedule.disabled"),
        (resume, None, ScheduleState.ACTIVE, "schedule.resumed"),
    ]
    for i, (action, note, state, kind) in enumerate(steps, start=1):
        clock.advance(timedelta(minutes=1))
        with ledger.write() as session:
            change = action(session, SID, clock, note)
        assert change.changed and change.new is state
        with ledger.read() as session:
            schedule = session.get(Schedule, SID)
            assert schedule is not None
            assert (schedule.state, schedule.note, schedule.gate_version) == (state, note, i)
            assert schedule.updated_at == clock.now()
        last = _events(ledger)[-1]
        assert (last.kind, last.schedule_id, last.at) == (kind, SID, clock.now())
        assert last.data["note"] == note and last.data["gateVersion"] == i
    with ledger.read() as session:
        assert session.get(Schedule, SID).disable_generation == 1  # type: ignore[union-attr]
    assert [e.data["from"] for e in _events(ledger) if e.kind != "schedule.published"] == [
        "active",
        "paused",
        "active",
        "disabled",
    ]


def test_publishing_bumps_the_gate(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock)
        publish(session, spec(revision=2), clock)
        assert session.get(Schedule, SID).gate_version == 1  # type: ignore[union-attr]


def test_a_gate_already_there_changes_nothing(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock)
    count = len(_events(ledger))
    with ledger.write() as session:
        assert not resume(session, SID, clock, "again").changed
    assert len(_events(ledger)) == count


def test_a_disabled_schedule_must_be_resumed_before_pausing(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock)
        disable(session, SID, clock)
    with pytest.raises(LedgerError, match="is disabled; resume it before pausing it"), ledger.write() as session:
        pause(session, SID, clock)


def test_gating_an_unknown_schedule(ledger: Ledger, clock: FixedClock) -> None:
    with pytest.raises(UnknownScheduleError, match="nope: no such schedule"), ledger.write() as session:
        pause(session, "nope", clock)


def test_gate_changes_are_rolled_back_with_their_events(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session:
        publish(session, spec(), clock)
    with pytest.raises(RuntimeError), ledger.write() as session:
        pause(session, SID, clock, "x")
        raise RuntimeError
    assert [e.kind for e in _events(ledger)] == ["schedule.published"]
    with ledger.read() as session:
        assert session.get(Schedule, SID).state is ScheduleState.ACTIVE  # type: ignore[union-attr]


def test_events_carry_no_wall_clock_but_the_injected_one(ledger: Ledger, clock: FixedClock) -> None:
    clock.set(utc("2031-01-01T00:00:00Z"))
    with ledger.write() as session:
        publish(session, spec(), clock)
    with ledger.read() as session:
        assert session.execute(text("SELECT count(*) FROM events")).scalar() == 1
    assert _events(ledger)[0].at == utc("2031-01-01T00:00:00Z")
