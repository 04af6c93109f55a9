"""The Prometheus metrics, scraped in-process and parsed with prometheus_client's parser,
on both databases (docs/metrics.md)."""

from __future__ import annotations

import sys
from datetime import timedelta
from typing import Any

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from core.clock import FixedClock
from core.engine.engine import Engine
from core.engine.metrics import COMPLETION_BUCKETS, registry_for
from core.engine.presence import announce
from core.ledger.db import Ledger
from core.ledger.publish import publish
from core.ledger.states import EngineKind
from core.team.actor import Actor
from core.team.placement import Placement

from . import spec, utc

PY = sys.executable
ECHO = {"argv": [PY, "-c", "print('ok')"]}
KILLED = {"argv": [PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"]}

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(ledger: Ledger, clock: FixedClock) -> tuple[dict[str, str], Samples]:
    """Each family's type by name, and every sample by (name, sorted labels)."""
    text = generate_latest(registry_for(ledger, clock)).decode()
    types: dict[str, str] = {}
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        types[family.name] = family.type
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return types, samples


def put(ledger: Ledger, clock: FixedClock, **overrides: Any) -> None:
    with ledger.write() as session:
        publish(session, spec(**overrides), clock)


def test_due_to_completion_is_a_histogram_per_schedule(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, cutoverAt="2026-03-01T12:00:00Z", task=ECHO)
    put(ledger, clock, scheduleId="late-report", cutoverAt="2026-03-01T12:00:00Z", task=ECHO)
    clock.set(utc("2026-03-02T07:30:10Z"))
    Engine(ledger, clock).run_once()  # both run 10 s after they were due and succeed at once
    clock.set(utc("2026-03-03T07:40:00Z"))
    Engine(ledger, clock).run_once()  # the next day's run ends 10 minutes late
    types, samples = scrape(ledger, clock)
    assert types["tidemark_due_to_completion_seconds"] == "histogram"
    one = (("schedule", "daily-ops-summary"),)
    assert samples[("tidemark_due_to_completion_seconds_count", one)] == 2.0
    assert samples[("tidemark_due_to_completion_seconds_sum", one)] == 10.0 + 600.0
    buckets = {
        float(dict(labels)["le"]): value
        for (name, labels), value in samples.items()
        if name == "tidemark_due_to_completion_seconds_bucket" and dict(labels)["schedule"] == "daily-ops-summary"
    }
    assert sorted(buckets) == [*COMPLETION_BUCKETS, float("inf")]
    assert buckets[5.0] == 0.0 and buckets[15.0] == 1.0 and buckets[300.0] == 1.0 and buckets[600.0] == 2.0
    assert buckets[float("inf")] == 2.0
    assert samples[("tidemark_due_to_completion_seconds_count", (("schedule", "late-report"),))] == 2.0


def test_oldest_unresolved_age_unknown_effects_and_attempts(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, cutoverAt="2026-03-02T00:00:00Z", task=KILLED)
    clock.set(utc("2026-03-02T07:30:10Z"))
    Engine(ledger, clock).run_once()  # the task dies with its outcome unknown
    types, samples = scrape(ledger, clock)
    assert samples[("tidemark_oldest_unresolved_age_seconds", ())] == 0.0
    clock.advance(timedelta(minutes=90))
    types, samples = scrape(ledger, clock)
    assert types["tidemark_oldest_unresolved_age_seconds"] == "gauge"
    assert samples[("tidemark_oldest_unresolved_age_seconds", ())] == 5400.0
    assert types["tidemark_unknown_effects"] == "gauge"
    assert samples[("tidemark_unknown_effects", ())] == 1.0
    assert types["tidemark_attempts"] == "counter"
    assert samples[("tidemark_attempts_total", (("outcome", "UNKNOWN_EFFECT"),))] == 1.0
    assert ("tidemark_due_to_completion_seconds_count", (("schedule", "daily-ops-summary"),)) not in samples


def test_engines_seen_with_their_labels_and_last_seen(ledger: Ledger, clock: FixedClock) -> None:
    gpu = Placement.of(Actor("ana", "alpha", "engine"), {"gpu": "yes", "zone": "eu"})
    announce(ledger, clock, EngineKind.HEADLESS, host="alpha", pid=4711, placement=gpu)
    clock.advance(timedelta(seconds=30))
    announce(ledger, clock, EngineKind.HEADLESS, host="beta", pid=99, placement=Placement.of(Actor("bo", "beta", "e")))
    types, samples = scrape(ledger, clock)
    assert types["tidemark_engine_last_seen_timestamp_seconds"] == "gauge"
    seen = {
        (dict(labels)["host"], dict(labels)["user"], dict(labels)["labels"], dict(labels)["kind"]): value
        for (name, labels), value in samples.items()
        if name == "tidemark_engine_last_seen_timestamp_seconds"
    }
    assert seen == {
        ("alpha", "ana", "gpu=yes,zone=eu", "headless"): (clock.now() - timedelta(seconds=30)).timestamp(),
        ("beta", "bo", "", "headless"): clock.now().timestamp(),
    }
    assert all(
        set(dict(labels)) == {"engine", "host", "user", "kind", "state", "version", "labels"}
        for (name, labels) in samples
        if name == "tidemark_engine_last_seen_timestamp_seconds"
    )
