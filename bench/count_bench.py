"""A rule with COUNT in the engine's pass: ``FREQ=MINUTELY;COUNT=1000000000`` from 2020.

One schedule (UTC, horizon PT1H, CATCH_UP_BOUNDED with maxCatchUp 1, a no-op
task: the runner is replaced in-process by one that succeeds at once) is
published and given a first engine pass. Then the process forgets what it kept
(compiled revisions and expansions, as a restarted engine or a catalogue
larger than the caches would), the clock moves on, and one more pass runs.

Measured: that second pass, after one minute (one new row) and after a
six-hour outage (a stretch recorded as expired), with the times dateutil
produced. Baseline, in the same run: the same passes of the same rule without
COUNT (``FREQ=MINUTELY``), which resumes near its cursor by arithmetic. The
target is a ratio near 1.

Run by hand: ``.venv/bin/python bench/count_bench.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchkit import instant_success
from dateutil import rrule as du

from core.clock import FixedClock
from core.engine import run as run_stage
from core.engine.engine import Engine, EngineOptions
from core.ledger import open_ledger, publish
from core.ledger.compiled import forget_compiled
from core.ledger.materialize import forget_expansions
from core.spec.validation import parse_spec

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
WALKED = [0]
_ITER = du.rrule._iter


def _counting(self: du.rrule) -> Iterator[datetime]:
    for when in _ITER(self):
        WALKED[0] += 1
        yield when


def _second_pass(rule: str, outage: timedelta, start: str = "2020-01-01T00:00:00") -> tuple[float, int]:
    """Seconds and dateutil times of the pass after ``outage``, in a process that forgot its caches."""
    clock = FixedClock(NOW)
    with tempfile.TemporaryDirectory() as tmp:
        ledger = open_ledger(f"sqlite:///{tmp}/ledger.db")
        spec = parse_spec(
            {
                "schema": "scheduleSpec.v1",
                "scheduleId": "counted",
                "revision": 1,
                "timeZone": "UTC",
                "rule": rule,
                "start": start,
                "gapPolicy": "SKIP",
                "foldPolicy": "FIRST_ONLY",
                "horizon": "PT1H",
                "misfirePolicy": "CATCH_UP_BOUNDED",
                "maxCatchUp": 1,
                "task": {"argv": ["/bin/true"]},
            }
        )
        with ledger.write() as session:
            publish(session, spec, clock)
        Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()
        forget_expansions()
        forget_compiled()
        clock.advance(outage)
        WALKED[0] = 0
        started = time.perf_counter()
        Engine(ledger, clock, EngineOptions(max_workers=1)).run_once()
        return time.perf_counter() - started, WALKED[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the rule from a week ago: checks the bench works")
    args = parser.parse_args(argv)
    start = f"{NOW - timedelta(days=7):%Y-%m-%dT%H:%M:%S}" if args.quick else "2020-01-01T00:00:00"
    with mock.patch.object(du.rrule, "_iter", _counting), mock.patch.object(run_stage, "run_command", instant_success):
        print(f"{'second pass':<28}{'COUNT':>16}{'no COUNT':>16}{'ratio':>8}")
        for name, outage in (("one minute later", timedelta(minutes=1)), ("after 6 h", timedelta(hours=6))):
            counted, walked = _second_pass("FREQ=MINUTELY;COUNT=1000000000", outage, start)
            plain, plain_walked = _second_pass("FREQ=MINUTELY", outage, start)
            print(
                f"{name:<28}{counted * 1000:>9.0f} ms{walked:>10,} x"
                f"  {plain * 1000:>6.0f} ms{plain_walked:>8,} x{counted / plain:>7.1f}x"
            )


if __name__ == "__main__":
    main()
