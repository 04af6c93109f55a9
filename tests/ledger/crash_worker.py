"""An engine process for the crash test (``test_crash.py``), meant to be killed.

Run as a script: it opens the ledger, then runs engine passes on a simulated
clock (``--start``, advanced by ``--step`` seconds after each pass) until
``--passes`` are done or someone kills it with SIGKILL. It never sleeps for
simulated time.

It appends progress markers to ``--markers`` (unbuffered, so a killed process
leaves every marker it wrote) for the parent to aim its kills and to tell
afterwards where each one landed::

    pass <clock>             a pass begins (materialization comes first)
    materialized <clock>     materialization of that pass is committed
    claimed <occ> <attempt>  a claim (and its attempt row) is committed
    recorded <occ> <attempt> the attempt's outcome is committed (with the next
                             claim, if any, whose marker follows)
    done                     every pass ran; the process exits 0
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timedelta
from typing import Any

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions, PassReport, _Claim
from core.engine.runner import RunResult
from core.ledger.db import open_ledger
from core.timefmt import fmt_utc


class Markers:
    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, text: str) -> None:
        os.write(self.fd, f"{os.getpid()} {text}\n".encode())


class MarkedEngine(Engine):
    """The real engine, saying where it is."""

    markers: Markers

    def run_once(self, *, wait: bool = True) -> PassReport:
        self.markers.write(f"pass {fmt_utc(self.clock.now())}")
        return super().run_once(wait=wait)

    def _promote(self, report: PassReport) -> None:
        # run_once materializes first, then promotes.
        self.markers.write(f"materialized {fmt_utc(self.clock.now())}")
        super()._promote(report)

    def _claim(self, occurrence_id: str, report: PassReport, **seen: Any) -> _Claim | None:
        claim = super()._claim(occurrence_id, report, **seen)
        if claim is not None:
            self.markers.write(f"claimed {claim.occurrence_id} {claim.attempt_id}")
        return claim

    def _finish(self, claim: _Claim, result: RunResult, report: PassReport, **queue: Any) -> _Claim | None:
        # One transaction records the outcome and claims the next occurrence.
        following = super()._finish(claim, result, report, **queue)
        self.markers.write(f"recorded {claim.occurrence_id} {claim.attempt_id}")
        if following is not None:
            self.markers.write(f"claimed {following.occurrence_id} {following.attempt_id}")
        return following


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", required=True)
    parser.add_argument("--start", required=True, help="the simulated clock of the first pass (ISO, aware)")
    parser.add_argument("--step", type=float, required=True, help="simulated seconds between passes")
    parser.add_argument("--passes", type=int, required=True)
    parser.add_argument("--lease", type=float, required=True, help="the engine's lease, simulated seconds")
    parser.add_argument("--markers", required=True)
    args = parser.parse_args(argv)
    clock = FixedClock(datetime.fromisoformat(args.start.replace("Z", "+00:00")))
    markers = Markers(args.markers)
    ledger = open_ledger(args.db, clock)
    engine = MarkedEngine(ledger, clock, EngineOptions(lease=timedelta(seconds=args.lease), max_workers=4))
    engine.markers = markers
    try:
        for _ in range(args.passes):
            engine.run_once(wait=True)
            clock.advance(timedelta(seconds=args.step))
    finally:
        ledger.close()
    markers.write("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
