"""Beside other engines, a worker's claim of a schedule whose row another transaction holds
(PostgreSQL: another engine running its backlog) passes it over at once, with no wait and no
careful claim; the next dispatch reads it again. An engine alone waits for the holder (its own
fill, a pause) and claims. And beside other engines, an engine promotes and claims its own
share's schedules first (docs/decisions.md, "A claim passes over a schedule another engine holds;
an engine promotes and claims its own share first")."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.engine import claim as claim_stage
from core.engine import promote as promote_stage
from core.engine.context import PassReport
from core.engine.engine import Engine, EngineOptions
from core.engine.presence import announce
from core.engine.share import Share
from core.ledger.db import Ledger, lock_schedules
from core.ledger.models import Occurrence
from core.ledger.publish import publish
from core.ledger.states import EngineKind, OccurrenceState
from core.spec.validation import parse_spec

from . import utc
from .engine_stages import gate, promote
from .test_backlog_elsewhere import counted_writes
from .test_dispatch_cost import EVERY_MINUTE
from .test_dropped_connections import backlog
from .test_engines_side_by_side import _waiting_on_a_lock

_S = OccurrenceState


def _postgresql_only(ledger: Ledger) -> None:
    if ledger.dialect != "postgresql":
        pytest.skip("SQLite has one writer at a time: no row is held beside a claim")


def _held_claim(ledger: Ledger, clock: FixedClock, *, beside_others: bool) -> tuple[Engine, str, Any, list[int]]:
    """A backlog's engine (alone, or as it sees itself beside another), the occurrence due, and a
    claim of it to run on a thread, with the write transactions it opens counted."""
    _postgresql_only(ledger)
    engine = backlog(ledger, clock, 1)
    if beside_others:
        engine.context.share = Share(engine_id="a", engines=("a", "b"))
    promote(engine, PassReport())
    with ledger.read() as session:
        (_, occurrence_id, _), *_ = claim_stage.claimable(session, clock.now(), schedule_id="backlog")
    seen = gate(engine, "backlog")
    opened, write = counted_writes(ledger)
    result: dict[str, Any] = {}

    def claim() -> None:
        result["claim"] = claim_stage.claim(write, engine.context, occurrence_id, PassReport(), gate=seen, state=_S.DUE)

    return engine, occurrence_id, (claim, result), opened


def test_a_claim_passes_over_a_schedule_another_transaction_holds(ledger: Ledger, clock: FixedClock) -> None:
    """Beside another engine, while another transaction holds the schedule's row, the claim
    returns None in one write transaction without waiting for it, and sets the schedule aside;
    the occurrence stays DUE and the engine's next pass runs it."""
    engine, occurrence_id, (claim, result), opened = _held_claim(ledger, clock, beside_others=True)
    with ledger.write(serialize=False) as holder:
        assert lock_schedules(holder, ["backlog"]) == {"backlog"}
        worker = threading.Thread(target=claim)
        worker.start()
        worker.join(10)
        waited = worker.is_alive()
    worker.join()
    assert not waited, "the claim waited for the transaction holding the schedule"
    assert result == {"claim": None}
    assert opened == [1]
    assert engine.context.elsewhere == {"backlog"}
    with ledger.read() as session:
        assert session.scalar(select(Occurrence.state).where(Occurrence.occurrence_id == occurrence_id)) is _S.DUE
    assert engine.run_once().outcomes == {"SUCCEEDED": 1}


def test_an_engine_alone_waits_for_the_holder_and_claims(ledger: Ledger, clock: FixedClock) -> None:
    """Alone on the ledger, the claim waits for the transaction holding the schedule's row (its
    own fill, a pause), then claims: passed over, the run would wait for the next pass."""
    engine, occurrence_id, (claim, result), opened = _held_claim(ledger, clock, beside_others=False)
    with ledger.write(serialize=False) as holder:
        assert lock_schedules(holder, ["backlog"]) == {"backlog"}
        worker = threading.Thread(target=claim)
        worker.start()
        _waiting_on_a_lock(ledger)
    worker.join()
    assert result["claim"] is not None and result["claim"].occurrence_id == occurrence_id
    assert opened == [1]
    assert engine.context.elsewhere == set()
    state = select(Occurrence.state).where(Occurrence.occurrence_id == occurrence_id)
    with ledger.read() as session:
        assert session.scalar(state) is _S.DISPATCHING


def _eight_schedules_due(ledger: Ledger, clock: FixedClock) -> None:
    """Eight schedules with a run due each, any engine may run them."""
    start = utc("2026-03-02T00:00:00Z")
    clock.set(start)
    with ledger.write() as session:
        for i in range(8):
            publish(session, parse_spec({**EVERY_MINUTE, "scheduleId": f"share-{i}", "runsOn": {"any": True}}), clock)
    clock.set(start + timedelta(seconds=30))


def test_a_dispatch_beside_other_engines_claims_its_own_share_first(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two engines announced and eight schedules due, four in each engine's share: the four
    claims a dispatch makes together (four workers) are of the engine's own share, not of the
    first four in its hash order of all eight (which the other engine would be claiming too)."""
    _postgresql_only(ledger)
    _eight_schedules_due(ledger, clock)
    ids = [announce(ledger, clock, EngineKind.HEADLESS) for _ in range(2)]
    engine = Engine(ledger, clock, EngineOptions(max_workers=4), engine_id=ids[0])
    claimed: list[str] = []
    real = claim_stage.claim_together

    def recorded(write: Any, ctx: Any, candidates: Any) -> Any:
        claimed.extend(seen.schedule_id for seen, _, _ in candidates)
        return real(write, ctx, candidates)

    monkeypatch.setattr(claim_stage, "claim_together", recorded)
    assert engine.run_once().outcomes == {"SUCCEEDED": 8}
    own = {f"share-{i}" for i in range(8) if engine.context.share.owns(f"share-{i}")}
    assert len(own) == 4
    assert set(claimed[:4]) == own


def test_an_engine_beside_others_promotes_its_own_share_first_in_a_batch_of_its_own(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two engines announced and eight schedules due: the engine's first promotion batch holds
    its own share's four schedules and no other, so that its dispatch lists them all even while
    the other engine is promoting the rest."""
    _postgresql_only(ledger)
    _eight_schedules_due(ledger, clock)
    ids = [announce(ledger, clock, EngineKind.HEADLESS) for _ in range(2)]
    engine = Engine(ledger, clock, EngineOptions(max_workers=4), engine_id=ids[0])
    batches: list[set[str]] = []
    real = promote_stage.promote

    def recorded(session: Any, now: Any, report: Any, **kwargs: Any) -> Any:
        batches.append(set(kwargs["schedules"]))
        return real(session, now, report, **kwargs)

    monkeypatch.setattr(promote_stage, "promote", recorded)
    assert engine.run_once().outcomes == {"SUCCEEDED": 8}
    own = {f"share-{i}" for i in range(8) if engine.context.share.owns(f"share-{i}")}
    assert len(own) == 4
    assert batches[:2] == [own, {f"share-{i}" for i in range(8)} - own]
