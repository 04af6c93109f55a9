"""Tasks die with their engine: the watcher ends the groups its engine still held.

An "engine" process (a Python script using the real :data:`TETHER`) starts
three sleeping tasks in their own groups: one it holds, one it held and
released, one it holds under a start time that is not the task's (as if the
pid had been reused). Killed with SIGKILL, its watcher ends the first only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from core.engine import processes

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")

ENGINE = """
import subprocess, sys, time
from core.engine.processes import start_time
from core.engine.tether import TETHER

def task():
    sleep = [sys.executable, "-c", "import time; time.sleep(120)"]
    return subprocess.Popen(sleep, stdout=subprocess.DEVNULL, start_new_session=True)

held, released, reused = task(), task(), task()
TETHER.hold(held.pid, start_time(held.pid))
TETHER.hold(released.pid, start_time(released.pid))
TETHER.release(released.pid)
TETHER.hold(reused.pid, start_time(reused.pid) - 100)
print(held.pid, released.pid, reused.pid, TETHER.watcher_pid(), flush=True)
time.sleep(120)
"""
#: Real seconds to wait for a process to end.
REACH = 30.0


def state(pid: int, started: float | None) -> processes.Liveness:
    return processes.liveness(processes.ProcessIdentity(processes.this_host(), pid, started, processes.boot_id()))


def wait_gone(pid: int, started: float | None) -> None:
    deadline = time.monotonic() + REACH
    while state(pid, started) is not processes.Liveness.GONE:
        assert time.monotonic() < deadline, f"{pid} still runs"
        time.sleep(0.02)


def test_the_groups_a_killed_engine_held_are_ended() -> None:
    engine = subprocess.Popen([sys.executable, "-c", ENGINE], stdout=subprocess.PIPE, text=True)
    assert engine.stdout is not None
    held, released, reused, watcher = (int(word) for word in engine.stdout.readline().split())
    tasks = {pid: processes.start_time(pid) for pid in (held, released, reused)}
    watcher_started = processes.start_time(watcher)
    try:
        engine.send_signal(signal.SIGKILL)
        engine.communicate(timeout=REACH)
        wait_gone(held, tasks[held])
        wait_gone(watcher, watcher_started)  # it has done all it will do
        assert state(released, tasks[released]) is processes.Liveness.ALIVE
        assert state(reused, tasks[reused]) is processes.Liveness.ALIVE
    finally:
        for pid in tasks:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def test_the_watcher_takes_lines_whatever_its_reads_cut_them_into() -> None:
    """Lines come in batches of one read each (64 KiB at most): 100 KiB of holds and releases,
    cut wherever the reads fall, leave held exactly the group held last and never released."""
    from core.engine.tether import WATCHER

    def sleeper() -> subprocess.Popen[bytes]:
        sleep = [sys.executable, "-c", "import time; time.sleep(120)"]
        return subprocess.Popen(sleep, stdout=subprocess.DEVNULL, start_new_session=True)

    held, released = sleeper(), sleeper()
    tasks = {pid: processes.start_time(pid) for pid in (held.pid, released.pid)}
    churn = b"".join(f"+ {4_000_000 + i} 1.5\n- {4_000_000 + i}\n".encode() for i in range(5_000))
    lines = (
        f"+ {released.pid} {tasks[released.pid]!r}\n".encode()
        + churn
        + f"+ {held.pid} {tasks[held.pid]!r}\n- {released.pid}\n".encode()
    )
    assert len(lines) > 100_000
    watcher = subprocess.Popen([sys.executable, "-I", "-c", WATCHER], stdin=subprocess.PIPE)
    try:
        assert watcher.stdin is not None
        watcher.stdin.write(lines)
        watcher.stdin.close()  # as its engine dies
        wait_gone(held.pid, tasks[held.pid])
        assert watcher.wait(timeout=REACH) == 0
        assert state(released.pid, tasks[released.pid]) is processes.Liveness.ALIVE
    finally:
        for task in (held, released):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(task.pid, signal.SIGKILL)
            task.wait()
