"""The marker a window leaves while it runs, and the crash log (scheduler_gui.workspace.session_guard):
the next start finds a window that died, never one that quit or still runs; a real
segmentation fault in a child process leaves its stacks in the log."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from gui_support import NOW

from core.clock import FixedClock
from core.engine.processes import identify
from scheduler_gui.workspace.session_guard import BEAT_EVERY, SessionGuard

#: Linux never hands out a pid above 2**22: no process has this one.
FREE_PID = 2**22 + 1


def guard(folder: Path, clock: FixedClock, **process: object) -> SessionGuard:
    return SessionGuard(folder, clock, replace(identify(), **process))  # type: ignore[arg-type]


def test_a_clean_quit_leaves_nothing_to_report(tmp_path: Path, clock: FixedClock) -> None:
    first = guard(tmp_path, clock, pid=FREE_PID)
    assert first.begin() == []
    first.end()
    assert guard(tmp_path, clock).begin() == []


def test_a_window_that_died_is_reported_once_with_when_it_was_last_seen(tmp_path: Path, clock: FixedClock) -> None:
    dead = guard(tmp_path, clock, pid=FREE_PID)
    dead.begin()
    clock.advance(timedelta(minutes=7))
    dead.beat()
    clock.advance(timedelta(seconds=20))  # it dies here, without end()
    clock.advance(timedelta(hours=1))
    [found] = guard(tmp_path, clock).begin()
    assert (found.pid, found.started_at, found.last_seen) == (FREE_PID, NOW, NOW + timedelta(minutes=7))
    assert found.died_by == NOW + timedelta(minutes=7) + BEAT_EVERY
    assert guard(tmp_path, clock).begin() == [], "reported once"


@pytest.mark.parametrize(
    ("process", "reported"),
    [
        pytest.param({}, False, id="still_running_second_window"),
        pytest.param({"started": 12.0}, True, id="pid_reused_by_another_process"),
        pytest.param({"boot_id": "an-earlier-boot"}, True, id="before_a_reboot"),
        pytest.param({"host": "other-desk", "pid": FREE_PID}, False, id="another_machine_sharing_the_folder"),
    ],
)
def test_only_markers_of_gone_processes_are_reported(
    tmp_path: Path, clock: FixedClock, process: dict[str, object], reported: bool
) -> None:
    other = guard(tmp_path, clock, **process)  # this test process, as recorded (or not quite)
    other.begin()
    other.marker.rename(tmp_path / "sessions" / "elsewhere.json")  # its own file, not this process's
    found = guard(tmp_path, clock, pid=FREE_PID - 2).begin()
    assert bool(found) is reported
    assert (tmp_path / "sessions" / "elsewhere.json").exists() is not reported


def test_an_unreadable_marker_is_dropped(tmp_path: Path, clock: FixedClock) -> None:
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "1.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "sessions" / "2.json").write_text(json.dumps({"host": "x"}), encoding="utf-8")
    assert guard(tmp_path, clock, pid=FREE_PID).begin() == []
    assert sorted(p.name for p in (tmp_path / "sessions").iterdir()) == [f"{FREE_PID}.json"]


CRASHING = textwrap.dedent(
    """
    import faulthandler, sys, threading
    from datetime import UTC, datetime
    from pathlib import Path
    from core.clock import FixedClock
    from scheduler_gui.workspace.session_guard import SessionGuard

    guard = SessionGuard(Path(sys.argv[1]), FixedClock(datetime(2027, 3, 1, 12, 0, tzinfo=UTC)))
    guard.begin()
    guard.record_crashes()
    print("recording", flush=True)

    def worker_that_crashes():
        faulthandler._sigsegv()

    thread = threading.Thread(target=worker_that_crashes, name="engine-like-worker")
    thread.start()
    thread.join()
    """
)


def test_a_segmentation_fault_leaves_every_threads_stack_in_the_crash_log(tmp_path: Path, clock: FixedClock) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CRASHING, str(tmp_path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode < 0 and "recording" in done.stdout, done.stderr
    [found] = guard(tmp_path, clock).begin()
    text = found.crash_log_text()
    assert text is not None
    assert "Fatal Python error: Segmentation fault" in text
    assert "worker_that_crashes" in text, "the crashing thread's stack"
    assert "most recent call first" in text and text.count("Thread 0x") + text.count("Current thread 0x") >= 2


def test_the_crash_log_of_a_session_that_did_not_crash_is_empty(tmp_path: Path, clock: FixedClock) -> None:
    dead = guard(tmp_path, clock, pid=FREE_PID)
    dead.begin()
    dead.crash_log.write_text(
        f"\n=== Tidemark window, pid {FREE_PID}, started 2027-03-01T12:00:00Z ===\n", encoding="utf-8"
    )
    [found] = guard(tmp_path, clock).begin()
    assert found.crash_log_text() is None
