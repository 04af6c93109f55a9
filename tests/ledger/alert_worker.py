"""An engine's alert sender as a process of its own, for the kill test (``test_alert_kills.py``).

Run as a script: it opens the ledger and delivers the outbox (real clock, a short
claim lease) until nothing is pending, then exits 0. It appends markers to
``--markers`` (unbuffered: a killed process leaves every marker it wrote)::

    sent <key>       the route took the alert (before its record)
    recorded <key>   its delivery is committed
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import timedelta

from core.clock import SystemClock
from core.desktop.notify.alert_message import idempotency_key
from core.desktop.notify.alert_send import Alert, Sent, send
from core.engine.alerts import AlertSender
from core.ledger import alert_queries
from core.ledger.db import open_ledger
from core.team.alert_routes import Smtp


class Markers:
    """Where the sender says where it is."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def mark(self, text: str) -> None:
        os.write(self.fd, f"{os.getpid()} {text}\n".encode())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--markers", required=True)
    args = parser.parse_args()
    ledger = open_ledger(args.db, SystemClock(), create=False)
    markers = Markers(args.markers)

    def transport(alert: Alert, smtp: Smtp | None, timeout: float) -> Sent:
        markers.mark(f"sending {idempotency_key(alert.occurrence_id, alert.kind)}")
        sent = send(alert, smtp, timeout=timeout)
        if sent.ok:
            markers.mark(f"sent {idempotency_key(alert.occurrence_id, alert.kind)}")
        return sent

    def recorded(row: alert_queries.Pending, _sent: Sent) -> None:
        markers.mark(f"recorded {idempotency_key(row.occurrence_id, row.kind)}")

    sender = AlertSender(
        ledger,
        SystemClock(),
        f"worker-{os.getpid()}",
        timeout=5.0,
        transport=transport,
        batch=1,
        lease=timedelta(seconds=0.5),
        recorded=recorded,
    )
    while True:
        sender.deliver_due()
        with ledger.read() as session:
            if alert_queries.next_try(session) is None:
                return 0
        time.sleep(0.05)  # another process holds the rest: look again soon


if __name__ == "__main__":
    raise SystemExit(main())
