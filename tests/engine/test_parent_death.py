"""A task's group leader dies with the thread that started it (Linux PR_SET_PDEATHSIG).

The kernel ties the signal to the forking *thread*: these tests start a child
from a short-lived thread, which is what the engine must never do while the
task runs (its workers wait for their task in the thread that started it).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import pytest

from core.engine.runner import PARENT_DEATH_SIGNAL, parent_death_hook

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")

SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]


def spawn_from_a_thread(*, tied: bool) -> subprocess.Popen[bytes]:
    started: list[subprocess.Popen[bytes]] = []

    def spawn() -> None:
        hook = parent_death_hook() if tied else None
        started.append(subprocess.Popen(SLEEP, start_new_session=True, preexec_fn=hook))  # the hook takes no locks

    thread = threading.Thread(target=spawn)
    thread.start()
    thread.join()
    return started[0]


def test_a_tied_child_gets_the_signal_when_its_parent_thread_ends() -> None:
    child = spawn_from_a_thread(tied=True)
    try:
        assert child.wait(timeout=30) == -PARENT_DEATH_SIGNAL
    finally:
        child.kill()
        child.wait()


def test_an_untied_child_outlives_its_parent_thread() -> None:
    child = spawn_from_a_thread(tied=False)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=0.5)  # bounded: had a signal come, it would have come at the thread's end
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()


def test_the_hook_exists_on_linux() -> None:
    assert parent_death_hook() is not None
