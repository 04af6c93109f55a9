"""Four alert senders, each its own process, share one outbox and are killed with SIGKILL
again and again (both databases): every alert is delivered; a route is told an alert twice
only after a sender died between sending it and recording it, and then with the same
Idempotency-Key. The repeats are counted against the kills that could cause them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import select

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.ledger.db import Ledger
from core.ledger.models import AlertOutbox
from core.ledger.publish import publish
from core.spec.validation import parse_spec
from tests.alert_servers import hook_server

from . import FAILING_MINUTELY, spec_data, utc

WORKER = str(Path(__file__).with_name("alert_worker.py"))
SENDERS = 4
KILLS = 8
ROUTES = 12
#: Real seconds to wait for a sender to reach the point aimed at, or for all to finish.
REACH = 60.0


def _spec(url: str) -> dict[str, Any]:
    routes = [{"to": f"{url}?route={i}"} for i in range(ROUTES)]
    return spec_data(FAILING_MINUTELY, scheduleId="noisy", horizon="PT10M", misfirePolicy="CATCH_UP_ALL", alerts=routes)


def _spawn(url: str, markers: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen([sys.executable, WORKER, "--db", url, "--markers", str(markers)], env=env)


def _last_marks(markers: Path) -> dict[int, tuple[str, str]]:
    """Each process's last marker: pid -> (what, key)."""
    last: dict[int, tuple[str, str]] = {}
    if markers.exists():
        for line in markers.read_text().splitlines():
            pid, what, key = line.split(" ", 2)
            last[int(pid)] = (what, key)
    return last


def _kill_mid_send(url: str, markers: Path, senders: list[subprocess.Popen[bytes]]) -> list[tuple[int, str]]:
    """Kill a sender each time one is found sending, KILLS times (a new one takes its place);
    returns (pid, key) of each kill that landed between a send and its record."""
    between: list[tuple[int, str]] = []
    kills = 0
    deadline = time.monotonic() + REACH
    while kills < KILLS and time.monotonic() < deadline and any(p.poll() is None for p in senders):
        last = _last_marks(markers)
        for i, proc in enumerate(senders):
            mark = last.get(proc.pid)
            if proc.poll() is None and mark is not None and mark[0] in ("sending", "sent"):
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                landed = _last_marks(markers).get(proc.pid)
                if landed is not None and landed[0] in ("sending", "sent"):
                    between.append((proc.pid, landed[1]))
                kills += 1
                senders[i] = _spawn(url, markers)
                break
        else:
            time.sleep(0.005)  # look at the markers again
    return between


def test_killed_senders_repeat_an_alert_only_after_a_send_and_with_its_key(
    ledger: Ledger, ledger_url: str, tmp_path: Path
) -> None:
    with hook_server() as hook:
        hook.delay = 0.02
        with ledger.write() as session:
            publish(session, parse_spec(_spec(hook.url)), FixedClock(utc("2026-03-01T12:00:00Z")))
        clock = FixedClock(utc("2026-03-01T12:09:30Z"))  # ten minutes fail: 10 x ROUTES alerts
        Engine(ledger, clock, EngineOptions(max_workers=1, deliver_alerts=False)).run_once()
        with ledger.read() as session:
            keys = {f"{o}:{k}" for o, k in session.execute(select(AlertOutbox.occurrence_id, AlertOutbox.kind))}
            rows = len(session.scalars(select(AlertOutbox.id)).all())
        assert rows == 10 * ROUTES
        markers = tmp_path / "markers"
        senders = [_spawn(ledger_url, markers) for _ in range(SENDERS)]
        try:
            between = _kill_mid_send(ledger_url, markers, senders)
            for proc in senders:
                assert proc.wait(REACH) == 0
        finally:
            for proc in senders:
                if proc.poll() is None:
                    proc.kill()
        received = [(r.key, r.path) for r in hook.received]
    with ledger.read() as session:
        undelivered = session.scalars(select(AlertOutbox.id).where(AlertOutbox.delivered_at.is_(None))).all()
    assert undelivered == []
    per_alert = Counter(received)  # (Idempotency-Key, route): every send of one alert to one route
    assert {key for key, _ in per_alert} == keys
    assert len(per_alert) == rows  # every alert reached its route
    repeats = sum(count - 1 for count in per_alert.values())
    assert repeats <= len(between)  # each repeat follows a kill between a send and its record
    repeated_keys = {key for (key, _), count in per_alert.items() if count > 1}
    assert repeated_keys <= {key for _, key in between}
    print(f"alerts {rows}, kills {KILLS}, between send and record {len(between)}, repeats {repeats}")
