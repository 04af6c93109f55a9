"""What each engine runs now, as the window's Engines view reads it
(:func:`core.ledger.monitor_reads.engines_seen`): the occurrences starting or
running under a claim of that engine's process."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from core.clock import FixedClock
from core.engine.presence import STALE_AFTER, announce, retire
from core.engine.processes import ProcessIdentity
from core.ledger.db import Ledger
from core.ledger.engine_queries import RunningNow
from core.ledger.materialize import materialize
from core.ledger.models import Occurrence
from core.ledger.monitor_reads import engines_seen
from core.ledger.publish import publish
from core.ledger.states import EngineKind, OccurrenceState
from core.team.actor import Actor, os_user
from core.team.placement import Placement

from . import occurrences, spec

ME = os_user()
ALPHA = ProcessIdentity("alpha", 4100, None, None)
BETA = ProcessIdentity("beta", 4200, None, None)


def published(ledger: Ledger, clock: FixedClock) -> None:
    """The daily 02:30 New York schedule, runnable anywhere, with its next days materialized."""
    with ledger.write() as session:
        publish(session, spec(runsOn={"any": True}), clock, actor=Actor(ME, "alpha"))
        materialize(session, "daily-ops-summary", clock)


def claimed(ledger: Ledger, index: int, owner: str, state: OccurrenceState = OccurrenceState.RUNNING) -> str:
    """Mark the schedule's ``index``-th occurrence as claimed by ``owner`` (``host:pid:token``)."""
    with ledger.write() as session:
        occ = occurrences(session, "daily-ops-summary")[index]
        session.execute(
            update(Occurrence)
            .where(Occurrence.occurrence_id == occ.occurrence_id)
            .values(state=state, lease_owner=owner)
        )
        return occ.occurrence_id


def test_each_engine_shows_the_occurrences_its_process_claimed(ledger: Ledger, clock: FixedClock) -> None:
    published(ledger, clock)
    alpha = announce(ledger, clock, EngineKind.HEADLESS, process=ALPHA, placement=Placement.of(Actor(ME, "alpha")))
    beta = announce(ledger, clock, EngineKind.APP, process=BETA, placement=Placement.of(Actor(ME, "beta")))
    first = claimed(ledger, 0, "alpha:4100:1a2b3c4d")
    second = claimed(ledger, 1, "alpha:4100:1a2b3c4d", OccurrenceState.DISPATCHING)
    claimed(ledger, 2, "beta:4200:99999999", OccurrenceState.SUCCEEDED)  # finished: not running
    views = {v.engine_id: v for v in engines_seen(ledger, clock.now(), STALE_AFTER)}
    assert views[alpha].running == (
        RunningNow(first, "daily-ops-summary", "2026-03-02T02:30:00", OccurrenceState.RUNNING),
        RunningNow(second, "daily-ops-summary", "2026-03-03T02:30:00", OccurrenceState.DISPATCHING),
    )
    assert views[beta].running == ()


def test_a_restarted_engine_of_the_same_process_takes_its_running_occurrences(
    ledger: Ledger, clock: FixedClock
) -> None:
    published(ledger, clock)
    placement = Placement.of(Actor(ME, "alpha"))
    earlier = announce(ledger, clock, EngineKind.APP, process=ALPHA, placement=placement)
    retire(ledger, clock, earlier)
    clock.set(clock.now() + timedelta(seconds=10))
    later = announce(ledger, clock, EngineKind.APP, process=ALPHA, placement=placement)
    running = claimed(ledger, 0, "alpha:4100:0f0f0f0f")
    views = {v.engine_id: v for v in engines_seen(ledger, clock.now(), STALE_AFTER)}
    assert [r.occurrence_id for r in views[later].running] == [running]
    assert views[earlier].running == ()
