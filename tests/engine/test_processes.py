"""Process identity: a pid counts as the recorded process only with its start time and boot."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

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
