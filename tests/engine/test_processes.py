"""Process identity: a pid counts as the recorded process only with its start time and boot."""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.engine import processes
from core.engine.processes import Liveness, ProcessIdentity, identify, liveness, this_host


def test_this_process_is_alive() -> None:
    me = identify()
    assert me.started is not None
    assert liveness(me) is Liveness.ALIVE


def test_an_ended_and_reaped_process_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    recorded = identify(child.pid)
    child.wait()
    assert liveness(recorded) is Liveness.GONE


def test_an_unreaped_child_counts_as_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    recorded = identify(child.pid)
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, but still a zombie
        assert liveness(recorded) is Liveness.GONE
    finally:
        child.wait()


@pytest.mark.parametrize("shift", [5.0, -5.0, 3600.0])
def test_a_reused_pid_with_another_start_time_is_gone(shift: float) -> None:
    me = identify()
    assert me.started is not None
    assert liveness(dataclasses.replace(me, started=me.started + shift)) is Liveness.GONE


def test_another_boot_is_gone() -> None:
    me = identify()
    if me.boot_id is None:
        pytest.skip("this platform has no boot id")
    assert liveness(dataclasses.replace(me, boot_id="00000000-0000-0000-0000-000000000000")) is Liveness.GONE


def test_another_host_cannot_be_judged() -> None:
    me = identify()
    assert liveness(dataclasses.replace(me, host=this_host() + "-elsewhere")) is Liveness.UNKNOWN


def test_a_live_pid_without_a_recorded_start_time_is_unknown() -> None:
    me = identify()
    assert liveness(ProcessIdentity(me.host, me.pid, None, me.boot_id)) is Liveness.UNKNOWN


@pytest.fixture
def without_boot_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A system without /proc (macOS, the BSDs): no boot id to read."""
    monkeypatch.setattr(processes, "BOOT_ID_FILE", tmp_path / "no-proc" / "boot_id")


@pytest.mark.usefixtures("without_boot_id")
def test_without_a_boot_id_the_start_time_still_tells_processes_apart() -> None:
    me = identify()
    assert me.boot_id is None and me.started is not None
    assert liveness(me) is Liveness.ALIVE
    assert liveness(dataclasses.replace(me, started=me.started - 3600)) is Liveness.GONE  # the pid was reused
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    recorded = identify(child.pid)
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        assert liveness(recorded) is Liveness.GONE  # a zombie
    finally:
        child.wait()
    assert liveness(recorded) is Liveness.GONE  # reaped


@pytest.mark.usefixtures("without_boot_id")
def test_a_record_with_a_boot_id_is_judged_by_its_start_time_where_there_is_none() -> None:
    """Recorded on a host that had one (the ledger was copied, or /proc is not mounted now)."""
    me = dataclasses.replace(identify(), boot_id="6f1c2a4e-0000-4000-8000-000000000000")
    assert liveness(me) is Liveness.ALIVE


# --- start times read from /proc, as psutil reads them ----------------------------------------


def _zombie() -> subprocess.Popen[bytes]:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped
    return child


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


@pytest.mark.parametrize(
    "which",
    [
        pytest.param("this", id="this_process"),
        pytest.param("init", id="pid_1"),
        pytest.param("child", id="a_running_child"),
        pytest.param("zombie", id="a_zombie_child"),
    ],
)
def test_a_start_time_is_psutils_to_the_bit(which: str) -> None:
    """The engine records a task's start time; recovery and the tether's watcher compare it with psutil's."""
    child = {"child": _sleeper, "zombie": _zombie}.get(which, lambda: None)()
    pid = {"this": os.getpid(), "init": 1}.get(which) or (child.pid if child is not None else 0)
    try:
        assert processes.start_time(pid) == psutil.Process(pid).create_time()
    finally:
        if child is not None:
            child.kill()
            child.wait()


def test_a_reaped_process_has_no_start_time() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert processes.start_time(child.pid) is None


