"""The engine keeps one wake alarm per ``wakeSystem`` schedule, at its next due run
minus 30 s (both databases), through a fake ``systemd-run`` and ``systemctl`` on PATH
that record their calls: set, moved, kept, and removed on a pause, a disable, a
revision without ``wakeSystem`` and a schedule with no run left."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from core.clock import FixedClock
from core.desktop.service_command import timed_runner
from core.desktop.wake.alarms import CannotWake, WakeBackend
from core.desktop.wake.systemd_timer import SystemdTimers
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger
from core.ledger.publish import disable, pause, publish, resume
from core.spec.validation import parse_spec
from tests.fake_systemd import FakeSystemd, install

from . import DAILY

UNIT = "tidemark-wake-daily-ops-summary"
#: 02:30 in New York (EST) is 07:30Z: each alarm is at 07:29:30Z.
MARCH_2 = datetime(2026, 3, 2, 7, 29, 30, tzinfo=UTC)
MARCH_3 = MARCH_2 + timedelta(days=1)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSystemd]:
    tools = install(tmp_path / "fake-systemd")
    monkeypatch.setenv("PATH", f"{tools.folder}:{Path('/usr/bin')}:{Path('/bin')}")
    yield tools


def apply(ledger: Ledger, clock: FixedClock, **overrides: Any) -> None:
    with ledger.write() as session:
        publish(session, parse_spec({**DAILY, **overrides}), clock)


def engine(ledger: Ledger, clock: FixedClock, backend: WakeBackend | None = None) -> Engine:
    return Engine(ledger, clock, EngineOptions(max_workers=1), wake=backend or SystemdTimers(timed_runner(10)))


def test_the_alarm_is_set_then_moved_after_the_run(ledger: Ledger, clock: FixedClock, fake: FakeSystemd) -> None:
    apply(ledger, clock, wakeSystem=True)
    eng = engine(ledger, clock)
    eng.run_once()
    assert fake.timers() == {UNIT: MARCH_2}
    assert fake.arms() == [(UNIT, "2026-03-02 07:29:30 UTC")]
    run = next(c for c in fake.calls() if c[0] == "systemd-run")
    assert "--timer-property=WakeSystem=true" in run and "--user" in run and run[-1] == "/bin/true"
    eng.run_once()  # nothing moved: nothing asked of systemd
    assert len(fake.arms()) == 1
    clock.set(datetime(2026, 3, 2, 7, 30, 5, tzinfo=UTC))
    assert eng.run_once().started == 1
    assert fake.timers() == {UNIT: MARCH_3}
    assert fake.arms()[-1] == (UNIT, "2026-03-03 07:29:30 UTC")


@pytest.mark.parametrize("gate", ["pause", "disable"])
def test_a_paused_or_disabled_schedule_has_no_alarm(
    ledger: Ledger, clock: FixedClock, fake: FakeSystemd, gate: str
) -> None:
    apply(ledger, clock, wakeSystem=True)
    eng = engine(ledger, clock)
    eng.run_once()
    assert fake.timers() == {UNIT: MARCH_2}
    with ledger.write() as session:
        (pause if gate == "pause" else disable)(session, DAILY["scheduleId"], clock)
    eng.run_once()
    assert fake.timers() == {}
    assert ["systemctl", "--user", "stop", f"{UNIT}.timer"] in fake.calls()
    with ledger.write() as session:
        resume(session, DAILY["scheduleId"], clock)
    eng.run_once()
    assert fake.timers() == {UNIT: MARCH_2}


def test_a_revision_without_wake_removes_the_alarm(ledger: Ledger, clock: FixedClock, fake: FakeSystemd) -> None:
    apply(ledger, clock, wakeSystem=True)
    eng = engine(ledger, clock)
    eng.run_once()
    apply(ledger, clock, revision=2)
    eng.run_once()
    assert fake.timers() == {}
    apply(ledger, clock, revision=3, wakeSystem=True, rule="FREQ=DAILY;BYHOUR=4;BYMINUTE=0")
    eng.run_once()
    assert fake.timers() == {UNIT: datetime(2026, 3, 2, 8, 59, 30, tzinfo=UTC)}


def test_a_schedule_with_no_run_left_has_no_alarm(ledger: Ledger, clock: FixedClock, fake: FakeSystemd) -> None:
    apply(ledger, clock, wakeSystem=True, end="2026-03-02T03:00:00")
    eng = engine(ledger, clock)
    eng.run_once()
    assert fake.timers() == {UNIT: MARCH_2}
    clock.set(datetime(2026, 3, 2, 7, 30, 5, tzinfo=UTC))
    eng.run_once()
    assert fake.timers() == {}


def test_schedules_without_wake_or_for_other_engines_cost_no_call(
    ledger: Ledger, clock: FixedClock, fake: FakeSystemd
) -> None:
    apply(ledger, clock)
    apply(ledger, clock, scheduleId="elsewhere", wakeSystem=True, runsOn={"host": "another-host"})
    eng = engine(ledger, clock)
    eng.run_once()
    eng.run_once()
    # the first pass reads the listing (the truth of what is armed); nothing else is asked
    assert [c[:3] for c in fake.calls()] == [["systemctl", "--user", "list-timers"]]
    assert fake.timers() == {}


def test_a_new_engine_keeps_a_right_alarm_and_removes_a_stale_one(
    ledger: Ledger, clock: FixedClock, fake: FakeSystemd
) -> None:
    apply(ledger, clock, wakeSystem=True)
    apply(ledger, clock, scheduleId="no-longer", wakeSystem=True)
    engine(ledger, clock).run_once()
    apply(ledger, clock, scheduleId="no-longer", revision=2)
    backend = SystemdTimers(timed_runner(10))
    backend.arm("another-ledgers", MARCH_3)
    fake.forget_calls()
    engine(ledger, clock).run_once()  # a new engine (the first one stopped)
    assert fake.timers() == {UNIT: MARCH_2, "tidemark-wake-another-ledgers": MARCH_3}
    assert fake.arms() == []  # the right one was kept as it was
    assert ["systemctl", "--user", "stop", "tidemark-wake-no-longer.timer"] in fake.calls()


def test_where_the_machine_cannot_wake_the_schedule_still_runs(
    ledger: Ledger, clock: FixedClock, fake: FakeSystemd
) -> None:
    apply(ledger, clock, wakeSystem=True)
    eng = engine(ledger, clock, CannotWake("there is no systemd user session"))
    eng.run_once()
    clock.set(datetime(2026, 3, 2, 7, 30, 5, tzinfo=UTC))
    assert eng.run_once().started == 1
    assert fake.calls() == []


def _statements(ledger: Ledger, eng: Engine) -> int:
    """The statements one pass of ``eng`` sends."""
    sent: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    event.listen(ledger.engine, "before_cursor_execute", count)
    try:
        eng.run_once()
    finally:
        event.remove(ledger.engine, "before_cursor_execute", count)
    return len(sent)


def test_an_idle_pass_pays_one_statement_only_for_schedules_that_ask(
    ledger: Ledger, clock: FixedClock, fake: FakeSystemd
) -> None:
    """Without ``wakeSystem`` schedules a pass with the wake backend sends what a pass without it
    sends; with them, one statement more (their next runs), however many ask."""
    apply(ledger, clock)
    plain = Engine(ledger, clock, EngineOptions(max_workers=1))
    waking = engine(ledger, clock)
    for eng in (plain, waking):
        eng.run_once()
        eng.run_once()
    assert _statements(ledger, waking) == _statements(ledger, plain)
    for sid in ("wake-1", "wake-2", "wake-3"):
        apply(ledger, clock, scheduleId=sid, wakeSystem=True)
    for eng in (plain, waking):
        eng.run_once()  # materializes the new schedules and reads which ones ask
    assert len(fake.timers()) == 3
    assert _statements(ledger, waking) == _statements(ledger, plain) + 1


def test_a_backend_that_breaks_is_logged_and_the_pass_goes_on(
    ledger: Ledger, clock: FixedClock, fake: FakeSystemd, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(SystemdTimers):
        def listing(self) -> list[Any]:
            raise OSError("the user bus went away")

    apply(ledger, clock, wakeSystem=True)
    eng = engine(ledger, clock, Broken(timed_runner(1)))
    eng.run_once()
    assert "the wake alarms could not be brought in line" in caplog.text
    assert fake.timers() == {}
    eng.run_once()  # the next pass sets what the broken one could not
    assert fake.timers() == {UNIT: MARCH_2}
    clock.set(datetime(2026, 3, 2, 7, 30, 5, tzinfo=UTC))
    assert eng.run_once().started == 1
