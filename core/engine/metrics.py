"""Prometheus metrics of a ledger, computed from the ledger at each scrape.

Nothing is counted in memory: every figure is read from the tables, so the
numbers are the same whichever engine (or none) serves them, and survive
restarts. Served on loopback by ``schedctl engine run --metrics-port N``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from threading import Thread
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.clock import Clock
from core.ledger.db import Ledger
from core.ledger.expired import expired_totals
from core.ledger.models import Attempt, EngineRow, Occurrence, Schedule
from core.ledger.states import TERMINAL, OccurrenceState, ScheduleState
from core.team.placement import BUILT_IN_LABELS

#: Attempts younger than this feed the due-to-start delay summary.
DELAY_WINDOW = timedelta(hours=24)

#: Upper bounds (seconds) of the due-to-completion histogram's buckets, from a second to a day.
COMPLETION_BUCKETS: tuple[float, ...] = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400)

#: The labels of ``tidemark_engine_last_seen_timestamp_seconds``.
ENGINE_LABELS = ("engine", "host", "user", "kind", "state", "version", "labels")


class LedgerCollector(Collector):
    """Reads the ledger's figures when Prometheus scrapes."""

    def __init__(self, ledger: Ledger, clock: Clock) -> None:
        self.ledger = ledger
        self.clock = clock

    def collect(self) -> Iterator[Metric]:
        now = self.clock.now()
        with self.ledger.read() as session:
            by_state = dict(session.execute(select(Occurrence.state, func.count()).group_by(Occurrence.state)).all())
            by_outcome = dict(session.execute(select(Attempt.outcome, func.count()).group_by(Attempt.outcome)).all())
            cursors = session.execute(
                select(Schedule.id, Schedule.cursor_utc).where(Schedule.state != ScheduleState.DISABLED)
            ).all()
            delays = session.execute(
                select(Attempt.started_at, Occurrence.due_at)
                .join(Occurrence, Occurrence.occurrence_id == Attempt.occurrence_id)
                .where(Attempt.attempt_number == 1, Attempt.started_at >= now - DELAY_WINDOW)
            ).all()
            oldest = session.scalar(
                select(func.min(Occurrence.updated_at)).where(Occurrence.state == OccurrenceState.UNKNOWN_EFFECT)
            )
            expired = expired_totals(session)
            completion = due_to_completion(session)
            engines = engines_last_seen(session)

        # An expired range stands for its occurrences: they count as MISFIRE_EXPIRED like rows do.
        # A range whose count is unknown adds nothing here; tidemark_expired_ranges still shows it.
        by_state[OccurrenceState.MISFIRE_EXPIRED] = (
            by_state.get(OccurrenceState.MISFIRE_EXPIRED, 0) + expired.occurrences
        )

        states = GaugeMetricFamily("tidemark_occurrences", "Occurrences in the ledger by state", labels=["state"])
        for state in OccurrenceState:
            states.add_metric([state.value], float(by_state.get(state, 0)))
        yield states

        yield GaugeMetricFamily(
            "tidemark_unknown_effects",
            "Occurrences whose effect is unknown and wait for a person",
            value=float(by_state.get(OccurrenceState.UNKNOWN_EFFECT, 0)),
        )
        yield CounterMetricFamily(
            "tidemark_misfires",
            "Occurrences expired by the misfire policy or catchUpWindow",
            value=float(by_state.get(OccurrenceState.MISFIRE_EXPIRED, 0)),
        )
        yield GaugeMetricFamily(
            "tidemark_expired_ranges",
            "Expired ranges: missed occurrences recorded as one entry each (their counted occurrences are in "
            "tidemark_misfires_total)",
            value=float(expired.ranges),
        )
        attempts = CounterMetricFamily("tidemark_attempts", "Attempts by the state they led to", labels=["outcome"])
        for outcome, count in sorted(by_outcome.items(), key=lambda kv: kv[0].value if kv[0] else ""):
            attempts.add_metric([outcome.value if outcome is not None else "pending"], float(count))
        yield attempts

        lag = GaugeMetricFamily(
            "tidemark_materialization_lag_seconds",
            "How far a schedule's materialization cursor is behind now",
            labels=["schedule"],
        )
        for schedule_id, cursor in cursors:
            behind = 0.0 if cursor is None or cursor >= now else (now - cursor).total_seconds()
            lag.add_metric([schedule_id], behind)
        yield lag

        seconds = [max(0.0, (started - due).total_seconds()) for started, due in delays if due is not None]
        summary = SummaryMetricFamily(
            "tidemark_due_to_start_delay_seconds",
            "From an occurrence's dispatch time to its first attempt's start, over the last 24 h",
            count_value=len(seconds),
            sum_value=sum(seconds),
        )
        yield summary
        yield GaugeMetricFamily(
            "tidemark_due_to_start_delay_max_seconds",
            "The longest due-to-start delay over the last 24 h",
            value=max(seconds, default=0.0),
        )
        yield GaugeMetricFamily(
            "tidemark_oldest_unresolved_age_seconds",
            "Age of the oldest occurrence waiting for a person (UNKNOWN_EFFECT)",
            value=0.0 if oldest is None else max(0.0, (now - oldest).total_seconds()),
        )
        yield completion
        yield engines


