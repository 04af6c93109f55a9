"""The headless engine's desktop notifications (``core.desktop.notify.service_notices``) against a fake
notification service on a private session bus: one Notify per batch with the core's text,
nothing told twice, nothing while a window on the ledger owns its name, "Open" starts the
window on Needs attention, no bus or no service said in one line; and a real
``schedctl engine run`` notifies of a real unknown effect. On SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import create_engine, inspect, text

from core.clock import FixedClock
from core.desktop.notify.desktop_bus import DesktopBus, claim_name, window_name
from core.desktop.notify.needs import TITLE
from core.desktop.notify.service_notices import ServiceNotices, start_notices
from core.engine.admin import run_now
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger
from core.ledger.publish import publish
from tests.session_bus import FakeNotifications, bus_daemon, notifications, private_bus

from . import DAILY, spec, utc

__all__ = ["bus_daemon", "notifications", "private_bus"]

PY = sys.executable
KILL_SELF = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
FAIL = {"argv": ["/bin/sh", "-c", "exit 3"], "effect": "idempotent"}


def put(ledger: Ledger, clock: FixedClock, sid: str, **overrides: Any) -> None:
    with ledger.write() as session:
        publish(session, spec(scheduleId=sid, cutoverAt="2026-03-02T00:00:00Z", **overrides), clock)


@pytest.fixture
def waiting_for_people(ledger: Ledger, clock: FixedClock) -> Ledger:
    """``backup`` lost its outcome (unknown effect), ``report`` failed with its one attempt used up."""
    put(ledger, clock, "backup", task={"argv": [PY, "-c", KILL_SELF]})
    put(ledger, clock, "report", task=FAIL, retry={"maxAttempts": 1})
    clock.set(utc("2026-03-02T07:30:05Z"))
    Engine(ledger, clock, EngineOptions(max_workers=2)).run_once(wait=True)
    return ledger


def notices_on(ledger: Ledger, clock: FixedClock, address: str, said: list[str] | None = None) -> ServiceNotices:
    bus = DesktopBus.connect(lambda: None, address)
    return ServiceNotices(ledger, clock, bus, window_name(ledger.where), say=(said if said is not None else []).append)


def test_one_notify_per_batch_never_repeated(
    waiting_for_people: Ledger, clock: FixedClock, notifications: FakeNotifications, private_bus: str
) -> None:
    ledger = waiting_for_people
    notices = notices_on(ledger, clock, private_bus)
    try:
        assert notices.tick() is not None
        clock.advance(timedelta(seconds=10))
        assert notices.tick() is None  # nothing new
        # A schedule only an engine on another host may run, with a run due now: it waits.
        put(ledger, clock, "sync", runsOn={"host": "elsewhere"})
        run_now(ledger, "sync", clock)
        clock.advance(timedelta(seconds=2))
        assert notices.tick() is None  # looked 2 s ago: not yet
        clock.advance(timedelta(seconds=60))
        assert notices.tick() is not None
        clock.advance(timedelta(seconds=120))
        assert notices.tick() is None
    finally:
        notices.close()
    calls = notifications.wait_for_calls(2)
    assert [(c.summary, c.body, c.actions) for c in calls] == [
        (TITLE, "2 runs need a decision: backup unknown effect, report failed", ["default", "Open", "open", "Open"]),
        (TITLE, "1 schedule needs a decision: sync waiting for an engine", ["default", "Open", "open", "Open"]),
    ]


#: A schedule id no spec may hold, written into the ledger by a client that skips Tidemark's checks.
FORGED = '<a href="file:///etc/passwd">report</a><b>x</b>&amp;'


def forge_schedule_id(url: str, old: str, new: str) -> None:
    """Rename schedule ``old`` to ``new`` by raw SQL in every table but the append-only events,
    foreign keys off meanwhile (SQLite checks none on a plain connection; PostgreSQL's superuser
    turns its triggers off)."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SET LOCAL session_replication_role = replica"))
            tables = inspect(conn).get_table_names()
            conn.execute(text("UPDATE schedules SET id = :new WHERE id = :old"), {"new": new, "old": old})
            for name in set(tables) - {"events"}:
                if "schedule_id" in {c["name"] for c in inspect(conn).get_columns(name)}:
                    update = f"UPDATE {name} SET schedule_id = :new WHERE schedule_id = :old"
                    conn.execute(text(update), {"new": new, "old": old})
    finally:
        engine.dispose()


