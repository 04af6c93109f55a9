"""What an engine keeps of each live revision: the values expansion reads, not the spec's models,
and one parsed rule and one dateutil rule for every revision that has the same.

Counted, never timed: objects alive after a pass, identities of what revisions share, and the
rows a cached revision expands to against a revision compiled on its own.
"""

from __future__ import annotations

import gc
import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.enums import OverlapPolicy
from core.ledger.compiled import cached_revisions, compiled_revision, forget_compiled, stored_run, stored_spec
from core.ledger.db import Ledger
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import expand
from core.spec.canonical import canonical_dict
from core.spec.facts import RunFacts, SpecFacts
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec

from . import DAILY, MINUTELY_UTC, NOW
from .test_pass_cost import FILLER, publish_many


def _text(base: dict[str, Any], **overrides: Any) -> str:
    """A stored revision's text: ``base`` with camelCase overrides, as a ledger stores it."""
    return json.dumps(canonical_dict(parse_spec({**base, **overrides}), cutover_at=NOW))


def _live_specs() -> int:
    gc.collect()
    return sum(isinstance(thing, ScheduleSpec) for thing in gc.get_objects())


def test_revisions_with_one_rule_and_start_share_one_compiled_rule() -> None:
    forget_compiled()
    first, second = (compiled_revision(_text(DAILY, scheduleId=f"shared-{i}")) for i in range(2))
    later = compiled_revision(_text(DAILY, scheduleId="shared-later", start="2026-02-01T00:00:00"))
    other = compiled_revision(_text(DAILY, scheduleId="shared-other", rule="FREQ=DAILY;BYHOUR=3;BYMINUTE=0"))
    assert first is not second
    assert first.parsed is second.parsed is later.parsed  # one rule text, one parsed rule
    assert first.rule is second.rule  # and one dateutil rule for one start and bound
    assert later.rule is not first.rule and other.rule is not first.rule
    assert other.parsed is not first.parsed
    assert first.known_counts is not second.known_counts  # what a walk finds stays each schedule's own


def test_a_different_end_gives_its_own_rule_and_bound() -> None:
    forget_compiled()
    open_ended = compiled_revision(_text(DAILY, scheduleId="ends-never"))
    ending = compiled_revision(_text(DAILY, scheduleId="ends-soon", end="2026-03-10T00:00:00"))
    assert ending.parsed is open_ended.parsed
    assert ending.rule is not open_ended.rule
    assert list(ending.rule or [])[-1] == datetime(2026, 3, 9, 2, 30)


@pytest.mark.parametrize(
    "base",
    [
        DAILY,
        {**DAILY, "exclude": ["2026-03-04"], "jitter": "PT5M", "latenessWindow": "PT1M"},
        {**FILLER, "rule": "FREQ=MONTHLY;BYMONTHDAY=31", "invalidDatePolicy": "BACKWARD"},
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": "every-five",
            "revision": 1,
            "timeZone": "Europe/Berlin",
            "kind": "interval",
            "every": "PT5M",
            "anchor": "2026-01-01T00:00:00Z",
            "horizon": "PT1H",
            "task": {"argv": ["/bin/true"]},
        },
    ],
    ids=["daily_new_york", "excluded_jittered", "month_end_moved", "interval_berlin"],
)
def test_a_cached_revision_keeps_the_facts_not_the_models(base: dict[str, Any]) -> None:
    """The cached form holds no spec, yet says every fact its spec says and gives the whole spec
    when asked (the one the cache keeps for readers of whole specs)."""
    forget_compiled()
    text = _text(base)
    compiled = compiled_revision(text)
    parsed = parse_spec(json.loads(text), check_rule=False)
    assert compiled.held is None
    assert compiled.facts == SpecFacts.of(parsed)
    assert compiled.spec == parsed
    assert compiled.spec is stored_spec(text)  # had again through the cache, then kept there


@settings(max_examples=30, deadline=None)
@given(
    rule=st.sampled_from(
        [
            "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
            "FREQ=WEEKLY;BYDAY=MO,FR;BYHOUR=9;BYMINUTE=0",
            "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=1;BYMINUTE=15",
            "FREQ=HOURLY;INTERVAL=7;COUNT=40",
            "FREQ=MINUTELY;INTERVAL=45;BYHOUR=1,2,3",
        ]
    ),
    start=st.datetimes(min_value=datetime(2025, 6, 1), max_value=datetime(2026, 6, 1)).map(
        lambda moment: moment.replace(second=0, microsecond=0)
    ),
    zone=st.sampled_from(["America/New_York", "Europe/London", "Australia/Lord_Howe", "UTC"]),
)
def test_shared_rules_expand_as_a_rule_compiled_alone(rule: str, start: datetime, zone: str) -> None:
    """However many revisions share a rule, each expands to the rows its own spec compiled on its
    own gives (a DST spring and fall inside the range)."""
    base = {**DAILY, "rule": rule, "start": start.isoformat(), "timeZone": zone}
    texts = [_text(base, scheduleId=f"alike-{i}") for i in range(3)]
    lo, hi = NOW - timedelta(days=200), NOW + timedelta(days=250)
    for text in texts:
        alone = compile_schedule(parse_spec(json.loads(text), check_rule=False))
        assert list(expand(compiled_revision(text), lo, hi)) == list(expand(alone, lo, hi))


