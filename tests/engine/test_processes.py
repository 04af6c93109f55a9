"""Process identity: a pid counts as the recorded process only with its start time and boot."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
