"""Two Ctrl-C to ``schedctl engine run``: the first stops claiming, the second ends
the running tasks' process groups, records their attempts by invariant 5, and
the engine exits at once. A real engine process on a SQLite ledger, and the
engine's interrupt itself on SQLite and PostgreSQL.

The task blocks on opening a FIFO nobody writes to (not on a timer), after its
child (same process group) does the same and it has told the test, through
another FIFO, both their pids."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select as select_rows

from core.clock import SystemClock
from core.engine.admin import run_now
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger, open_ledger
from core.ledger.models import Attempt, Occurrence
from core.ledger.publish import publish

from . import spec

#: Only a guard against a hang: every wait below ends on an event long before.
GUARD_SECONDS = 60.0

TASK = """
import os, subprocess, sys
ready, block = sys.argv[1], sys.argv[2]
child = subprocess.Popen([sys.executable, "-c", "import sys; open(sys.argv[1]).read()", block])
with open(ready, "w") as f:
    f.write(f"{os.getpid()} {child.pid}\\n")
open(block).read()
"""


def read_until(fd: int, wanted: bytes, seen: bytearray) -> bytes:
    """Read ``fd`` into ``seen`` until it holds ``wanted``; bounded by the guard."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + GUARD_SECONDS
    while wanted not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"never saw {wanted!r} in {bytes(seen)!r}"
        if poller.poll(int(left * 1000)):
            chunk = os.read(fd, 4096)
            assert chunk or wanted in seen, f"closed before {wanted!r}: {bytes(seen)!r}"
            seen += chunk
    return bytes(seen)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    ("task", "retry", "expected"),
    [
        pytest.param({"effect": "idempotent"}, {"maxAttempts": 3}, "RETRY_WAIT", id="idempotent_retries"),
        pytest.param({"effect": "idempotent"}, {"maxAttempts": 1}, "FAILED", id="idempotent_attempts_used"),
        pytest.param({"effect": "non_idempotent"}, {"maxAttempts": 3}, "UNKNOWN_EFFECT", id="non_idempotent"),
        pytest.param(
            {"effect": "non_idempotent", "verify": [sys.executable, "-c", "raise SystemExit(1)"]},
            {"maxAttempts": 3},
            "RETRY_WAIT",
            id="non_idempotent_verify_says_not_happened",
        ),
    ],
)
def test_a_second_ctrl_c_ends_running_tasks_and_exits(
    tmp_path: Path, task: dict[str, Any], retry: dict[str, Any], expected: str
) -> None:
    ready, block = tmp_path / "ready", tmp_path / "block"
    os.mkfifo(ready)
    os.mkfifo(block)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    clock = SystemClock()
    argv = [sys.executable, "-c", TASK, str(ready), str(block)]
    with open_ledger(url, clock) as ledger:
        with ledger.write() as session:
            # Nothing scheduled comes due for years: only the manual run runs.
            publish(session, spec(task={"argv": argv, **task}, retry=retry, cutoverAt="2099-01-01T00:00:00Z"), clock)
        occurrence_id = run_now(ledger, "daily-ops-summary", clock)
    reader = os.open(ready, os.O_RDONLY | os.O_NONBLOCK)
    engine = subprocess.Popen(
        [sys.executable, "-m", "core.cli", "engine", "run", "--db", url, "--poll", "0.2", "--no-notify"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert engine.stdout is not None and engine.stderr is not None
    try:
        pids = [int(p) for p in read_until(reader, b"\n", bytearray()).split()]
        assert all(alive(p) for p in pids)
        engine.send_signal(signal.SIGINT)
        read_until(engine.stdout.fileno(), b"again", bytearray())  # the first was seen: now the second
        assert engine.poll() is None and all(alive(p) for p in pids)  # the first one waits for the task
        engine.send_signal(signal.SIGINT)
        status = engine.wait(timeout=GUARD_SECONDS)
        said = engine.stderr.read()
    finally:
        os.close(reader)
        if engine.poll() is None:
            engine.kill()
            engine.wait()
        engine.stdout.close()
        engine.stderr.close()
        with contextlib.suppress(OSError):  # whatever still waits on it (only if the test failed) goes
            os.close(os.open(block, os.O_WRONLY | os.O_NONBLOCK))
    text = said.decode()
    assert status == 1, text
    assert text.splitlines() == ["schedctl engine run: interrupted: ending the running tasks' process groups"], text
    assert not any(alive(p) for p in pids), f"{pids} outlived the engine"
    with open_ledger(url, clock) as ledger, ledger.read() as session:
        occ = session.get(Occurrence, occurrence_id)
        [attempt] = session.scalars(select_rows(Attempt).where(Attempt.occurrence_id == occurrence_id)).all()
    assert occ is not None and occ.state.value == expected, occ.reason if occ else None
    assert (attempt.error_class, attempt.exit_status) == ("signal", None)
    assert attempt.finished_at is not None and attempt.outcome is occ.state


def start_blocked_task(ledger: Ledger, tmp_path: Path) -> tuple[Engine, str, int, Path]:
    """An engine running the blocking task: the engine, the occurrence, the FIFO its
    pids come through (open) and the FIFO it blocks on."""
    ready, block = tmp_path / "ready", tmp_path / "block"
    os.mkfifo(ready)
    os.mkfifo(block)
    clock = SystemClock()
    argv = [sys.executable, "-c", TASK, str(ready), str(block)]
    with ledger.write() as session:
        publish(session, spec(task={"argv": argv, "effect": "idempotent"}, cutoverAt="2099-01-01T00:00:00Z"), clock)
    occurrence_id = run_now(ledger, "daily-ops-summary", clock)
    reader = os.open(ready, os.O_RDONLY | os.O_NONBLOCK)
    engine = Engine(ledger, clock, EngineOptions())
    engine.run_once(wait=False)
    return engine, occurrence_id, reader, block


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_stop_without_kill_lets_the_running_task_end_and_records_it(ledger: Ledger, tmp_path: Path) -> None:
    """``Engine.stop()``: nothing more is claimed, the running task is left to end by itself."""
    engine, occurrence_id, reader, block = start_blocked_task(ledger, tmp_path)
    try:
        pids = [int(p) for p in read_until(reader, b"\n", bytearray()).split()]
        engine.stop()
        assert not engine.wait_idle(timeout=0.5)
        assert all(alive(p) for p in pids)
    finally:
        os.close(reader)
        with contextlib.suppress(OSError):
            os.close(os.open(block, os.O_WRONLY | os.O_NONBLOCK))
    assert engine.wait_idle(timeout=GUARD_SECONDS)
    with ledger.read() as session:
        occ = session.get(Occurrence, occurrence_id)
    assert occ is not None and occ.state.value == "SUCCEEDED"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    "stop",
    [
        pytest.param(lambda engine: engine.stop(kill=True), id="stop_kill"),
        pytest.param(lambda engine: engine.interrupt(), id="interrupt"),
    ],
)
def test_stop_with_kill_ends_the_running_task_and_records_it(
    ledger: Ledger, tmp_path: Path, stop: Callable[[Engine], None]
) -> None:
    """``Engine.stop(kill=True)`` (and ``interrupt``, the same), on SQLite and PostgreSQL."""
    engine, occurrence_id, reader, block = start_blocked_task(ledger, tmp_path)
    try:
        pids = [int(p) for p in read_until(reader, b"\n", bytearray()).split()]
        stop(engine)
        assert engine.wait_idle(timeout=GUARD_SECONDS)
    finally:
        os.close(reader)
        with contextlib.suppress(OSError):
            os.close(os.open(block, os.O_WRONLY | os.O_NONBLOCK))
    assert not any(alive(p) for p in pids)
    with ledger.read() as session:
        occ = session.get(Occurrence, occurrence_id)
        [attempt] = session.scalars(select_rows(Attempt).where(Attempt.occurrence_id == occurrence_id)).all()
    assert occ is not None and occ.state.value == "RETRY_WAIT"
    assert (attempt.error_class, attempt.outcome) == ("signal", occ.state)
