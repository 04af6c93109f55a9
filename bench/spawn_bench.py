"""What starting one task costs, from a bare spawn to the engine's whole run, against
``subprocess.run(["true"])`` measured in the same rounds.

One task at a time (``true``, interleaved rounds, the median round kept), wall time
and this thread's CPU per task:

* ``subprocess.run(["true"])``: the baseline of ``engine_bench.py`` (no pipes, no
  session of its own, nothing read);
* ``os.posix_spawnp`` and ``os.waitpid``: the least a spawn costs from Python;
* the runner's work done by hand: ``posix_spawnp`` into a session of its own, stdin
  on /dev/null, both outputs on pipes read to their end, the exit waited for on a
  pidfd, with none of the runner's Python (what any runner with output tails and a
  group to kill must do);
* ``run_command``: the runner;
* ``run_claim``: the engine's run stage on a real engine's context (the runner, the
  task's start time, the tether's two lines, the lease keeper's note, the output
  keeper), with no ledger write: the ledger's part is ``engine_bench.py``'s.

Then the top of the minute without a ledger: ``--burst`` tasks (default 126) from
``--threads`` threads (default 4), through ``subprocess.run``, ``run_command`` and
``run_claim``, each burst timed whole (the floor under ``scale_bench.py --mix
minute``'s longest pass).

Run by hand: ``.venv/bin/python bench/spawn_bench.py [--count N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchkit import interval_spec

from core.clock import FixedClock
from core.engine import run as run_stage
from core.engine.context import Claim, PassReport
from core.engine.engine import Engine, EngineOptions
from core.engine.runner import TaskIdentity, prepare, run_command
from core.ledger import open_ledger
from core.spec.facts import RunFacts

CLOCK = FixedClock(datetime(2026, 3, 2, tzinfo=UTC))
TIMEOUT = timedelta(minutes=1)
ENV = {k: v for k, v in os.environ.items() if k not in ("SCHEDULER_DB_URL", "PGPASSWORD")}
DEVNULL = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)


def direct() -> None:
    subprocess.run(["true"], check=True)


def bare() -> None:
    pid = os.posix_spawnp("true", ["true"], ENV)
    os.waitpid(pid, 0)


def by_hand() -> None:
    """The runner's work with none of its Python: a session, /dev/null in, two pipes read out, a pidfd."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    actions = [(os.POSIX_SPAWN_DUP2, DEVNULL, 0), (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
    pid = os.posix_spawnp("true", ["true"], ENV, file_actions=actions, setsid=True)
    os.close(out_w)
    os.close(err_w)
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    for fd in (out_r, err_r, pidfd):
        poller.register(fd, select.POLLIN)
    left = {out_r, err_r, pidfd}
    while left:
        for fd, _ in poller.poll():
            if fd == pidfd:
                os.waitpid(pid, 0)
            elif os.read(fd, 65536):
                continue
            poller.unregister(fd)
            left.discard(fd)
    for fd in (out_r, err_r, pidfd):
        os.close(fd)


def runner() -> None:
    command = prepare(["true"], None, {}, _identity(), ENV)
    assert run_command(command, TIMEOUT, CLOCK).succeeded


def _identity() -> TaskIdentity:
    return TaskIdentity("bench", 1, "occ", "slot", "2026-03-02T00:00:00", None, None, str(uuid.uuid4()), 1)


class EngineRun:
    """``run.run_claim`` on the context of a real engine (its ledger is never written here)."""

    def __init__(self, folder: Path) -> None:
        self.ledger = open_ledger(f"sqlite:///{folder / 'ledger.db'}", CLOCK)
        self.engine = Engine(self.ledger, CLOCK, EngineOptions(max_workers=4))
        self.spec = interval_spec("bench", 1, ["true"])
        self.engine.context.base_env = ENV

    def __call__(self) -> None:
        identity = _identity()
        command = prepare(["true"], None, {}, identity, ENV)
        task = self.spec.task
        claim = Claim("occ", "bench", 1, 1, identity.attempt_id, 1, task, RunFacts.of(self.spec), identity, command)
        assert run_stage.run_claim(self.engine.context, claim, PassReport()).succeeded

    def close(self) -> None:
        self.ledger.close()


def per_task(count: int, rounds: int, ways: dict[str, Callable[[], None]]) -> dict[str, tuple[float, float]]:
    """Median over ``rounds`` interleaved rounds of ``count`` calls each: (wall, CPU) seconds per call."""
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, way in ways.items():
            wall, cpu = time.perf_counter(), time.thread_time()
            for _ in range(count):
                way()
            seen[name].append(((time.perf_counter() - wall) / count, (time.thread_time() - cpu) / count))
    return {name: (statistics.median(w for w, _ in s), statistics.median(c for _, c in s)) for name, s in seen.items()}


def burst(size: int, threads: int, rounds: int, ways: dict[str, Callable[[], None]]) -> dict[str, list[float]]:
    """Seconds for ``size`` calls spread over ``threads`` threads, each way ``rounds`` times, interleaved."""
    seen: dict[str, list[float]] = {name: [] for name in ways}
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(rounds):
            for name, way in ways.items():
                start = time.perf_counter()
                for future in [pool.submit(way) for _ in range(size)]:
                    future.result()
                seen[name].append(time.perf_counter() - start)
    return seen


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=300, help="tasks per round and way (default 300)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds, the median kept (default 5)")
    parser.add_argument("--burst", type=int, default=126, help="tasks at the top of the minute (default 126)")
    parser.add_argument("--threads", type=int, default=4, help="threads they are spread over (default 4)")
    args = parser.parse_args(argv)
    print(f"`true`, python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="tidemark-spawn-bench-") as tmp:
        engine_run = EngineRun(Path(tmp))
        try:
            engine_run()  # the tether's watcher and the lease keeper start once, outside the rounds
            ways = {
                "subprocess.run(['true'])": direct,
                "os.posix_spawnp + waitpid": bare,
                "the runner's work by hand": by_hand,
                "run_command (the runner)": runner,
                "run_claim (the engine's run)": engine_run,
            }
            per = per_task(args.count, args.rounds, ways)
            base_wall = per["subprocess.run(['true'])"][0]
            print(f"one at a time, {args.count} tasks x {args.rounds} rounds, median round:")
            for name, (wall, cpu) in per.items():
                print(
                    f"  {name:<30} {wall * 1e6:7.0f} us wall ({base_wall / wall:4.2f}x the rate)"
                    f"  {cpu * 1e6:5.0f} us CPU"
                )
            three = {
                k: ways[k]
                for k in ("subprocess.run(['true'])", "run_command (the runner)", "run_claim (the engine's run)")
            }
            bursts = burst(args.burst, args.threads, args.rounds, three)
            print(f"{args.burst} tasks from {args.threads} threads, no ledger, {args.rounds} rounds:")
            for name, times in bursts.items():
                print(f"  {name:<30} median {statistics.median(times) * 1e3:6.0f} ms  best {min(times) * 1e3:6.0f} ms")
        finally:
            engine_run.close()


if __name__ == "__main__":
    main()
