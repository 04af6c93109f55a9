"""``schedctl engine run`` killed with SIGKILL while its task runs, then started
again: the task never runs twice at once (docs/contract.md §4, invariant 5), on SQLite
and PostgreSQL.

The task writes ``start PID`` and ``end PID`` marks to a file and waits for a
gate file between them. With tasks tied to their engine (the default, see
core/engine/tether.py) the kill ends the task too; with them untied
(``TIDEMARK_TASKS_OUTLIVE_ENGINE=1``) the next engine finds the orphan, keeps
it RUNNING while it lives, and settles it by invariant 5 once it has ended.
Either way the marks never overlap.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.clock import FixedClock
from core.engine import processes
from core.engine.admin import run_now
from core.engine.engine import OUTLIVE_ENV
from core.engine.reconcile import Decision, reconcile
from core.ledger.db import Ledger
from core.ledger.models import Occurrence
from core.ledger.publish import publish
from core.ledger.states import OccurrenceState as S

from . import spec, utc

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a task whose pid was not recorded yet is found through /proc"
)

PY = sys.executable
SID = "daily-ops-summary"
T0 = "2026-03-01T12:00:00Z"
#: Real seconds to wait for a process to reach a point or end.
REACH = 30.0

TASK = (
    "import os, sys, time\n"
    "marks, gate = sys.argv[1], sys.argv[2]\n"
    "def mark(what):\n"
    "    fd = os.open(marks, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)\n"
    "    os.write(fd, ('%s %d\\n' % (what, os.getpid())).encode())\n"
    "    os.close(fd)\n"
    "mark('start')\n"
    "while not os.path.exists(gate):\n"
    "    time.sleep(0.02)\n"
    "mark('end')\n"
)


@pytest.fixture
def files(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    marks, gate = tmp_path / "marks", tmp_path / "gate"
    yield marks, gate
    gate.touch()  # whatever is left running ends


def engine_once(url: str, when: str, *, outlive: bool) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != OUTLIVE_ENV}
    if outlive:
        env[OUTLIVE_ENV] = "1"
    argv = [PY, "-m", "core.cli", "engine", "run", "--once", "--allow-second", "--db", url, "--now", when]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str]) -> str:
    out, err = proc.communicate(timeout=REACH)
    assert proc.returncode == 0, err
    return out


def marks_of(path: Path) -> list[tuple[str, int]]:
    if not path.exists():
        return []
    return [(what, int(pid)) for what, pid in (line.split() for line in path.read_text().splitlines())]


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + REACH
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


def gone(pid: int, started: float | None) -> bool:
    identity = processes.ProcessIdentity(processes.this_host(), pid, started, processes.boot_id())
    return processes.liveness(identity) is processes.Liveness.GONE


def never_overlap(marks: list[tuple[str, int]]) -> None:
    running: set[int] = set()
    for what, pid in marks:
        if what == "start":
            assert not running, f"{pid} started while {running} ran: {marks}"
            running.add(pid)
        else:
            running.discard(pid)


def occurrence(ledger: Ledger, occurrence_id: str) -> Occurrence:
    with ledger.read() as session:
        occ = session.get(Occurrence, occurrence_id, populate_existing=True)
        assert occ is not None
        return occ


def started_and_killed(ledger: Ledger, url: str, files: tuple[Path, Path], *, outlive: bool) -> tuple[str, int]:
    """A manual run of a non_idempotent task, its engine killed while the task waits at its gate."""
    marks, gate = files
    clock = FixedClock(utc(T0))
    task = {"argv": [PY, "-c", TASK, str(marks), str(gate)], "effect": "non_idempotent", "timeout": "PT1H"}
    with ledger.write() as session:
        publish(session, spec(cutoverAt="2026-03-02T00:00:00Z", task=task), clock)
    occ_id = run_now(ledger, SID, clock)
    engine = engine_once(url, T0, outlive=outlive)
    wait_for(lambda: marks_of(marks), "the task started")
    engine.send_signal(signal.SIGKILL)
    engine.communicate(timeout=REACH)
    ((_what, pid),) = marks_of(marks)
    return occ_id, pid


def test_an_orphan_outliving_its_engine_is_found_and_never_run_twice(
    ledger: Ledger, ledger_url: str, files: tuple[Path, Path]
) -> None:
    marks, gate = files
    occ_id, pid = started_and_killed(ledger, ledger_url, files, outlive=True)
    task = processes.identify(pid)
    assert processes.liveness(task) is processes.Liveness.ALIVE  # it outlived its engine
    # The next engine, well within the dead engine's lease: the orphan is found, nothing else starts.
    said = finish(engine_once(ledger_url, "2026-03-01T12:00:10Z", outlive=True))
    assert "watched 1 task still running from an engine that stopped" in said
    occ = occurrence(ledger, occ_id)
    assert occ.state is S.RUNNING
    assert occ.reason is not None and f"attempt 1 is still running as pid {pid} since " in occ.reason
    # Later passes, the lease long gone: still watched, never retried beside itself.
    finish(engine_once(ledger_url, "2026-03-01T12:30:00Z", outlive=True))
    assert occurrence(ledger, occ_id).state is S.RUNNING
    assert marks_of(marks) == [("start", pid)]
    # It ends by itself; the next pass settles it by invariant 5 (non_idempotent: a person decides).
    gate.touch()
    wait_for(lambda: gone(pid, task.started), "the orphan ended")
    finish(engine_once(ledger_url, "2026-03-01T12:31:00Z", outlive=True))
    assert occurrence(ledger, occ_id).state is S.UNKNOWN_EFFECT
    clock = FixedClock(utc("2026-03-01T12:32:00Z"))
    assert reconcile(ledger, occ_id, Decision.NOT_HAPPENED, clock).new is S.RETRY_WAIT
    finish(engine_once(ledger_url, "2026-03-01T12:32:00Z", outlive=True))
    assert occurrence(ledger, occ_id).state is S.SUCCEEDED
    seen = marks_of(marks)
    assert [what for what, _ in seen] == ["start", "end", "start", "end"]
    never_overlap(seen)


def test_a_task_dies_with_its_killed_engine(ledger: Ledger, ledger_url: str, files: tuple[Path, Path]) -> None:
    marks, gate = files
    occ_id, pid = started_and_killed(ledger, ledger_url, files, outlive=False)
    task = processes.identify(pid)
    wait_for(lambda: gone(pid, task.started), "the task died with its engine")
    # The next engine, within the dead engine's lease, sees its claimant gone and settles at once.
    finish(engine_once(ledger_url, "2026-03-01T12:00:10Z", outlive=False))
    occ = occurrence(ledger, occ_id)
    assert occ.state is S.UNKNOWN_EFFECT
    assert marks_of(marks) == [("start", pid)]
    # A person's "did not happen" now starts the one copy there is.
    gate.touch()
    clock = FixedClock(utc("2026-03-01T12:01:00Z"))
    assert reconcile(ledger, occ_id, Decision.NOT_HAPPENED, clock).new is S.RETRY_WAIT
    finish(engine_once(ledger_url, "2026-03-01T12:01:00Z", outlive=False))
    assert occurrence(ledger, occ_id).state is S.SUCCEEDED
    ((_, first), (_, second), (_, third)) = seen = marks_of(marks)
    assert [what for what, _ in seen] == ["start", "start", "end"]
    assert (first, second == third, second != first) == (pid, True, True)
