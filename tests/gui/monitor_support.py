"""Builders shared by the monitor's tests: schedules published into the ``ctx``
ledger, and the engine run on the context's fixed clock."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from gui_support import NOW

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.ledger.publish import publish
from core.ledger.queries import OccurrenceFilter, list_occurrences
from core.ledger.states import OccurrenceState
from core.spec.validation import parse_spec
from scheduler_gui.context import AppContext

#: First occurrence of the hourly test schedules: five minutes after the fixture's NOW.
FIRST = "2027-03-01T12:05:00Z"


def interval_spec(schedule_id: str, task: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An hourly interval schedule at :05 in New York whose first run is at 12:05Z."""
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "America/New_York",
        "kind": "interval",
        "every": "PT1H",
        "anchor": "2027-01-01T00:05:00Z",
        "horizon": "P1D",
        "task": task,
        **extra,
    }


def put(ctx: AppContext, mapping: dict[str, Any]) -> None:
    with ctx.ledger.write() as session:
        publish(session, parse_spec(mapping), ctx.clock)


def engine(ctx: AppContext) -> Engine:
    return Engine(ctx.ledger, ctx.clock, EngineOptions(max_workers=2))


def run_at(ctx: AppContext, minutes_after_noon: float, eng: Engine | None = None, *, wait: bool = True) -> Engine:
    """Set the clock to 12:00Z + ``minutes_after_noon`` on the fixture's day and run one engine pass."""
    clock = ctx.clock
    assert isinstance(clock, FixedClock)
    clock.set(NOW + timedelta(minutes=minutes_after_noon))
    eng = eng or engine(ctx)
    eng.run_once(wait=wait)
    return eng


def ids_in(ctx: AppContext, schedule_id: str, *states: OccurrenceState) -> list[str]:
    """Occurrence ids of a schedule in these states, by position."""
    with ctx.ledger.read() as session:
        page = list_occurrences(
            session, OccurrenceFilter(schedule_id=schedule_id, states=frozenset(states)), limit=10_000
        )
    return [r.occurrence_id for r in page.rows]


FAILING_TASK = {
    "argv": ["/bin/sh", "-c", "echo 'copying files'; echo 'backup target unreachable' >&2; exit 3"],
    "effect": "idempotent",
}
HANGING_TASK = {"argv": ["/bin/sleep", "60"], "timeout": "PT1S", "effect": "non_idempotent"}
NO_RETRY = {"maxAttempts": 1, "initialBackoff": "PT30S"}
