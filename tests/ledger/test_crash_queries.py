"""What an engine that died left behind (core.ledger.crash_queries): the attempts one
engine process started in its session and did not finish itself, with what recovery
made of them. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from core.clock import FixedClock
from core.ledger.crash_queries import LeftAttempt, attempts_left_by
from core.ledger.db import Ledger
from core.ledger.materialize import materialize
from core.ledger.models import Attempt
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState as S

from . import NOW, occurrences, spec

HOURLY = {"scheduleId": "hourly", "rule": "FREQ=HOURLY;BYMINUTE=0", "timeZone": "Europe/Paris", "horizon": "P1D"}
#: The crashed window's session: started at SINCE, last seen at UNTIL.
SINCE = NOW - timedelta(hours=2)
UNTIL = NOW
HOST, PID = "desk-1", 4242
MIN = timedelta(minutes=1)

#: (id, worker host, worker pid, started, finished, error class, outcome, left behind?)
CASES = [
    ("lost_and_settled", HOST, PID, NOW - timedelta(minutes=5), NOW + timedelta(minutes=3), "lost", S.RETRY_WAIT, True),
    ("not_settled_yet", HOST, PID, NOW - timedelta(minutes=4), None, None, None, True),
    ("started_as_the_session_began", HOST, PID, SINCE, None, None, None, True),
    (
        "finished_by_itself",
        HOST,
        PID,
        NOW - timedelta(minutes=30),
        NOW - timedelta(minutes=29),
        None,
        S.SUCCEEDED,
        False,
    ),
    (
        "timed_out_before_the_crash",
        HOST,
        PID,
        NOW - timedelta(hours=1),
        NOW - timedelta(minutes=50),
        "timeout",
        S.FAILED,
        False,
    ),
    ("another_engine_here", HOST, 999, NOW - timedelta(minutes=5), None, None, None, False),
    ("same_pid_elsewhere", "ops-box", PID, NOW - timedelta(minutes=5), None, None, None, False),
    ("pid_reused_before_the_session", HOST, PID, SINCE - timedelta(seconds=1), None, None, None, False),
    ("started_after_it_was_last_seen", HOST, PID, UNTIL + timedelta(seconds=1), None, None, None, False),
]


def _attempt(occurrence_id: str, case: tuple) -> Attempt:  # type: ignore[type-arg]
    name, host, pid, started, finished, error_class, outcome, _ = case
    return Attempt(
        attempt_id=f"att-{name}",
        occurrence_id=occurrence_id,
        attempt_number=1,
        claim_generation=1,
        execution_epoch=1,
        worker_host=host,
        worker_pid=pid,
        started_at=started,
        finished_at=finished,
        exit_status=0 if outcome is S.SUCCEEDED else None,
        error_class=error_class,
        input_digest="0" * 64,
        outcome=outcome,
    )


def _left(ledger: Ledger, since: datetime = SINCE, until: datetime = UNTIL) -> list[LeftAttempt]:
    with ledger.read() as session:
        return attempts_left_by(session, HOST, PID, since, until)


@pytest.fixture
def ids(ledger: Ledger, clock: FixedClock) -> dict[str, str]:
    """One occurrence of the hourly schedule per case, with the case's attempt; case id -> occurrence id."""
    clock.set(SINCE - timedelta(hours=1))
    with ledger.write() as session:
        publish(session, spec(**HOURLY), clock)
        materialize(session, "hourly", clock)
    with ledger.write() as session:
        out = {}
        for occ, case in zip(occurrences(session, "hourly"), CASES, strict=False):
            session.add(_attempt(occ.occurrence_id, case))
            out[case[0]] = occ.occurrence_id
    assert len(out) == len(CASES)
    return out


def test_only_the_attempts_the_crashed_engine_left_unfinished(ledger: Ledger, ids: dict[str, str]) -> None:
    found = _left(ledger)
    assert [a.attempt.attempt_id for a in found] == [
        "att-started_as_the_session_began",
        "att-lost_and_settled",
        "att-not_settled_yet",
    ], "oldest first, and nothing the engine finished itself, nothing of another process"
    settled, unsettled = found[1], found[2]
    assert (settled.schedule_id, settled.attempt.occurrence_id) == ("hourly", ids["lost_and_settled"])
    assert settled.recovered and not unsettled.recovered
    assert settled.occurrence_state is S.PLANNED, "the occurrence's state now, read from its row"
    assert settled.describe() == "hourly: attempt 1, started 2026-03-01T11:55:00Z: lost, settled as RETRY_WAIT"
    assert unsettled.describe() == (
        "hourly: attempt 1, started 2026-03-01T11:56:00Z: not settled yet "
        "(the engine settles it once its claim lapses; the occurrence is PLANNED)"
    )


def test_nothing_left_by_a_session_that_started_nothing(ledger: Ledger) -> None:
    assert _left(ledger) == []


@pytest.mark.parametrize("limit", [1, 2])
def test_the_list_is_bounded(ledger: Ledger, ids: dict[str, str], limit: int) -> None:
    with ledger.read() as session:
        assert len(attempts_left_by(session, HOST, PID, SINCE, UNTIL, limit=limit)) == limit
