"""The engine's alert sender: delivers the outbox (docs/contract.md, "Alerts").

Never on the claim or dispatch path of tasks: :meth:`AlertSender.deliver_due`
runs after a ``--once`` pass has waited for its tasks, and on its own thread
(:meth:`AlertSender.run`) beside :meth:`Engine.run_forever`. Each round asks the
outbox when the earliest alert is due (one indexed lookup; nothing more when
none is), claims what is due in one short transaction, sends each alert with a
timeout on every network call, and records each outcome in a transaction of its
own. A send that fails is tried again after a backoff (30 s doubling to an hour),
and the route's other alerts of the round wait with it, untried (a route that hangs
costs a round one timeout, not one per alert);
a route that keeps failing shows as one Needs-attention item
(:func:`core.ledger.alert_queries.failing_routes`).

A claim lasts :attr:`AlertSender.lease`; an engine killed after a send and
before its record leaves the claim to run out, and another engine (or this one
restarted) sends the alert again, with the same Idempotency-Key. That is the
only repeat.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from core.clock import Clock
from core.desktop.notify.alert_send import TIMEOUT, Alert, Sent, send
from core.errors import UserError
from core.ledger import alert_queries
from core.ledger.access import reading, writing
from core.ledger.db import Ledger
from core.team.alert_routes import Smtp

_log = logging.getLogger(__name__)

#: Sends an alert: :func:`core.desktop.notify.alert_send.send`, or a test's stand-in.
Transport = Callable[[Alert, Smtp | None, float], Sent]


def _send(alert: Alert, smtp: Smtp | None, timeout: float) -> Sent:
    return send(alert, smtp, timeout=timeout)


@dataclass
class Delivered:
    """What one round did: alerts delivered, and failed sends (with what came back)."""

    delivered: int = 0
    failed: list[str] = field(default_factory=list)


class AlertSender:
    """Claims, sends and records the alerts due in one ledger's outbox, as ``worker``."""

    def __init__(
        self,
        ledger: Ledger,
        clock: Clock,
        worker: str,
        *,
        timeout: float = TIMEOUT,
        transport: Transport = _send,
        batch: int = 20,
        lease: timedelta | None = None,
        recorded: Callable[[alert_queries.Pending, Sent], None] | None = None,
    ) -> None:
        """``recorded`` is told of each outcome once its record is committed (tests aim kills by it)."""
        self.ledger = ledger
        self.clock = clock
        self.worker = worker
        self.timeout = timeout
        self.transport = transport
        self.batch = batch
        self.recorded = recorded
        #: How long a claim holds: every network call of a batch, with room to spare.
        self.lease = lease or timedelta(seconds=max(60.0, 3 * timeout * batch))

    def deliver_due(self) -> Delivered:
        """Send every alert due now, batch by batch; returns what was done."""
        done = Delivered()
        dead: dict[str, Sent] = {}  # routes that failed this round: not tried again until the next
        with reading(self.ledger) as session:
            due = alert_queries.next_try(session)
        while due is not None and due <= self.clock.now():
            now = self.clock.now()
            with writing(self.ledger) as session:
                claimed = alert_queries.claim(session, self.worker, now, now + self.lease, self.batch)
                smtp = alert_queries.smtp_settings(session) if claimed else None
            if not claimed:
                break
            for row in claimed:
                self._deliver(row, smtp, done, dead)
            if len(claimed) < self.batch:
                break
            with reading(self.ledger) as session:
                due = alert_queries.next_try(session)
        return done

    def _deliver(self, row: alert_queries.Pending, smtp: Smtp | None, done: Delivered, dead: dict[str, Sent]) -> None:
        sent = dead.get(row.route)
        if sent is None:
            sent = self.transport(Alert(row.occurrence_id, row.kind, row.route, row.data), smtp, self.timeout)
            if not sent.ok:
                dead[row.route] = sent
        now = self.clock.now()
        with writing(self.ledger) as session:
            if sent.ok:
                alert_queries.delivered(session, row.id, self.worker, now)
            else:
                alert_queries.failed(session, row, self.worker, now, sent.said)
        if self.recorded is not None:
            self.recorded(row, sent)
        if sent.ok:
            done.delivered += 1
        else:
            done.failed.append(f"{row.route}: {sent.said}")
            _log.warning("alert to %s for %s not delivered: %s", row.route, row.occurrence_id, sent.said)

    def run(self, stop: threading.Event, poll_seconds: float = 5.0) -> None:
        """Deliver until ``stop`` is set, a round every ``poll_seconds`` (the thread beside run_forever)."""
        while not stop.is_set():
            try:
                self.deliver_due()
            except UserError as exc:  # the ledger is away for a while: the next round tries again
                _log.warning("alerts: %s", exc)
            stop.wait(poll_seconds)

    def start(self, stop: threading.Event, poll_seconds: float = 5.0) -> threading.Thread:
        """:meth:`run` on a daemon thread of its own."""
        thread = threading.Thread(target=self.run, args=(stop, poll_seconds), name="tidemark-alerts", daemon=True)
        thread.start()
        return thread
