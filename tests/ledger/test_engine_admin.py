"""Fence, run now, backfill, and the Prometheus metrics, on both databases."""

from __future__ import annotations

import sys
import urllib.request
from typing import Any

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.engine.admin import AdminError, backfill, fence, run_now
from core.engine.engine import Engine, PassReport
from core.engine.metrics import serve
from core.ledger.db import Ledger
from core.ledger.models import Attempt, Event, LedgerMeta, Occurrence
from core.ledger.publish import pause, publish
from core.ledger.states import OccurrenceKind
from core.ledger.states import OccurrenceState as S

from . import by_nominal, spec, utc
from . import engine_stages as stages

PY = sys.executable
ECHO = {"argv": [PY, "-c", "import os; print(os.environ['SCHED_OCCURRENCE_ID'], os.environ['SCHED_BUSINESS_PERIOD'])"]}


def put(ledger: Ledger, clock: FixedClock, **overrides: Any) -> None:
    with ledger.write() as session:
        publish(session, spec(**overrides), clock)


def test_fence_voids_claims_of_the_old_epoch(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task={**ECHO, "effect": "idempotent"})
    engine = Engine(ledger, clock)
    engine.run_once()
    clock.set(utc("2026-03-02T07:30:10Z"))
    stages.promote(engine, PassReport())
    with ledger.read() as session:
        occ_id = by_nominal(session)[("2026-03-02T02:30:00", 0)].occurrence_id
    claim = stages.claim(engine, occ_id, PassReport())
    assert claim is not None and claim.epoch == 1
    assert fence(ledger, clock, note="host lost") == 2
    stages.execute(engine, claim, PassReport())  # the fenced worker's result is recorded but changes nothing
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        assert occ is not None and occ.state is S.DISPATCHING
        assert session.scalar(select(LedgerMeta.execution_epoch)) == 2
    fresh = Engine(ledger, clock)
    fresh.run_once()  # a new engine settles the lost claim (idempotent: retry after the backoff) ...
    clock.set(utc("2026-03-02T07:30:41Z"))
    fresh.run_once()  # ... and runs it again
    with ledger.read() as session:
        occ = session.get(Occurrence, occ_id)
        assert occ is not None and occ.state is S.SUCCEEDED
        runs = session.scalars(select(Attempt).order_by(Attempt.attempt_number)).all()
        assert [(a.attempt_number, a.execution_epoch, a.outcome) for a in runs] == [
            (1, 1, S.RETRY_WAIT),
            (2, 2, S.SUCCEEDED),
        ]
        kinds = session.scalars(select(Event.kind).order_by(Event.id)).all()
        assert "ledger.fenced" in kinds and "attempt.ignored" in kinds


def test_run_now_is_its_own_occurrence(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, task=ECHO)
    clock.set(utc("2026-03-01T15:00:00Z"))
    first = run_now(ledger, "daily-ops-summary", clock, note="test the mail")
    second = run_now(ledger, "daily-ops-summary", clock)
    assert first != second and first.startswith("occ-") and len(first) == 36
    Engine(ledger, clock).run_once()
    with ledger.read() as session:
        manual = session.scalars(select(Occurrence).where(Occurrence.kind == OccurrenceKind.MANUAL)).all()
        assert sorted(o.state.value for o in manual) == ["SUCCEEDED", "SUCCEEDED"]
        assert {o.nominal_local for o in manual} == {"2026-03-01T10:00:00"}
        assert all(o.logical_slot_id is None for o in manual)


def test_run_now_refuses_a_paused_schedule(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, task=ECHO)
    with ledger.write() as session:
        pause(session, "daily-ops-summary", clock, note="maintenance")
    with pytest.raises(AdminError, match="paused; resume it first"):
        run_now(ledger, "daily-ops-summary", clock)


