"""The engine's stages, called one at a time as a given engine would call them.

Tests that stop an engine between two stages (a claim made, its run not yet
recorded) use these; each is a call to a stage's public function with the
engine's context.
"""

from __future__ import annotations

from typing import Any

from core.clock import FixedClock
from core.engine import claim as claim_stage
from core.engine import plan, settle
from core.engine import promote as promote_stage
from core.engine.context import Claim, PassReport
from core.engine.engine import Engine
from core.engine.statements import Gate
from core.ledger.db import Ledger
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState

from . import by_nominal, spec, utc

#: A task that succeeds at once and may run again.
TRUE = {"argv": ["/bin/true"], "effect": "idempotent"}


def materialize(engine: Engine, report: PassReport) -> None:
    """The plan stage's materialization, as a pass runs it."""
    plan.materialize(
        engine.ledger,
        engine.clock,
        report,
        fill_rows=engine.options.fill_rows_per_pass,
        hold=engine.context.held_schedules,
    )


def promote(engine: Engine, report: PassReport) -> None:
    """The promote stage, in one write transaction."""
    with engine.ledger.write() as session:
        promote_stage.promote(session, engine.clock.now(), report, hold=engine.context.held_schedules)


def gate(engine: Engine, schedule_id: str) -> Gate | None:
    """The schedule's gate as the engine reads it before claiming."""
    with engine.ledger.read() as session:
        return claim_stage.gate(session, schedule_id)


def claim(
    engine: Engine,
    occurrence_id: str,
    report: PassReport,
    *,
    gate: Gate | None = None,
    state: OccurrenceState | None = None,
) -> Claim | None:
    """A claim by ``engine``, in its own write transaction."""
    return claim_stage.claim(engine.ledger.write, engine.context, occurrence_id, report, gate=gate, state=state)


def execute(engine: Engine, claim: Claim, report: PassReport) -> None:
    """Run a claim of ``engine`` and record how it ended."""
    settle.execute(engine.ledger, engine.context, claim, report)


def due(ledger: Ledger, clock: FixedClock, **overrides: Any) -> tuple[Engine, str]:
    """The 2026-03-02 02:30 New York run, promoted to DUE, and an engine that saw it
    (the daily spec with ``overrides``; its task succeeds at once)."""
    with ledger.write() as session:
        publish(session, spec(**{"cutoverAt": "2026-03-02T00:00:00Z", "task": TRUE, **overrides}), clock)
    engine = Engine(ledger, clock)
    engine.run_once()
    clock.set(utc("2026-03-02T07:30:10Z"))
    promote(engine, PassReport())
    with ledger.read() as session:
        occ_id = by_nominal(session)[("2026-03-02T02:30:00", 0)].occurrence_id
    return engine, occ_id
