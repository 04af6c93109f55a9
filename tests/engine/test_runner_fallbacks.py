"""The runner as on a system without Linux's extras (macOS, the BSDs): no pidfd to notice the exit,
no /proc to tell a zombie from a live process. Forced here on Linux, and run with real processes:
a normal exit, more output than a pipe holds, a timeout that kills the whole group, a grandchild
that keeps the pipe open, a crash."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psutil
import pytest

from core.clock import FixedClock
from core.engine import runner, spawning
from core.engine.runner import KILL_GRACE_SECONDS, TaskIdentity, prepare, run_command
from core.engine.spawning import only_zombies
from tests.engine.task_scripts import MEGABYTE_ON_EACH_PIPE, ignoring_sigterm, leaving_a_grandchild

PY = sys.executable
CLOCK = FixedClock(datetime(2026, 3, 8, 7, 0, tzinfo=UTC))
WHO = TaskIdentity("s", 1, "occ-1", None, "2026-03-08T02:30:00", None, None, "att-1", 1)


@pytest.fixture(autouse=True)
def without_linux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No pidfd_open and no /proc, as far as the runner can tell."""
    monkeypatch.setattr(spawning, "open_pidfd", lambda pid: None)
    monkeypatch.setattr(spawning, "PROC_ROOT", tmp_path / "no-proc")


def run(script: str, timeout: float = 30.0) -> runner.RunResult:
    return run_command(prepare([PY, "-c", script], None, {}, WHO), timedelta(seconds=timeout), CLOCK)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_normal_exit() -> None:
    result = run("import sys; print('done'); print('note', file=sys.stderr); sys.exit(0)")
    assert (result.exit_status, result.error_class, result.signal) == (0, None, None)
    assert (result.stdout_tail, result.stderr_tail) == ("done\n", "note\n")


def test_more_output_than_a_pipe_buffer_on_both_pipes() -> None:
    """A megabyte on each pipe, interleaved: the loop must keep reading both, or the child blocks."""
    result = run(MEGABYTE_ON_EACH_PIPE, timeout=60)
    assert (result.exit_status, result.error_class) == (5, None)
    assert result.stdout_tail.endswith("END-OUT") and result.stderr_tail.endswith("END-ERR")
    assert "earlier bytes not kept" in result.stdout_tail


def test_a_timeout_kills_the_whole_group_even_what_ignores_sigterm(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = ignoring_sigterm(pidfile)
    result = run(script, timeout=1.0)
    assert (result.error_class, result.exit_status, result.signal) == ("timeout", None, signal.SIGKILL)
    assert result.stdout_tail == "started\n"
    assert not _running(int(pidfile.read_text()))


def test_a_timeout_of_a_group_that_goes_at_sigterm_does_not_wait_out_the_grace(tmp_path: Path) -> None:
    """Its members end at SIGTERM; a zombie left in the group must not count as alive for KILL_GRACE_SECONDS."""
    script = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )
    began = time.monotonic()
    result = run(script, timeout=1.0)
    took = time.monotonic() - began
    assert (result.error_class, result.signal) == ("timeout", signal.SIGTERM)
    assert took < 1.0 + KILL_GRACE_SECONDS * 0.75, f"the timeout took {took:.2f} s"


def test_a_grandchild_holding_the_pipe_is_not_waited_for(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = leaving_a_grandchild(pidfile)
    began = time.monotonic()
    result = run(script)
    took = time.monotonic() - began
    grandchild = int(pidfile.read_text())
    try:
        assert (result.exit_status, result.error_class) == (0, None)
        assert result.stdout_tail == "parent done\n"
        assert took < 10, f"waited {took:.2f} s for a pipe the grandchild holds"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(grandchild, signal.SIGKILL)


@pytest.mark.parametrize(
    ("script", "sig"),
    [
        pytest.param("import os; os.abort()", signal.SIGABRT, id="abort"),
        pytest.param("import ctypes; ctypes.string_at(0)", signal.SIGSEGV, id="segfault"),
    ],
)
def test_a_crash_is_a_death_by_signal(script: str, sig: int) -> None:
    result = run("import faulthandler; faulthandler.disable()\n" + script)
    assert (result.error_class, result.signal, result.exit_status) == ("signal", sig, None)
    assert result.outcome_lost


def test_only_zombies_without_proc_tells_a_live_group_from_a_dead_one() -> None:
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        assert not only_zombies(child.pid)
        child.kill()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: a zombie
        assert only_zombies(child.pid)
    finally:
        child.kill()
        child.wait()