def test_backfill_runs_what_never_ran_and_nothing_twice(ledger: Ledger, clock: FixedClock) -> None:
    put(
        ledger,
        clock,
        cutoverAt="2026-03-01T12:00:00Z",
        misfirePolicy="SKIP",
        businessPeriod="{nominal:%Y-%m-%d}",
        task=ECHO,
    )
    clock.set(utc("2026-03-04T07:30:10Z"))
    Engine(ledger, clock).run_once()  # 03-02 and 03-03 expire, 03-04 runs on time
    with ledger.read() as session:
        seen = {k[0][:10]: o.state for k, o in by_nominal(session).items()}
    assert [seen["2026-03-02"], seen["2026-03-03"], seen["2026-03-04"]] == [
        S.MISFIRE_EXPIRED,
        S.MISFIRE_EXPIRED,
        S.SUCCEEDED,
    ]
    clock.set(utc("2026-03-04T12:00:00Z"))
    result = backfill(ledger, "daily-ops-summary", utc("2026-02-27T00:00:00Z"), utc("2026-03-04T12:00:00Z"), clock)
    # Before the first cutover (Feb 27-Mar 1 07:30Z) the schedule governed nothing; 03-04 already ran.
    assert len(result.created) == 2
    assert [why for _, why in result.left] == ["SUCCEEDED: not run again"]
    Engine(ledger, clock).run_once()
    with ledger.read() as session:
        rows = session.scalars(
            select(Occurrence).where(Occurrence.kind == OccurrenceKind.BACKFILL).order_by(Occurrence.position_utc)
        ).all()
        assert [(o.nominal_local, o.state, o.business_period) for o in rows] == [
            ("2026-03-02T02:30:00", S.SUCCEEDED, "2026-03-02"),
            ("2026-03-03T02:30:00", S.SUCCEEDED, "2026-03-03"),
        ]
        outputs = [a.stdout_tail for a in session.scalars(select(Attempt).order_by(Attempt.started_at))]
        assert [o.split()[1] for o in outputs if o][-2:] == ["2026-03-02", "2026-03-03"]
    again = backfill(ledger, "daily-ops-summary", utc("2026-03-02T00:00:00Z"), utc("2026-03-04T00:00:00Z"), clock)
    assert again.created == ()
    assert [why.split(" as ")[0] for _, why in again.left] == ["already backfilled", "already backfilled"]


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        pytest.param("2026-03-02T00:00:00Z", "2026-03-09T00:00:00Z", "in the future", id="future_end"),
        pytest.param("2026-03-03T00:00:00Z", "2026-03-02T00:00:00Z", "before --to", id="reversed"),
    ],
)
def test_backfill_refuses_bad_ranges(ledger: Ledger, clock: FixedClock, start: str, end: str, message: str) -> None:
    put(ledger, clock, task=ECHO)
    clock.set(utc("2026-03-04T12:00:00Z"))
    with pytest.raises(AdminError, match=message):
        backfill(ledger, "daily-ops-summary", utc(start), utc(end), clock)


def test_metrics_are_read_from_the_ledger(ledger: Ledger, clock: FixedClock) -> None:
    killed = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    put(ledger, clock, cutoverAt="2026-03-01T12:00:00Z", task={"argv": [PY, "-c", killed]})
    clock.set(utc("2026-03-04T07:30:10Z"))
    Engine(ledger, clock).run_once()  # 03-02 expires, 03-03 is made up, 03-04 runs: both lose their outcome
    clock.set(utc("2026-03-04T08:30:10Z"))
    server, thread = serve(ledger, clock, 0)
    try:
        port = server.server_port
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    lines = {line.split(" ")[0]: line.split(" ")[1] for line in body.splitlines() if line and not line.startswith("#")}
    assert lines['tidemark_occurrences{state="UNKNOWN_EFFECT"}'] == "2.0"
    assert lines["tidemark_unknown_effects"] == "2.0"
    assert lines["tidemark_misfires_total"] == "1.0"
    assert lines['tidemark_attempts_total{outcome="UNKNOWN_EFFECT"}'] == "2.0"
    assert lines["tidemark_oldest_unresolved_age_seconds"] == "3600.0"
    assert lines["tidemark_due_to_start_delay_seconds_count"] == "2.0"
    assert lines['tidemark_materialization_lag_seconds{schedule="daily-ops-summary"}'] == "0.0"


def test_backfill_of_an_unmaterialized_range_never_runs_twice(ledger: Ledger, clock: FixedClock) -> None:
    """The range is materialized first: its occurrences run under their own ids, once."""
    put(ledger, clock, cutoverAt="2026-03-01T12:00:00Z", misfirePolicy="CATCH_UP_ALL", horizon="PT1H", task=ECHO)
    clock.set(utc("2026-03-04T12:00:00Z"))
    result = backfill(ledger, "daily-ops-summary", utc("2026-03-01T12:00:00Z"), utc("2026-03-04T00:00:00Z"), clock)
    assert (len(result.created), len(result.queued)) == (0, 2)
    clock.set(utc("2026-03-04T12:00:05Z"))
    Engine(ledger, clock).run_once()
    with ledger.read() as session:
        ran = [a.stdout_tail.split()[0] for a in session.scalars(select(Attempt)) if a.stdout_tail]
        assert len(ran) == len(set(ran)) == 3  # 03-02 and 03-03 by backfill, 03-04 caught up
        assert session.scalars(select(Occurrence).where(Occurrence.kind == OccurrenceKind.BACKFILL)).all() == []