def due_to_completion(session: Session) -> HistogramMetricFamily:
    """Per schedule, from each finished occurrence's dispatch time to the end of its last attempt."""
    ended = func.max(Attempt.finished_at)
    rows = session.execute(
        select(Occurrence.schedule_id, Occurrence.due_at, ended)
        .join(Attempt, Attempt.occurrence_id == Occurrence.occurrence_id)
        .where(Occurrence.state.in_(TERMINAL), Occurrence.due_at.is_not(None), Attempt.finished_at.is_not(None))
        .group_by(Occurrence.occurrence_id, Occurrence.schedule_id, Occurrence.due_at)
    ).all()
    delays: dict[str, list[float]] = {}
    for schedule_id, due, finished in rows:
        if due is None or finished is None:  # filtered out above; here for the types
            continue
        delays.setdefault(schedule_id, []).append(max(0.0, (finished - due).total_seconds()))
    family = HistogramMetricFamily(
        "tidemark_due_to_completion_seconds",
        "From an occurrence's dispatch time to the end of its last attempt, for finished occurrences",
        labels=["schedule"],
    )
    for schedule_id, seconds in sorted(delays.items()):
        buckets = [(str(float(le)), float(sum(1 for s in seconds if s <= le))) for le in COMPLETION_BUCKETS]
        family.add_metric([schedule_id], [*buckets, ("+Inf", float(len(seconds)))], sum(seconds))
    return family


def engines_last_seen(session: Session) -> GaugeMetricFamily:
    """Every engine the ledger remembers, by who runs it where, with its last heartbeat."""
    family = GaugeMetricFamily(
        "tidemark_engine_last_seen_timestamp_seconds",
        "When each engine the ledger remembers last beat (Unix time)",
        labels=list(ENGINE_LABELS),
    )
    for row in session.scalars(select(EngineRow).order_by(EngineRow.host, EngineRow.engine_id)):
        extra = {k: v for k, v in (row.labels or {}).items() if k not in BUILT_IN_LABELS}
        labels = ",".join(f"{k}={v}" for k, v in sorted(extra.items()))
        values = [row.engine_id, row.host, row.os_user or "", row.kind.value, row.state.value, row.version or ""]
        family.add_metric([*values, labels], row.last_heartbeat.timestamp())
    return family


def registry_for(ledger: Ledger, clock: Clock) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LedgerCollector(ledger, clock))
    return registry


def serve(ledger: Ledger, clock: Clock, port: int, addr: str = "127.0.0.1") -> tuple[WSGIServer, Thread]:
    """Serve ``/metrics`` on ``addr:port`` in a background thread (port 0 picks a free one)."""
    return start_http_server(port, addr=addr, registry=registry_for(ledger, clock))
