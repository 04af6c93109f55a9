"""A ledger with a few simulated days of history, for screenshots, tests and the benchmark.

:func:`populate_demo_ledger` publishes the demo schedules and runs the real
engine on the context's fixed clock, moving the clock from one due time to the
next, so that the ledger holds what a person would see after a few days:
succeeded runs, a task that fails (exit status 3, its message on stderr), a
task that hangs and is killed by its timeout (a non-idempotent effect, so it
lands in UNKNOWN_EFFECT), and an outage whose missed runs are expired by the
misfire policy.

The simulated clock stands still between passes and runs while a pass runs
(:class:`_PassClock`): an attempt lasts what its task really took, so the hanging
task's attempt reads "timeout after 1 s", not "after 0 s".

The two broken demo schedules (``nightly-backup``, ``inbox-sync``) run every
ten minutes in ``resources/demo/``; here they run a few times a day and the
hanging one times out after one second, so that simulating days takes seconds.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from core.clock import FixedClock
from core.desktop.bundled import demo_dir
from core.engine.engine import Engine, EngineOptions
from core.errors import UserError
from core.ledger.monitor_reads import next_due_at
from core.ledger.publish import publish_new
from core.spec.files import load_text
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec
from scheduler_gui.context import AppContext

DEMO_DIR = demo_dir()

#: Schedules of the demo ledger: their file (if present) and what the simulation changes.
_PLAN: dict[str, dict[str, Any]] = {
    "daily-ops-summary": {},
    "hourly-fallback": {},
    "nightly-backup": {"every": "PT6H"},
    "inbox-sync": {"every": "PT12H", "task": {"timeout": "PT1S"}},
}

#: Used when a demo file is missing: the same behaviour, written out.
_INLINE: dict[str, dict[str, Any]] = {
    "nightly-backup": {
        "schema": "scheduleSpec.v1",
        "scheduleId": "nightly-backup",
        "revision": 1,
        "title": "Backup (always fails)",
        "timeZone": "Europe/Paris",
        "kind": "interval",
        "every": "PT6H",
        "anchor": "2026-01-01T00:05:00Z",
        "misfirePolicy": "SKIP",
        "retry": {"maxAttempts": 2, "initialBackoff": "PT30S", "multiplier": 2.0, "maxBackoff": "PT1M"},
        "task": {
            "argv": ["/bin/sh", "-c", "echo 'backup target unreachable' >&2; exit 3"],
            "timeout": "PT1M",
            "effect": "idempotent",
        },
    },
    "inbox-sync": {
        "schema": "scheduleSpec.v1",
        "scheduleId": "inbox-sync",
        "revision": 1,
        "title": "Inbox sync (always hangs)",
        "timeZone": "America/Sao_Paulo",
        "kind": "interval",
        "every": "PT12H",
        "anchor": "2026-01-01T00:00:00Z",
        "misfirePolicy": "SKIP",
        "task": {"argv": ["/bin/sleep", "3600"], "timeout": "PT1S", "effect": "non_idempotent"},
    },
}

#: Seconds each pass starts after the due time it was woken for (varied, for the delay chart).
_DELAYS = (2, 5, 1, 14, 3, 8, 41, 4, 2, 6, 19, 3)
#: Simulation passes at most (a safety bound, far above what a few days need).
_MAX_PASSES = 5000


class _PassClock:
    """The engine's clock in the simulation: the fixed clock's instant at the start of a pass,
    plus the real time gone by since then, so that each attempt lasts what its task took."""

    def __init__(self, clock: FixedClock) -> None:
        self._clock = clock
        self._began = time.monotonic()

    def start_pass(self, at: datetime) -> None:
        self._clock.set(at)
        self._began = time.monotonic()

    def now(self) -> datetime:
        return self._clock.now() + timedelta(seconds=time.monotonic() - self._began)


def _next_second(instant: datetime) -> datetime:
    """``instant`` rounded up to a whole second (the simulation wakes on whole seconds)."""
    whole = instant.replace(microsecond=0)
    return whole if whole == instant else whole + timedelta(seconds=1)


def _merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in changes.items():
        out[key] = _merge(out.get(key) or {}, value) if isinstance(value, dict) else value
    return out


def demo_specs(directory: Path = DEMO_DIR) -> list[ScheduleSpec]:
    """The demo ledger's schedules, as the simulation runs them."""
    specs = []
    for name, changes in _PLAN.items():
        path = directory / f"{name}.yaml"
        if path.is_file():
            mapping = load_text(path.read_text(encoding="utf-8"), str(path))
        elif name in _INLINE:
            mapping = _INLINE[name]
        else:
            continue
        specs.append(parse_spec(_merge(mapping, changes)))
    return specs


def populate_demo_ledger(ctx: AppContext, *, days: int = 2, outage: bool = True) -> None:
    """Publish the demo schedules into ``ctx.ledger`` and simulate ``days`` days of the engine.

    ``ctx.clock`` must be a :class:`~core.clock.FixedClock`; it is left at the
    end of the simulation. With ``outage``, the engine is "off" for five hours
    half-way through, and the misfire policies decide what was missed.
    """
    clock = ctx.clock
    if not isinstance(clock, FixedClock):
        raise TypeError("the demo ledger is simulated on a FixedClock")
    ledger = ctx.ledger
    seeded = publish_new(ledger, [(spec, None) for spec in demo_specs()], clock, check_task=False)
    if seeded.skipped:
        raise UserError("the demo ledger was refused: " + "; ".join(seeded.skipped))
    running = _PassClock(clock)
    engine = Engine(ledger, running, EngineOptions(max_workers=4, lease=timedelta(minutes=10)))
    end = clock.now() + timedelta(days=days)
    outage_at = clock.now() + timedelta(days=days) / 2 if outage else None
    running.start_pass(clock.now())
    engine.run_once()
    for number in range(_MAX_PASSES):
        due = next_due_at(ledger)
        if due is None:
            break
        wake = _next_second(max(due, running.now())) + timedelta(seconds=_DELAYS[number % len(_DELAYS)])
        if outage_at is not None and wake >= outage_at:
            wake = outage_at + timedelta(hours=5)
            outage_at = None
        if wake >= end:
            break
        running.start_pass(wake)
        engine.run_once()
    clock.set(end)  # between two passes: what comes due next is still ahead