def test_a_schedule_id_with_markup_reaches_the_body_escaped(
    waiting_for_people: Ledger, ledger_url: str, clock: FixedClock, notifications: FakeNotifications, private_bus: str
) -> None:
    """The notification service reads markup in a body (``body-markup``): a forged id's link, bold
    and entity arrive escaped, shown as written; the summary, plain text by the specification, is ours."""
    forge_schedule_id(ledger_url, "report", FORGED)
    notices = notices_on(waiting_for_people, clock, private_bus)
    try:
        notice = notices.tick()
    finally:
        notices.close()
    assert notice is not None and notice.text == f"2 runs need a decision: backup unknown effect, {FORGED} failed"
    (call,) = notifications.wait_for_calls(1)
    assert (call.summary, call.body) == (
        TITLE,
        "2 runs need a decision: backup unknown effect, "
        '&lt;a href="file:///etc/passwd"&gt;report&lt;/a&gt;&lt;b&gt;x&lt;/b&gt;&amp;amp; failed',
    )


def test_nothing_while_a_window_on_the_ledger_runs(
    waiting_for_people: Ledger, clock: FixedClock, notifications: FakeNotifications, private_bus: str
) -> None:
    ledger = waiting_for_people
    window = claim_name(window_name(ledger.where), private_bus)
    notices = notices_on(ledger, clock, private_bus)
    try:
        assert notices.tick() is None  # the window's tray tells it
        window.close()
        clock.advance(timedelta(minutes=5))
        assert notices.tick() is None  # and it was told: not again when the window has gone
        put(ledger, clock, "sync", runsOn={"host": "elsewhere"})
        run_now(ledger, "sync", clock)
        clock.advance(timedelta(minutes=5))
        notice = notices.tick()
        assert notice is not None and [n.schedule_id for n in notice.needs] == ["sync"]
    finally:
        notices.close()
    assert [c.body for c in notifications.calls] == ["1 schedule needs a decision: sync waiting for an engine"]


def test_open_starts_the_window_on_needs_attention(
    waiting_for_people: Ledger, clock: FixedClock, notifications: FakeNotifications, private_bus: str
) -> None:
    started: list[tuple[list[str], dict[str, str]]] = []
    opened = threading.Event()
    url = "postgresql+psycopg://ann:s3cret@db.example/tidemark"

    def spawn(argv: Any, env: Any) -> None:
        started.append((list(argv), dict(env)))
        opened.set()

    said: list[str] = []
    notices = start_notices(waiting_for_people, clock, url, address=private_bus, spawn=spawn, say=said.append)
    assert notices is not None
    try:
        notices.tick()
        (call,) = notifications.wait_for_calls(1)
        notifications.invoke(call.id, "open")
        assert opened.wait(10)
    finally:
        notices.close()
    assert said == []
    ((argv, env),) = started
    assert argv[-2:] == ["--view", "attention"]
    assert env == {"SCHEDULER_DB_URL": url}  # the ledger by the environment: no password in ps
    assert not any("s3cret" in part for part in argv)


def test_no_session_bus_is_one_line(ledger: Ledger, clock: FixedClock, tmp_path: Path) -> None:
    said: list[str] = []
    assert start_notices(ledger, clock, "x.db", address=f"unix:path={tmp_path}/gone", say=said.append) is None
    assert len(said) == 1 and said[0].startswith("no desktop notifications: the session bus cannot be reached")


