"""One schedule's bad data holds only that schedule: a damaged pinned TZif or a business
calendar no expansion can serve, planted with raw SQL past validation, is held with one
line said once, and every other schedule keeps running. ``schedctl engine run --once``,
``schedules`` and ``shadow`` run as real processes with a timeout (a damaged TZif once
made them loop for ever). On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from core.clock import FixedClock
from core.desktop.notify.needs import NeedKind
from core.engine.engine import Engine
from core.errors import ComputeLimitError
from core.ledger.db import Ledger
from core.ledger.events import EventKind
from core.ledger.models import Event, Occurrence, Revision
from core.ledger.monitor_reads import attention_queue, person_needs
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState
from core.recurrence import compile as compiling
from core.time.zones import zone_tzif

from . import DAILY, spec

GOOD, PINNED, CALENDAR = "good", "pinned", "calendar"
#: The good schedule's 02:30 New York run of 2 March is due at 07:30Z; the engine passes come 30 s later.
PASS_AT = "2026-03-02T07:30:30Z"
REAL = zone_tzif("America/New_York")
#: Damaged pinned rules as a publisher could write them with raw SQL.
DAMAGED = [
    pytest.param(REAL[:-1], id="missing_final_newline"),
    pytest.param(REAL[:700], id="truncated"),
    pytest.param(REAL[:20] + b"\xff" * 24 + REAL[44:], id="huge_counts"),
]
#: A business calendar that closes 500 days in a row from 2026-03-01.
CLOSED_500 = [(date(2026, 3, 1) + timedelta(days=i)).isoformat() for i in range(500)]


def _publish_three(ledger: Ledger, clock: FixedClock, out: Path) -> None:
    write = f"open({str(out)!r}, 'a').write('ran\\n')"
    task = {"argv": [sys.executable, "-c", write], "effect": "non_idempotent"}
    with ledger.write() as session:
        publish(session, spec(dict(DAILY, scheduleId=GOOD), task=task), clock)
        publish(session, spec(dict(DAILY, scheduleId=PINNED, tzdbPolicy="PIN"), task=task), clock)
        calendar = {"closed": ["2026-12-24"]}
        publish(
            session,
            spec(dict(DAILY, scheduleId=CALENDAR), businessCalendar=calendar, holidayPolicy="NEXT_BUSINESS_DAY"),
            clock,
        )


def _plant(ledger: Ledger, tzif: bytes) -> None:
    """Damage the pinned rules and close 500 days in the calendar, past publish's checks."""
    with ledger.write() as session:
        text = session.scalar(select(Revision.spec_json).where(Revision.schedule_id == CALENDAR))
        assert text is not None
        data: dict[str, Any] = json.loads(text)
        data["businessCalendar"]["closed"] = CLOSED_500
        session.execute(update(Revision).where(Revision.schedule_id == CALENDAR).values(spec_json=json.dumps(data)))
        session.execute(update(Revision).where(Revision.schedule_id == PINNED).values(tzif=tzif))


def _schedctl(url: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *argv, "--db", url, "--now", PASS_AT],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("tzif", DAMAGED)
def test_a_poisoned_schedule_is_held_and_the_others_run(
    ledger_url: str, ledger: Ledger, clock: FixedClock, tmp_path: Path, tzif: bytes
) -> None:
    out = tmp_path / "ran.txt"
    _publish_three(ledger, clock, out)
    Engine(ledger, clock).run_once()  # every schedule's next days materialized, before the damage
    _plant(ledger, tzif)

    first = _schedctl(ledger_url, "engine", "run", "--once", "--no-notify")
    second = _schedctl(ledger_url, "engine", "run", "--once", "--no-notify")

    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert "Traceback" not in first.stderr + second.stderr
    assert out.read_text(encoding="utf-8") == "ran\n"  # the good schedule ran, once
    for sid, why in (
        (PINNED, "the pinned rules of America/New_York cannot be read"),
        (CALENDAR, "no business day within 400 days"),
    ):
        said = [line for line in first.stderr.splitlines() if line.startswith(f"schedule {sid}: ")]
        assert len(said) == 1 and why in said[0], first.stderr
        assert f"schedule {sid} is held: " in first.stdout
    with ledger.read() as session:
        recorded = session.scalars(select(Event.schedule_id).where(Event.kind == EventKind.SCHEDULE_UNREADABLE.value))
        assert sorted(recorded) == [CALENDAR, PINNED]  # once, whatever the engines
        held = session.scalars(select(Occurrence.state).where(Occurrence.schedule_id.in_([PINNED, CALENDAR])))
        assert OccurrenceState.SUCCEEDED not in set(held)
    listed = _schedctl(ledger_url, "schedules")
    assert (listed.returncode, listed.stderr) == (0, ""), listed.stderr
    said = [line for line in listed.stdout.splitlines() if " held by the engines: " in line]
    assert [line.split(": ")[0] for line in said] == [CALENDAR, PINNED]
    assert said[1].startswith(f"{PINNED}: held by the engines: revision 1: the pinned rules of America/New_York")
    compared = _schedctl(ledger_url, "shadow")
    assert (compared.returncode, compared.stderr) == (3, ""), compared.stderr
    assert f"{PINNED}: a revision this Tidemark cannot read (the pinned rules" in compared.stdout
    assert f"{CALENDAR}: a revision this Tidemark cannot read (the business calendar has no" in compared.stdout


def test_an_expansion_error_of_one_schedule_holds_only_it_until_republished(
    ledger: Ledger, clock: FixedClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any error expanding one schedule (here the business calendar's search bound, raised for
    one calendar) holds that schedule from then on, said once; a new revision releases it."""
    _publish_three(ledger, clock, tmp_path / "ran.txt")
    place = compiling.BusinessDays.place

    def failing(days: compiling.BusinessDays, nominal: Any) -> Any:
        if date(2026, 12, 24) in days.calendar.closed:
            raise ComputeLimitError("the business calendar has no business day within 400 days after 2026-12-24")
        return place(days, nominal)

    monkeypatch.setattr(compiling.BusinessDays, "place", failing)
    engine = Engine(ledger, clock)
    reports = [engine.run_once(), engine.run_once()]
    for report in reports:
        assert list(report.held) == [CALENDAR]
        assert report.held[CALENDAR].startswith("revision 1 cannot be expanded: the business calendar has no")
    with ledger.read() as session:
        planned = {sid for (sid,) in session.execute(select(Occurrence.schedule_id).distinct())}
        said = session.scalars(select(Event.data).where(Event.kind == EventKind.SCHEDULE_UNREADABLE.value)).all()
    assert planned == {GOOD, PINNED}
    assert [d["revision"] for d in said] == [1]
    why = "held by the engines: revision 1: the business calendar has no business day within 400 days after "
    assert attention_queue(ledger, clock.now()).held_schedules == {
        CALENDAR: why + "2026-12-24; publish a corrected revision"
    }
    needs = person_needs(ledger, clock.now(), timedelta(minutes=5))
    assert [(n.kind, n.schedule_id) for n in needs if n.kind is NeedKind.HELD] == [(NeedKind.HELD, CALENDAR)]
    monkeypatch.setattr(compiling.BusinessDays, "place", place)
    with ledger.write() as session:
        publish(session, spec(dict(DAILY, scheduleId=CALENDAR, revision=2)), clock)
    assert engine.run_once().held == {}
    assert attention_queue(ledger, clock.now()).held_schedules == {}
