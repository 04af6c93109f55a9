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
    claimed <occ> <attempt>  a claim (and its attempt row) is committed (one line
                             each for the claims a pass makes together)
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

from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.engine import claim, promote, settle
from core.engine.context import Claim, Context
from core.engine.engine import Engine, EngineOptions, PassReport
from core.engine.runner import RunResult
from core.ledger.db import open_ledger
from core.time.formats import fmt_utc


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


def mark_stages(markers: Markers) -> None:
    """Wrap the stages this engine calls so that each says when it is done."""
    promote_stage, claim_stage, finish_stage = promote.promote, claim.claim, settle.finish
    together_stage = claim.claim_together

    def promoting(session: Session, now: datetime, report: PassReport, **hold: Any) -> None:
        # run_once materializes first, then promotes.
        markers.write(f"materialized {fmt_utc(now)}")
        promote_stage(session, now, report, **hold)

    def claiming(write: Any, ctx: Context, occurrence_id: str, report: PassReport, **seen: Any) -> Claim | None:
        made = claim_stage(write, ctx, occurrence_id, report, **seen)
        if made is not None:
            markers.write(f"claimed {made.occurrence_id} {made.attempt_id}")
        return made

    def finishing(
        write: Any, ctx: Context, held: Claim, result: RunResult, report: PassReport, **queue: Any
    ) -> Claim | None:
        # One transaction records the outcome and claims the next occurrence.
        following = finish_stage(write, ctx, held, result, report, **queue)
        markers.write(f"recorded {held.occurrence_id} {held.attempt_id}")
        if following is not None:
            markers.write(f"claimed {following.occurrence_id} {following.attempt_id}")
        return following

    def claiming_together(write: Any, ctx: Context, candidates: Any) -> tuple[dict[str, Claim], set[str]]:
        # A pass claims the first due occurrence of several schedules in one transaction.
        made, taken = together_stage(write, ctx, candidates)
        for held in made.values():
            markers.write(f"claimed {held.occurrence_id} {held.attempt_id}")
        return made, taken

    promote.promote, claim.claim, settle.finish = promoting, claiming, finishing
    claim.claim_together = claiming_together


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
    mark_stages(markers)
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