def test_a_pass_keeps_no_spec_of_a_schedule_it_does_not_run(ledger: Ledger, clock: FixedClock) -> None:
    """40 schedules published and materialized, none due: the engine keeps each one's compiled
    revision and no ``ScheduleSpec`` for any of them."""
    forget_compiled()
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    engine.run_once()
    before = _live_specs()
    publish_many(ledger, clock, FILLER, [f"quiet-{i:03d}" for i in range(40)])
    report = engine.run_once()
    assert report.materialized >= 40
    assert report.started == 0
    assert cached_revisions() == 40
    assert _live_specs() - before <= 0


def test_cached_specs_share_a_retry_they_say_alike() -> None:
    forget_compiled()
    first, second = (stored_spec(_text(DAILY, scheduleId=f"retry-{i}")) for i in range(2))
    other = stored_spec(_text(DAILY, scheduleId="retry-other", retry={"maxAttempts": 5}))
    assert first.retry is second.retry
    assert other.retry is not first.retry and other.retry.max_attempts == 5
    assert first.task is not second.task  # a task holds lists: each spec keeps its own


def test_a_pass_that_writes_many_rows_hands_free_memory_back(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass that writes TRIM_AFTER_ROWS rows or more asks the allocator to hand its free pages
    back; a pass that writes fewer does not."""
    from core.engine import plan

    trims: list[int] = []
    monkeypatch.setattr(plan, "malloc_trim", lambda: trims.append)
    monkeypatch.setattr(plan, "TRIM_AFTER_ROWS", 30)
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    publish_many(ledger, clock, FILLER, ["few-0"])
    assert 0 < engine.run_once().materialized < 30
    assert trims == []
    publish_many(ledger, clock, FILLER, [f"many-{i:02d}" for i in range(40)])
    assert engine.run_once().materialized >= 30
    assert trims and set(trims) == {0}


#: Every minute, a task that succeeds at once; its overlap and retry said differently from the defaults.
RUNS_EACH_MINUTE: dict[str, Any] = {
    **MINUTELY_UTC,
    "horizon": "PT5M",
    "overlapPolicy": "QUEUE_ONE",
    "retry": {"maxAttempts": 2},
    "task": {"argv": ["/bin/true"], "effect": "idempotent"},
}


def test_a_pass_that_runs_tasks_keeps_what_runs_read_not_their_specs(ledger: Ledger, clock: FixedClock) -> None:
    """Five every-minute schedules each run a task: the engine keeps, for each revision it ran,
    the task, retry and overlap policy (:class:`RunFacts`), and no ``ScheduleSpec`` at all."""
    forget_compiled()
    engine = Engine(ledger, clock, EngineOptions(max_workers=2))
    engine.run_once()
    before = _live_specs()
    ids = [f"runs-{i}" for i in range(5)]
    publish_many(ledger, clock, RUNS_EACH_MINUTE, ids)
    engine.run_once()
    clock.advance(timedelta(minutes=1))
    report = engine.run_once()
    assert report.started >= 5
    assert sum(report.outcomes.values()) >= 5
    assert _live_specs() - before <= 0
    with ledger.read() as session:
        runs = [engine.context.specs.of(session, sid, 1) for sid in ids]
    assert runs[0] == RunFacts.of(parse_spec({**RUNS_EACH_MINUTE, "scheduleId": "runs-0"}))
    assert runs[0].overlap_policy is OverlapPolicy.QUEUE_ONE and runs[0].retry.max_attempts == 2
    assert len({id(run.retry) for run in runs}) == 1  # one retry said alike, shared
    assert _live_specs() - before <= 0  # reading them again parsed nothing that stays


@settings(max_examples=25, deadline=None)
@given(
    overlap=st.sampled_from(list(OverlapPolicy)),
    attempts=st.integers(min_value=1, max_value=9),
    effect=st.sampled_from(["idempotent", "non_idempotent"]),
    delay=st.sampled_from([None, "PT5M", "PT1H30M"]),
)
def test_run_facts_say_what_the_spec_says(
    overlap: OverlapPolicy, attempts: int, effect: str, delay: str | None
) -> None:
    """What a revision's runs read, through the cache, is the spec's own: task, retry, overlap,
    kind, delay (an after_completion schedule) and the ids."""
    data: dict[str, Any] = {
        **DAILY,
        "scheduleId": f"facts-{overlap.value}-{attempts}-{effect}-{delay}".lower(),
        "overlapPolicy": overlap.value,
        "retry": {"maxAttempts": attempts},
        "task": {"argv": ["/bin/true", "x"], "effect": effect},
    }
    if delay is not None:
        dropped = ("rule", "gapPolicy", "foldPolicy")
        data = {k: v for k, v in data.items() if k not in dropped} | {"kind": "after_completion", "delay": delay}
    text = _text(data)
    run = stored_run(text)
    spec = parse_spec(json.loads(text), check_rule=False)
    assert run == RunFacts.of(spec)
    assert (run.kind, run.delay, run.overlap_policy, run.retry, run.task) == (
        spec.kind,
        spec.delay,
        spec.overlap_policy,
        spec.retry,
        spec.task,
    )
    assert stored_run(text) is run