def test_no_notification_service_is_said_once(waiting_for_people: Ledger, clock: FixedClock, private_bus: str) -> None:
    said: list[str] = []
    notices = notices_on(waiting_for_people, clock, private_bus, said)
    try:
        assert notices.tick() is not None
        put(waiting_for_people, clock, "sync", runsOn={"host": "elsewhere"})
        run_now(waiting_for_people, "sync", clock)
        clock.advance(timedelta(minutes=5))
        assert notices.tick() is not None
    finally:
        notices.close()
    assert said == [
        "no desktop notification: no notification service on the session bus "
        "(org.freedesktop.DBus.Error.ServiceUnknown)"
    ]
    assert notices.sent == []


def test_a_bus_that_goes_away_never_stops_the_engine(
    waiting_for_people: Ledger,
    clock: FixedClock,
    notifications: FakeNotifications,
    private_bus: str,
    bus_daemon: subprocess.Popen[str],
) -> None:
    said: list[str] = []
    notices = notices_on(waiting_for_people, clock, private_bus, said)
    assert notices.tick() is not None
    bus_daemon.terminate()  # the session ends under a lingering service
    bus_daemon.wait(timeout=10)
    put(waiting_for_people, clock, "sync", runsOn={"host": "elsewhere"})
    run_now(waiting_for_people, "sync", clock)
    for _ in range(3):
        clock.advance(timedelta(minutes=5))
        notices.tick()
    notices.close()
    assert len(said) == 1 and said[0].startswith("no desktop notification: "), said


# --- a real engine process ----------------------------------------------------------------------


def schedctl(*argv: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [PY, "-m", "core.cli", *argv], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_running_engine_notifies_of_a_real_unknown_effect(
    tmp_path: Path, notifications: FakeNotifications, private_bus: str
) -> None:
    """``schedctl engine run`` on a SQLite ledger with the private bus as its session bus: a run
    started by run-now kills itself (a non-idempotent task whose outcome is lost) and the engine
    sends one notification about it; none for what did not change."""
    db = str(tmp_path / "ledger.db")
    spec_file = tmp_path / "backup.yaml"
    spec_file.write_text(
        yaml.safe_dump({**DAILY, "scheduleId": "backup", "task": {"argv": [PY, "-c", KILL_SELF]}}), encoding="utf-8"
    )
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": private_bus}
    schedctl("apply", str(spec_file), "--db", db, env=env)
    engine = subprocess.Popen(
        [PY, "-m", "core.cli", "engine", "run", "--db", db, "--poll", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert engine.stdout is not None
        assert "running on" in engine.stdout.readline()
        schedctl("run-now", "backup", "--db", db, env=env)
        (call,) = notifications.wait_for_calls(1)
        assert (call.summary, call.body) == (TITLE, "1 run needs a decision: backup unknown effect")
    finally:
        engine.send_signal(signal.SIGTERM)
        _out, err = engine.communicate(timeout=60)
    assert engine.returncode == 0, err
    assert "no desktop notification" not in err
    assert len(notifications.calls) == 1


# --- turning them off -----------------------------------------------------------------------


def test_no_notify_turns_them_off(
    waiting_for_people: Ledger,
    clock: FixedClock,
    notifications: FakeNotifications,
    private_bus: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import argparse

    from core.cli import engine_commands

    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    off = argparse.Namespace(no_notify=True, db=str(waiting_for_people.where))
    assert engine_commands.start_notices(off, waiting_for_people, clock) is None
    on = engine_commands.start_notices(argparse.Namespace(no_notify=False, db="x.db"), waiting_for_people, clock)
    assert on is not None
    on.close()
    assert notifications.calls == []


def test_install_service_passes_no_notify_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from core import cli

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no systemctl: the command is printed instead
    assert cli.main(["engine", "install-service", "--db", "/srv/t.db", "--no-notify"]) == 1
    out, _ = capsys.readouterr()
    assert "SCHEDULER_DB_URL=/srv/t.db nohup " in out and "engine run --no-notify " in out