def test_without_proc_psutil_is_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "PROC_ROOT", tmp_path / "no-proc")
    monkeypatch.setattr(processes, "boot_time", processes.BootTime())
    asked: list[int] = []
    real = psutil.Process

    def process(pid: int) -> psutil.Process:
        asked.append(pid)
        return real(pid)

    monkeypatch.setattr(processes.psutil, "Process", process)
    assert processes.start_time(os.getpid()) == real(os.getpid()).create_time()
    assert asked == [os.getpid()]


class CountedReads:
    """/proc read for real, each path counted."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def __call__(self, path: str) -> bytes:
        self.paths.append(path)
        return processes.read_file(path)


#: Half-way between two whole seconds.
OFFSET = 1_796_605_780.5


@pytest.mark.parametrize(
    ("offsets", "reads"),
    [
        pytest.param([OFFSET, OFFSET, OFFSET + 0.001], 1, id="clock_steady_one_read"),
        pytest.param([OFFSET, OFFSET + 0.25, OFFSET + 0.25], 2, id="clock_set_read_again"),
        pytest.param([OFFSET, OFFSET - 0.02, OFFSET - 0.02], 2, id="clock_set_back_read_again"),
        pytest.param([OFFSET, None, None], 3, id="offset_unsure_read_each_time"),
        pytest.param([OFFSET + 0.495] * 3, 3, id="near_a_whole_second_read_each_time"),
    ],
)
def test_the_boot_time_is_read_again_when_the_wall_clock_moves(offsets: list[float | None], reads: int) -> None:
    """/proc/stat is read once while the wall clock less the time since boot stays put, and
    again when it moves, cannot be measured, or lies near a whole second (the kernel's btime
    is whole seconds: the next reading might round the other way)."""
    read = CountedReads()
    given = iter(offsets)
    boot_time = processes.BootTime(offset=lambda: next(given), read=read)
    for _ in offsets:
        assert boot_time() == psutil.boot_time()
    assert read.paths == [f"{processes.PROC_ROOT}/stat"] * reads


def test_the_real_offset_is_measured_within_a_millisecond_or_not_at_all() -> None:
    offset = processes.boot_offset()
    assert offset is None or abs(offset - psutil.boot_time()) < 1.0


BOOTED = 1_772_000_000.0


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        pytest.param(5000.0, 5000.0, BOOTED + 5000.0, id="same_reading"),
        pytest.param(5000.004, 5000.02, BOOTED + 5000.0, id="cut_to_the_tick_as_proc_cuts_it"),
        pytest.param(5000.0, 5000.04, BOOTED + 5000.0, id="a_span_within_the_widest"),
        pytest.param(5000.0, 5000.0 + processes.SPAWN_SPAN + 0.001, None, id="too_wide_a_span_says_nothing"),
        pytest.param(5000.0, 4999.9, None, id="a_clock_going_back_says_nothing"),
        pytest.param(None, 5000.0, None, id="no_boot_clock"),
    ],
)
def test_a_start_time_from_the_clock_around_a_spawn(
    monkeypatch: pytest.MonkeyPatch, before: float | None, after: float | None, expected: float | None
) -> None:
    monkeypatch.setattr(processes, "boot_time", lambda: BOOTED)
    assert processes.start_between(before, after) == expected


def test_no_start_time_from_the_clock_without_a_boot_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "boot_time", lambda: None)
    assert processes.start_between(5000.0, 5000.001) is None


@given(
    fork=st.floats(min_value=0.0, max_value=10_000_000.0, allow_nan=False),
    lead=st.floats(min_value=0.0, max_value=0.02),
    lag=st.floats(min_value=0.0, max_value=0.02),
)
def test_the_clock_around_a_spawn_is_proc_s_start_time_within_the_span(fork: float, lead: float, lag: float) -> None:
    """A process forked at ``fork`` (seconds since boot) between two readings: /proc says its
    tick; the readings say a time no further from it than the span and one tick."""
    ticks = os.sysconf("SC_CLK_TCK")
    proc_says = BOOTED + math.floor(fork * ticks) / ticks
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(processes, "boot_time", lambda: BOOTED)
        said = processes.start_between(max(fork - lead, 0.0), fork + lag)
    assert said is not None
    assert abs(said - proc_says) <= processes.SPAWN_SPAN + 1 / ticks < processes.START_TIME_TOLERANCE
