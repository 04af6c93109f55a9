"""The event log in words: what each kind says, its note, and who decided, table by table."""

from __future__ import annotations

from typing import Any

import pytest

from core.ledger.event_types import EventKind
from core.ledger.event_words import actor_text, decision_sentence, event_note, event_what
from core.team.actor import Actor

ALICE = Actor("alice", "alpha")
ENGINE = "1a2b3c4d-0000-7000-8000-000000000001"

WHAT: list[tuple[str, dict[str, Any], str, str | None]] = [
    ("schedule.published", {"revision": 3, "cancelled": 0}, "published revision 3", None),
    ("schedule.published", {"revision": 4, "cancelled": 2}, "published revision 4, cancelling 2 occurrences", None),
    ("schedule.paused", {"from": "active", "note": "disk full"}, "paused", "disk full"),
    ("schedule.resumed", {"from": "paused", "note": None}, "resumed", None),
    ("schedule.disabled", {"from": "active", "note": ""}, "disabled", None),
    (
        "schedule.unreadable",
        {"revision": 2, "problems": ["a", "b"]},
        "held: revision 2 cannot be read or expanded",
        "a; b",
    ),
    (
        "schedule.drift_found",
        {"tzdbVersion": "2027a", "fromTzdb": ["2026f"], "occurrences": 3, "largestShift": 3600},
        "tzdata 2027a would move 3 future runs; kept as materialized",
        None,
    ),
    (
        "schedule.drift_kept",
        {"tzdbVersion": "2027a", "occurrences": 1, "note": "ok"},
        "kept 1 drifted run as materialized",
        "ok",
    ),
    (
        "schedule.drift_kept",
        {"tzdbVersion": "2027a", "occurrences": 2, "note": None, "engineVersion": "0.2.0"},
        "kept 2 runs Tidemark 0.2.0 computes otherwise as materialized",
        None,
    ),
    (
        "schedule.shadow_differs",
        {"engineVersion": "0.2.0", "fromEngineVersion": "0.1.0", "tzdbVersion": "2027a", "occurrences": 3},
        "Tidemark 0.2.0 computes 3 future runs otherwise (last engine 0.1.0); kept as materialized",
        None,
    ),
    ("occurrences.materialized", {"inserted": 1}, "planned 1 occurrence", None),
    ("occurrences.materialized", {"inserted": 1200}, "planned 1,200 occurrences", None),
    (
        "occurrences.expired",
        {"fromUtc": "2026-03-01T00:00:00Z", "toUtc": "2026-03-02T00:00:00Z", "occurrences": 5, "reason": "outage"},
        "expired 5 occurrences from 2026-03-01T00:00:00Z to 2026-03-02T00:00:00Z",
        "outage",
    ),
    ("occurrence.transitioned", {"from": "DUE", "to": "RUNNING", "reason": "claimed"}, "DUE → RUNNING", "claimed"),
    (
        "occurrence.transitioned",
        {"from": "UNKNOWN_EFFECT", "to": "RETRY_WAIT", "reason": "r", "decision": "not-happened", "note": "no mail"},
        "reconciled: did not happen",
        "no mail",
    ),
    (
        "occurrence.transitioned",
        {"from": "UNKNOWN_EFFECT", "to": "SUCCEEDED", "reason": "r", "decision": "happened", "note": None},
        "reconciled: it happened",
        None,
    ),
    ("occurrence.transitioned", {"decision": "abandon", "note": None}, "reconciled: gave up on it", None),
    ("occurrence.created", {"kind": "manual", "reason": "run now by a person"}, "run now", "run now by a person"),
    ("occurrence.created", {"kind": "backfill", "reason": "x", "of": "occ-1"}, "backfill of occ-1", "x"),
    ("occurrence.created", {"kind": "scheduled", "reason": "after"}, "next run appointed", "after"),
    ("occurrence.acknowledged", {"action": "acknowledged", "note": "known"}, "failure acknowledged", "known"),
    ("occurrence.acknowledged", {"action": "retried", "retriedAs": "occ-2"}, "failure: run again as occ-2", None),
    ("attempt.ignored", {"attempt": 2, "reason": "late"}, "ignored a late result of attempt 2", "late"),
    (
        "attempt.orphaned",
        {"attempt": 1, "pid": 42, "host": "box", "reason": "gone"},
        "watching attempt 1's task (pid 42 on box)",
        "gone",
    ),
    ("ledger.fenced", {"epoch": 7, "note": "moved"}, "fenced the ledger (epoch 7)", "moved"),
    ("engine.worker_died", {"worker": "w1", "error": "ValueError: boom"}, "a worker died (w1)", "ValueError: boom"),
    (
        "engine.found_gone",
        {"engine": ENGINE, "pid": 9, "host": "beta"},
        "found engine 1a2b3c4d gone (pid 9 on beta)",
        None,
    ),
    (
        "engine.started",
        {"engine": ENGINE, "kind": "headless", "pid": 9, "host": "beta"},
        "engine 1a2b3c4d started (headless, pid 9 on beta)",
        None,
    ),
    ("engine.stopped", {"engine": ENGINE}, "engine 1a2b3c4d stopped", None),
    ("some.future_kind", {"x": 1}, "some.future_kind", None),
    ("occurrence.created", {"kind": "backfill", "of": None}, "backfill", None),
]


