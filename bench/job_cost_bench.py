"""One engine's own cost per job: CPU time and round trips, on SQLite or PostgreSQL.

640 due occurrences (32 interval schedules of 20, as ``engine_bench.py --pg``) run by one
engine's passes (``max_workers`` 4) with the runner replaced by one that succeeds at once
and the materialization sweep left out (the rows are written beforehand): what is left is
promotion, the claims, the outcomes and their events. Prints the process's CPU time per job
(all threads), that of its PostgreSQL backends when the server runs on this machine, and
jobs per second. With ``--profile`` the workers run one after the other in
the main thread under cProfile, and the functions that took the most CPU are printed.

Run by hand: ``.venv/bin/python bench/job_cost_bench.py [--pg URL] [--jobs N] [--profile] [--quick]``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import team_bench
from benchkit import instant_success, scratch_database, server_cpu

from core.engine import engine as engine_module
from core.engine import plan
from core.engine import run as run_stage
from core.ledger import open_ledger

SCHEDULES = 32


class InTurn:
    """A thread pool that runs each job at once in the caller's thread (for the profiler)."""

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        pass

    def submit(self, call: Any, *args: Any) -> Future[Any]:
        done: Future[Any] = Future()
        done.set_result(call(*args))
        return done

    def shutdown(self, wait: bool = True) -> None:
        pass


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pg", help="a PostgreSQL server's URL: run on a new database there")
    parser.add_argument("--jobs", type=int, default=640)
    parser.add_argument("--profile", action="store_true", help="workers in turn, under cProfile")
    parser.add_argument("--quick", action="store_true", help=f"{SCHEDULES * 2} jobs (a check that it runs)")
    args = parser.parse_args(argv)
    if args.quick:
        args.jobs = SCHEDULES * 2
    if args.jobs < SCHEDULES:
        parser.error(f"--jobs must be at least {SCHEDULES} (one a schedule)")
    per_schedule = args.jobs // SCHEDULES
    backend = "postgresql" if args.pg else "sqlite"
    with tempfile.TemporaryDirectory() as tmp, scratch_database(backend, args.pg or "", Path(tmp)) as url:
        team_bench.prepare(url, SCHEDULES, per_schedule, ["true"])
        clock = team_bench.fixed_clock(per_schedule)
        with open_ledger(url, clock) as ledger:
            engine = engine_module.Engine(ledger, clock, engine_module.EngineOptions(max_workers=4))
            nothing = plan.Sweep(clock.now(), [], {}, set())
            patches = [
                mock.patch.object(run_stage, "run_command", instant_success),
                mock.patch.object(plan, "select_sweep", lambda *_a, **_k: nothing),
            ]
            if args.profile:
                patches.append(mock.patch.object(engine_module, "ThreadPoolExecutor", InTurn))
            for patch in patches:
                patch.start()
            profile = cProfile.Profile(time.process_time)  # CPU, not the wait for the server
            server = server_cpu(url)
            jobs, wall, cpu = 0, time.perf_counter(), time.process_time()
            if args.profile:
                profile.enable()
            while (started := engine.run_once().started) > 0:
                jobs += started
            profile.disable()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            after = server_cpu(url)
    served = "" if after is None else f", the server's {(after - (server or 0.0)) / jobs * 1e3:.2f} ms"
    print(
        f"{backend}: {jobs} jobs in {wall:.2f} s, {cpu / jobs * 1e3:.2f} ms of CPU per job{served}, "
        f"{jobs / wall:,.0f} jobs/s"
    )
    if args.profile:
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
