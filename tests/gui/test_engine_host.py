"""The embedded engine (scheduler_gui.monitor.engine_host) on a fixed clock and a
SQLite ledger: an occurrence goes DUE, RUNNING, SUCCEEDED through it; it pauses;
``stop`` records killed tasks by the engine's rules; and it never starts beside a
headless engine running in another process."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from engine_host_support import host_fixture  # noqa: F401
from sqlalchemy import select

from core.clock import FixedClock
from core.engine import processes
from core.engine.presence import live_engines
from core.ledger.models import Attempt, EngineKind, EnginePresence, EngineRow, Event, Occurrence
from core.ledger.publish import publish
from core.spec.validation import parse_spec
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.engine_host import EngineHost

PY = sys.executable
SCHEDCTL = Path(sys.executable).parent / "schedctl"
WAIT_FOR_FLAG = (
    "import pathlib, sys, time\n"
    "flag = pathlib.Path(sys.argv[1])\n"
    "end = time.monotonic() + 30\n"
    "while not flag.exists() and time.monotonic() < end:\n"
    "    time.sleep(0.02)\n"
    "print('synced')\n"
)


def hourly(task: dict[str, Any], sid: str = "hourly-job") -> dict[str, Any]:
    """An interval schedule with an occurrence at NOW (2027-03-01 12:00Z) exactly."""
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": sid,
        "revision": 1,
        "timeZone": "Europe/Berlin",
        "kind": "interval",
        "every": "PT1H",
        "anchor": "2027-01-01T00:00:00Z",
        "horizon": "PT3H",
        # SKIP: the engine polls every 50 ms on a clock that never moves; the run a pass is about
        # to start must not be taken for an overlap of itself (tests/ledger/test_engine_run.py).
        "overlapPolicy": "SKIP",
        "task": task,
    }


def put(ctx: AppContext, data: dict[str, Any]) -> None:
    with ctx.ledger.write() as session:
        publish(session, parse_spec(data), ctx.clock)


def states(ctx: AppContext, sid: str = "hourly-job") -> list[str]:
    with ctx.ledger.read() as session:
        return [
            s.value
            for s in session.scalars(
                select(Occurrence.state).where(Occurrence.schedule_id == sid).order_by(Occurrence.position_utc)
            )
        ]


def engine_rows(ctx: AppContext) -> list[EngineRow]:
    with ctx.ledger.read() as session:
        return list(session.scalars(select(EngineRow)))


def test_an_occurrence_goes_due_running_succeeded(
    ctx: AppContext, host: EngineHost, qtbot: Any, tmp_path: Path
) -> None:
    flag = tmp_path / "go"
    put(ctx, hourly({"argv": [PY, "-c", WAIT_FOR_FLAG, str(flag)], "effect": "idempotent"}))
    passes: list[object] = []
    host.passFinished.connect(passes.append)
    with qtbot.waitSignal(host.stateChanged, timeout=10_000, check_params_cb=lambda s: s == "running"):
        host.start()
    qtbot.waitUntil(lambda: states(ctx)[:1] == ["RUNNING"], timeout=10_000)
    qtbot.waitUntil(lambda: host.tasks_running == 1, timeout=10_000)
    assert host.next_due == datetime(2027, 3, 1, 13, 0, tzinfo=UTC)
    assert host.next_due_schedule == "hourly-job"
    [me] = engine_rows(ctx)
    assert (me.kind, me.state) == (EngineKind.APP, EnginePresence.RUNNING)
    flag.touch()
    qtbot.waitUntil(lambda: states(ctx)[:1] == ["SUCCEEDED"], timeout=10_000)
    qtbot.waitUntil(lambda: host.tasks_running == 0, timeout=10_000)
    with ctx.ledger.read() as session:
        first = session.scalars(select(Occurrence).order_by(Occurrence.position_utc).limit(1)).one()
        path = [
            (e.data["from"], e.data["to"])
            for e in session.scalars(select(Event).where(Event.occurrence_id == first.occurrence_id).order_by(Event.id))
        ]
    assert path == [("PLANNED", "DUE"), ("DUE", "DISPATCHING"), ("DISPATCHING", "RUNNING"), ("RUNNING", "SUCCEEDED")]
    assert passes, "every pass is reported"
    with qtbot.waitSignal(host.stateChanged, timeout=10_000):
        host.shutdown("wait")
    assert host.state == "stopped"
    [me] = engine_rows(ctx)
    assert me.state is EnginePresence.RETIRED


def test_pause_records_itself_and_claims_nothing(ctx: AppContext, host: EngineHost, qtbot: Any) -> None:
    with qtbot.waitSignal(host.stateChanged, timeout=10_000, check_params_cb=lambda s: s == "running"):
        host.start()
    with qtbot.waitSignal(host.stateChanged, timeout=10_000, check_params_cb=lambda s: s == "paused"):
        host.pause()
    put(ctx, hourly({"argv": ["/bin/true"], "effect": "none"}))
    qtbot.wait(300)  # several poll intervals: a paused engine must not materialize or claim
    assert states(ctx) == []
    with qtbot.waitSignal(host.stateChanged, timeout=10_000, check_params_cb=lambda s: s == "running"):
        host.start()
    qtbot.waitUntil(lambda: states(ctx)[:1] == ["SUCCEEDED"], timeout=10_000)


def test_stop_kills_running_tasks_and_records_them_as_unknown(ctx: AppContext, host: EngineHost, qtbot: Any) -> None:
    put(ctx, hourly({"argv": ["/bin/sleep", "3600"], "effect": "non_idempotent", "timeout": "PT1H"}))
    host.start()
    qtbot.waitUntil(lambda: states(ctx)[:1] == ["RUNNING"], timeout=10_000)
    with ctx.ledger.read() as session:
        task_pid = session.scalar(select(Attempt.task_pid).where(Attempt.task_pid.is_not(None)))
    assert task_pid is not None
    task = processes.identify(task_pid)
    host.shutdown("stop")
    assert host.state == "stopped"
    assert states(ctx)[:1] == ["UNKNOWN_EFFECT"]  # a non-idempotent task cut short: a person decides
    assert processes.liveness(task) is processes.Liveness.GONE  # its group was ended, not left running
    with ctx.ledger.read() as session:
        assert session.scalars(select(Attempt.error_class)).all() == ["signal"]


@pytest.mark.parametrize(
    ("stored", "expected"),
    [pytest.param(None, True, id="default_on"), pytest.param(False, False, id="turned_off")],
)
def test_autostart_is_a_setting(ctx: AppContext, qtbot: Any, stored: bool | None, expected: bool) -> None:
    if stored is not None:
        ctx.settings.setValue("engine/autostart", stored)
    host = EngineHost(ctx, poll_seconds=0.05)
    try:
        assert host.autostart is expected
        assert host.start_if_autostart() is expected
    finally:
        host.shutdown("stop")


def test_an_unusable_ledger_is_the_error_state(tmp_path: Path, clock: FixedClock, qtbot: Any) -> None:
    from PySide6.QtCore import QSettings

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    ctx = AppContext(
        clock=clock,
        workspace=tmp_path,
        ledger_url=f"sqlite:///{blocker / 'ledger.db'}",
        settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
    )
    host = EngineHost(ctx, poll_seconds=0.05)
    try:
        with qtbot.waitSignal(host.errorOccurred, timeout=10_000) as said:
            host.start()
        qtbot.waitUntil(lambda: host.state == "error", timeout=5000)
        assert str(blocker) in said.args[0] and "Traceback" not in said.args[0]
    finally:
        host.shutdown("stop")


def test_a_headless_engine_in_another_process_keeps_the_host_from_starting(
    ctx: AppContext, host: EngineHost, clock: FixedClock, qtbot: Any
) -> None:
    # The other process beats on the real clock: read its heartbeats on a clock set to the real time.
    clock.set(datetime.now(UTC))
    url = ctx.ledger_url
    assert url is not None
    ctx.ledger  # migrated before the other process opens it  # noqa: B018
    other = subprocess.Popen(
        [str(SCHEDCTL), "engine", "run", "--db", url, "--poll", "0.2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def headless_seen() -> bool:
            with ctx.ledger.read() as session:
                return any(e.kind is EngineKind.HEADLESS for e in live_engines(session, clock.now()))

        qtbot.waitUntil(lambda: headless_seen() or other.poll() is not None, timeout=30_000)
        assert other.poll() is None, other.communicate()[1]
        with qtbot.waitSignal(host.otherEngineSeen, timeout=10_000) as seen:
            host.start()
        qtbot.waitUntil(lambda: host.state == "other-engine", timeout=5000)
        assert seen.args[0].startswith("a headless engine (schedctl engine run) on ")
        assert f"(pid {other.pid})" in seen.args[0]
        assert [r.kind for r in engine_rows(ctx)] == [EngineKind.HEADLESS], "the host announced nothing"
        with qtbot.waitSignal(host.stateChanged, timeout=10_000, check_params_cb=lambda s: s == "running"):
            host.start(force=True)  # asked for explicitly: a second dispatcher
        assert sorted(r.kind.value for r in engine_rows(ctx)) == ["app", "headless"]
    finally:
        other.terminate()
        _out, err = other.communicate(timeout=30)
    assert other.returncode == 0, err


def test_the_host_takes_over_when_the_other_engine_retires(
    ctx: AppContext, host: EngineHost, clock: FixedClock, qtbot: Any
) -> None:
    from core.engine.presence import announce, retire

    other = announce(ctx.ledger, clock, EngineKind.HEADLESS, host="ops-box", pid=4321)
    with qtbot.waitSignal(host.otherEngineSeen, timeout=10_000) as seen:
        host.start()
    assert seen.args[0] == (
        "a headless engine (schedctl engine run) on ops-box (pid 4321), last seen 0 s ago at 2027-03-01T12:00:00Z"
    )
    assert host.describe_other() == seen.args[0]
    retire(ctx.ledger, clock, other)
    qtbot.waitUntil(lambda: host.state == "running", timeout=10_000)
    assert host.other_engine is None


def test_an_unknown_shutdown_mode_is_refused(host: EngineHost) -> None:
    with pytest.raises(ValueError, match="detach, wait, stop"):
        host.shutdown("later")
    assert host.state == "stopped"


def test_wait_mode_returns_once_the_running_task_is_recorded(
    ctx: AppContext, host: EngineHost, qtbot: Any, tmp_path: Path
) -> None:
    from PySide6.QtCore import QTimer

    flag = tmp_path / "go"
    put(ctx, hourly({"argv": [PY, "-c", WAIT_FOR_FLAG, str(flag)], "effect": "idempotent"}))
    host.start()
    qtbot.waitUntil(lambda: states(ctx)[:1] == ["RUNNING"], timeout=10_000)
    QTimer.singleShot(300, flag.touch)  # the task finishes while the window waits (events keep flowing)
    host.shutdown("wait")
    assert states(ctx)[:1] == ["SUCCEEDED"]
    assert host.state == "stopped"


@pytest.mark.parametrize(
    ("stored", "seconds"),
    [
        pytest.param("2.5", 2.5, id="number"),
        pytest.param("soon", 1.0, id="not_a_number"),
        pytest.param("0", 0.05, id="too_fast"),
        pytest.param("nan", 1.0, id="nan"),
    ],
)
def test_poll_interval_setting(ctx: AppContext, qtbot: Any, stored: str, seconds: float) -> None:
    ctx.settings.setValue("engine/poll_seconds", stored)
    assert EngineHost(ctx).poll_seconds == seconds


def test_detach_lets_the_running_task_finish_and_claims_nothing_more(
    ctx: AppContext, host: EngineHost, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Engine.stop() stops the worker's claims: the host needs no patch of its own for that."""
    from core.engine.admin import run_now

    monkeypatch.setattr(host, "_hand_over", lambda: None)  # no engine service is started from a test
    flag = tmp_path / "go"
    put(ctx, hourly({"argv": [PY, "-c", WAIT_FOR_FLAG, str(flag)], "effect": "idempotent"}))
    host.start()
    qtbot.waitUntil(lambda: states(ctx)[:1] == ["RUNNING"], timeout=10_000)
    with ctx.ledger.read() as session:
        running = session.scalar(select(Occurrence.occurrence_id).where(Occurrence.state == "RUNNING"))
    manual = run_now(ctx.ledger, "hourly-job", ctx.clock)  # due at once, behind the running one
    host.shutdown("detach")
    assert host.state == "stopped"
    flag.touch()

    def finished() -> bool:
        with ctx.ledger.read() as session:
            occ = session.get(Occurrence, running)
            return occ is not None and occ.state.value == "SUCCEEDED"

    qtbot.waitUntil(finished, timeout=10_000)
    with ctx.ledger.read() as session:
        left = session.get(Occurrence, manual)
        assert left is not None and left.state.value == "DUE" and left.attempt_count == 0