@pytest.mark.parametrize(("kind", "data", "what", "note"), WHAT, ids=[f"{w[0]}-{i}" for i, w in enumerate(WHAT)])
def test_what_and_note(kind: str, data: dict[str, Any], what: str, note: str | None) -> None:
    assert event_what(kind, data) == what
    assert event_note(kind, data) == note


def test_every_kind_has_its_own_words() -> None:
    assert {kind for kind, *_ in WHAT} >= {k.value for k in EventKind}
    for kind in EventKind:
        assert event_what(kind.value, {}) != kind.value, kind


@pytest.mark.parametrize(
    ("actor", "text"),
    [
        (None, "—"),
        (Actor("alice", "alpha"), "alice@alpha"),
        (Actor("alice", "alpha", "alice"), "alice@alpha (claimed; database role alice)"),
        (Actor("alice", "alpha", "tidemark_publisher"), "alice@alpha (claimed; database role tidemark_publisher)"),
    ],
)
def test_actor_text(actor: Actor | None, text: str) -> None:
    assert actor_text(actor) == text


@pytest.mark.parametrize(
    ("kind", "data", "actor", "sentence"),
    [
        ("occurrence.transitioned", {"decision": "not-happened"}, ALICE, "alice@alpha said it did not happen, 10:02"),
        ("occurrence.transitioned", {"decision": "happened"}, ALICE, "alice@alpha said it happened, 10:02"),
        ("occurrence.transitioned", {"decision": "abandon"}, ALICE, "alice@alpha gave up on it, 10:02"),
        ("occurrence.transitioned", {"decision": "happened"}, None, "a person said it happened, 10:02"),
        ("occurrence.acknowledged", {"action": "acknowledged"}, ALICE, "alice@alpha acknowledged the failure, 10:02"),
        ("occurrence.acknowledged", {"action": "retried"}, ALICE, "alice@alpha ran it again, 10:02"),
        ("schedule.paused", {}, Actor("bob", "beta"), "paused by bob@beta, 10:02"),
        ("schedule.paused", {}, None, "paused, 10:02"),
        (
            "schedule.paused",
            {},
            Actor("bob", "beta", "tm_alice"),
            "paused by bob@beta (claimed; database role tm_alice), 10:02",
        ),
        (
            "occurrence.transitioned",
            {"decision": "happened"},
            Actor("bob", "beta", "bob"),
            "bob@beta (claimed; database role bob) said it happened, 10:02",
        ),
        ("schedule.resumed", {}, ALICE, "resumed by alice@alpha, 10:02"),
        ("schedule.disabled", {}, ALICE, "disabled by alice@alpha, 10:02"),
        ("schedule.published", {"revision": 3}, ALICE, "revision 3 published by alice@alpha, 10:02"),
        ("occurrence.created", {"kind": "manual"}, ALICE, "run now, asked by alice@alpha, 10:02"),
        ("occurrence.transitioned", {"from": "DUE", "to": "RUNNING"}, ALICE, None),
        ("occurrence.created", {"kind": "scheduled"}, ALICE, None),
        ("engine.started", {"engine": ENGINE}, ALICE, None),
    ],
)
def test_decision_sentence(kind: str, data: dict[str, Any], actor: Actor | None, sentence: str | None) -> None:
    assert decision_sentence(kind, data, actor, "10:02") == sentence
