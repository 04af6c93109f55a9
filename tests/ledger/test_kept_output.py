"""What a task printed before its engine was killed is kept: the engine process
(``crash_worker.py``) is killed with SIGKILL while its task runs, and the next
engine settles the attempt as lost with the task's output on it, on SQLite and
PostgreSQL. Without it the attempt said nothing and the window's card said "It
printed nothing" of a task that had printed "starting transfer"."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.engine.output_keep import KEEP_EVERY_SECONDS, OutputKeeper, kept_path, read_kept
from core.ledger.db import open_ledger
from core.ledger.models import Attempt
from core.ledger.publish import publish
from core.spec.validation import parse_spec
from core.time.formats import fmt_utc

from . import utc

PY = sys.executable
WORKER = str(Path(__file__).with_name("crash_worker.py"))
START = utc("2026-03-01T12:05:00Z")
LEASE = timedelta(minutes=5)
#: Prints a line, then keeps running until its engine is killed (it dies with it).
TASK = "import time; print('starting transfer', flush=True); print('oops', flush=True, file=__import__('sys').stderr); time.sleep(60)"  # noqa: E501
REACH = 30.0


def _spec() -> dict[str, object]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": "transfer",
        "revision": 1,
        "timeZone": "UTC",
        "kind": "interval",
        "every": "PT1H",
        "anchor": "2026-01-01T00:05:00Z",
        "horizon": "P1D",
        "task": {"argv": [PY, "-c", TASK], "timeout": "PT5M", "effect": "non_idempotent"},
    }


def _poll(test, what: str, proc: subprocess.Popen[bytes] | None = None) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + REACH
    while time.monotonic() < deadline:
        if test():
            return
        if proc is not None and proc.poll() is not None and not test():
            pytest.fail(f"the worker ended before {what}")
        time.sleep(0.01)
    pytest.fail(f"not within {REACH}s: {what}")


def test_a_killed_engines_task_output_reaches_the_lost_attempt(ledger_url: str, tmp_path: Path) -> None:
    clock = FixedClock(START)
    with open_ledger(ledger_url, clock) as ledger, ledger.write() as session:
        publish(session, parse_spec(_spec()), clock)
    markers = tmp_path / "markers.txt"
    argv = [PY, WORKER, "--db", ledger_url, "--start", fmt_utc(START), "--step", "60", "--passes", "1"]
    argv += ["--lease", str(LEASE.total_seconds()), "--markers", str(markers)]
    with (tmp_path / "worker.log").open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:

        def claimed() -> list[str]:
            lines = markers.read_text().split("\n") if markers.exists() else []
            return [line.split()[3] for line in lines if line.split()[1:2] == ["claimed"]]

        _poll(lambda: bool(claimed()), "a claim", proc)
        attempt_id = claimed()[0]
        _poll(lambda: read_kept(attempt_id) == ("starting transfer\n", "oops\n"), "the kept output", proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # The next engine, once the dead one's lease is over, settles the attempt as lost, with what it printed.
    clock.set(START + LEASE + timedelta(minutes=1))
    with open_ledger(ledger_url, clock) as ledger:
        _poll(
            lambda: (
                Engine(ledger, clock, EngineOptions(lease=LEASE)).run_once(wait=True) and _finished(ledger, attempt_id)
            ),
            "the recovery",
        )
        with ledger.read() as session:
            attempt = session.get(Attempt, attempt_id)
            assert attempt is not None
            assert (attempt.error_class, attempt.stdout_tail, attempt.stderr_tail) == (
                "lost",
                "starting transfer\n",
                "oops\n",
            )


def _finished(ledger, attempt_id: str) -> bool:  # type: ignore[no-untyped-def]
    with ledger.read() as session:
        return session.scalar(select(Attempt.finished_at).where(Attempt.attempt_id == attempt_id)) is not None


def test_output_is_written_at_once_then_at_most_every_fifth_of_a_second(tmp_path: Path) -> None:
    keeper = OutputKeeper(kept_path("att-1", tmp_path))
    keeper.keep("a\n", "", now=100.0)
    keeper.keep("a\nb\n", "", now=100.0 + KEEP_EVERY_SECONDS / 2)  # too soon: not written
    assert read_kept("att-1", tmp_path) == ("a\n", "")
    keeper.keep("a\nb\nc\n", "x\n", now=100.0 + KEEP_EVERY_SECONDS)
    assert read_kept("att-1", tmp_path) == ("a\nb\nc\n", "x\n")
    keeper.forget()
    assert read_kept("att-1", tmp_path) is None
