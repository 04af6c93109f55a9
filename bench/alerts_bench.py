"""What alerts cost: writing the outbox with the failures, and sending it.

``SCHEDULES`` interval schedules each have ``DUE`` runs due that fail at once and for
good (the runner is replaced in-process by one that exits 1; one attempt each). One
engine pass runs them all (alerts not sent in the pass).

Measured, in the same run, on SQLite:

* the pass when every schedule has one alert route (an outbox row per failure,
  written in the failure's transaction), against the baseline: the same pass with
  no routes at all (the outbox never touched). The target is a ratio near 1.
* delivering that outbox to a webhook on 127.0.0.1 (``http.server`` in a process of its own):
  one sender, and four senders sharing it (claims by compare-and-set), in alerts
  per second; the ratio of four to one.

Run by hand: ``.venv/bin/python bench/alerts_bench.py [--quick]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchkit import interval_spec

from core.clock import Clock, FixedClock
from core.engine import run as run_stage
from core.engine.alerts import AlertSender
from core.engine.engine import Engine, EngineOptions
from core.engine.runner import PreparedCommand, RunResult
from core.ledger import open_ledger, publish
from core.ledger.db import Ledger

#: The anchor of ``interval_spec``: its runs are due every minute from here.
ANCHOR = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)


def instant_failure(
    command: PreparedCommand, timeout: timedelta, clock: Clock, *, on_started: Any = None, **_: Any
) -> RunResult:
    """The runner's contract without a process: started, exited 1."""
    started = clock.now()
    if on_started is not None:
        on_started(0)
    return RunResult(started, clock.now(), 1, None, None, "", "", 0)


#: A webhook that answers 200 to every POST, in a process of its own (not this one's GIL); prints its port.
SERVER = """
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Quiet(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def _failing_pass(tmp: str, schedules: int, due: int, route: str | None) -> tuple[float, Ledger]:
    """Seconds of the pass that fails every due run (``due`` per schedule); the ledger it leaves."""
    clock = FixedClock(ANCHOR + timedelta(minutes=due - 1, seconds=30))
    ledger = open_ledger(f"sqlite:///{tmp}/ledger.db")
    alerts = {"alerts": [{"to": route}]} if route is not None else {}
    with ledger.write() as session:
        for i in range(schedules):
            spec = interval_spec(f"s{i:04d}", due, ["/bin/false"], retry={"maxAttempts": 1}, **alerts)
            publish(session, spec, clock)
    engine = Engine(ledger, clock, EngineOptions(max_workers=4, deliver_alerts=False))
    start = time.perf_counter()
    engine.run_once()
    return time.perf_counter() - start, ledger


def _deliver(ledger: Ledger, senders: int) -> tuple[float, int]:
    """Seconds for ``senders`` senders (threads) to deliver the whole outbox, and how many they delivered."""
    clock = FixedClock(ANCHOR + timedelta(days=1))
    workers = [AlertSender(ledger, clock, f"bench-{i}", timeout=5.0, batch=20) for i in range(senders)]
    delivered = [0] * senders

    def deliver(i: int) -> None:
        delivered[i] = workers[i].deliver_due().delivered

    threads = [threading.Thread(target=deliver, args=(i,)) for i in range(senders)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, sum(delivered)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a few schedules: checks the bench works")
    args = parser.parse_args(argv)
    schedules, due = (5, 2) if args.quick else (100, 5)
    alerts = schedules * due
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    route = f"http://127.0.0.1:{int(server.stdout.readline())}/hook"
    try:
        with mock.patch.object(run_stage, "run_command", instant_failure):
            with tempfile.TemporaryDirectory() as tmp:
                baseline, _ = _failing_pass(tmp, schedules, due, None)
            with tempfile.TemporaryDirectory() as tmp:
                with_routes, ledger = _failing_pass(tmp, schedules, due, route)
                one, sent_one = _deliver(ledger, 1)
            with tempfile.TemporaryDirectory() as tmp:
                _, ledger = _failing_pass(tmp, schedules, due, route)
                four, sent_four = _deliver(ledger, 4)
    finally:
        server.terminate()
        server.wait()
    assert sent_one == sent_four == alerts, (sent_one, sent_four, alerts)
    print(f"{alerts} failed runs in one pass ({schedules} schedules x {due}), one alert each")
    print(f"{'pass with a route each':<34}{with_routes * 1000:>9.0f} ms")
    print(f"{'pass without routes (baseline)':<34}{baseline * 1000:>9.0f} ms")
    print(f"{'ratio outbox / baseline':<34}{with_routes / baseline:>9.2f}x")
    print(f"{'deliver, one sender':<34}{alerts / one:>9.0f} alerts/s")
    print(f"{'deliver, four senders':<34}{alerts / four:>9.0f} alerts/s")
    print(f"{'ratio four / one':<34}{one / four:>9.2f}x")


if __name__ == "__main__":
    main()
