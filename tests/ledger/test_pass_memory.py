"""An engine's memory and its write transactions stay small whatever the catalogue.

Counted, never timed: the bytes a pass leaves allocated per published schedule
(tracemalloc), the compiled revisions and kept expansions it holds, and the
statements each write transaction of a pass sends (what holds SQLite's write lock,
and a ``schedctl pause`` waits behind).
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import event

from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions
from core.ledger.compiled import cached_revisions, compiled_revision, forget_compiled, stored_spec
from core.ledger.db import SQLITE_CACHE_KIB, Ledger, open_ledger
from core.ledger.materialize import _RESUME, _RESUME_SIZE, forget_expansions
from core.spec.canonical import canonical_dict
from core.spec.validation import parse_spec

from . import DAILY, NOW
from .test_pass_cost import FILLER, MINUTELY, publish_many

#: Bytes a compiled revision kept in the cache may cost (0.8 to 2.2 KiB for the cases below,
#: whose revisions share one rule; 2.3 to 5.1 KiB when it kept the parsed spec's models; 3.3 to
#: 6.2 KiB with two cache entries per revision and values not shared between specs, 8 KiB and
#: more when the cache kept the text).
REVISION_BYTES = 2560
#: Bytes a pass may leave allocated per schedule it materialized: its compiled revision
#: and the engine's notes on it (the kept expansions are bounded by their number):
#: 3.7 KiB on SQLite; 4.7 to 6.5 KiB when the compiled revision kept the spec's models,
#: 5.6 to 7.4 KiB before the values were shared.
SCHEDULE_BYTES = 5 * 1024
#: Statements one write transaction of a pass sends at most: well under a millisecond
#: each, so SQLite's write lock is held some 50 ms at most (docs/benchmarks.md, "Scale").
MOST_STATEMENTS = 100


def _texts(base: dict[str, Any], count: int) -> list[str]:
    """``count`` stored revisions of ``base``, one per schedule id, as a ledger stores them."""
    return [
        json.dumps(canonical_dict(parse_spec({**base, "scheduleId": f"kept-{i:04d}"}), cutover_at=NOW))
        for i in range(count)
    ]


@contextmanager
def retained() -> Iterator[Callable[[], int]]:
    """The bytes allocated in the block and still held when the returned function is called."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()

        def held() -> int:
            gc.collect()
            return sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(before, "filename"))

        yield held
    finally:
        tracemalloc.stop()


EXCLUDING = {**DAILY, "exclude": ["2026-12-25", "2026-12-31T02:30:00"], "end": "2027-06-01T00:00:00"}
BUSINESS = {**DAILY, "businessCalendar": {"weekend": ["SA", "SU"]}, "holidayPolicy": "NEXT_BUSINESS_DAY"}


@pytest.mark.parametrize(
    "base",
    [DAILY, MINUTELY, EXCLUDING, BUSINESS],
    ids=["daily_new_york", "interval_every_minute", "daily_with_exclusions_and_end", "business_days"],
)
def test_a_cached_revision_is_small_and_keeps_no_copy_of_its_text(base: dict[str, Any]) -> None:
    forget_compiled()
    texts = _texts(base, 50)
    references = [sys.getrefcount(text) for text in texts]
    with retained() as held:
        kept = [compiled_revision(text) for text in texts]
        per_revision = held() / len(texts)
    assert [sys.getrefcount(text) for text in texts] == references  # found by a digest, not the text
    assert per_revision <= REVISION_BYTES, f"{per_revision:.0f} bytes per cached revision"
    assert [compiled_revision(text) for text in texts] == kept  # and found again
    assert cached_revisions() == len(texts)


def test_a_pass_keeps_a_few_kib_per_schedule_and_a_bounded_number_of_expansions(
    ledger: Ledger, clock: FixedClock
) -> None:
    """10 schedules published and materialized, then 30 more, then 120 more: what a pass
    leaves allocated grows by a few KiB per schedule it materialized (the difference
    between the two, so that what any such pass costs once is left out), and the
    expansions kept to go on from do not grow with the catalogue."""
    forget_compiled()
    forget_expansions()
    engine = Engine(ledger, clock, EngineOptions(max_workers=1))
    held_after: list[int] = []
    published = 0
    for more in (10, 30, 120):
        publish_many(ledger, clock, FILLER, [f"filler-{i:04d}" for i in range(published, published + more)])
        published += more
        with retained() as held:
            assert engine.run_once().materialized == more * 2
            held_after.append(held())
    per_schedule = (held_after[2] - held_after[1]) / (120 - 30)
    assert per_schedule <= SCHEDULE_BYTES, f"{per_schedule:.0f} bytes per schedule"
    assert cached_revisions() == published
    assert len(_RESUME) <= _RESUME_SIZE < published


def test_cached_specs_share_the_values_they_repeat() -> None:
    """Two schedules' revisions with the same zone, rule and windows hold one instance of
    each, not one per revision: a catalogue's repeated strings and durations cost once."""
    forget_compiled()
    first, second = (stored_spec(text) for text in _texts(EXCLUDING, 2))
    assert first.schedule_id != second.schedule_id
    for name in ("time_zone", "rule", "start", "end", "lateness_window", "horizon"):
        assert getattr(first, name) is getattr(second, name), name
    assert first.task is not None and second.task is not None
    assert first.task.argv[0] is second.task.argv[0]
    assert first.retry.initial_backoff is second.retry.initial_backoff
    assert first.exclude == second.exclude and first.exclude is not second.exclude  # a list is the spec's own


@settings(max_examples=40, deadline=None)
@given(
    lateness=st.integers(min_value=1, max_value=86_400),
    multiplier=st.sampled_from([1, 1.0, 2, 2.0, 1.5, 3]),
    start=st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1)).map(
        lambda moment: moment.replace(microsecond=0)
    ),
)
def test_a_cached_spec_is_the_spec_its_text_says(lateness: int, multiplier: float, start: datetime) -> None:
    """Whatever other revisions the cache shares values with, a revision's spec read from
    the cache equals the one parsed from its text, value for value and type for type
    (``2`` stays an int beside an earlier ``2.0``, a start keeps its own time)."""
    base = {**DAILY, "latenessWindow": f"PT{lateness}S", "start": start.isoformat()}
    base["retry"] = {"maxAttempts": 3, "initialBackoff": "PT30S", "multiplier": multiplier, "maxBackoff": "PT10M"}
    text = _texts(base, 1)[0]
    cached = stored_spec(text)
    parsed = parse_spec(json.loads(text), check_rule=False)
    assert cached == parsed
    for name, value in parsed.__dict__.items():
        assert type(getattr(cached, name)) is type(value), name
    assert type(cached.retry.multiplier) is type(parsed.retry.multiplier)
    assert stored_spec(text) is cached


def test_sqlite_connections_keep_a_small_page_cache(tmp_path: Path, clock: FixedClock) -> None:
    """Each SQLite connection keeps 512 KiB of pages, not SQLite's 2 MiB: an engine's
    workers each hold one, and the operating system caches the file's pages anyway."""
    opened = open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}", clock)
    try:
        with opened.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA cache_size").scalar() == SQLITE_CACHE_KIB == -512
    finally:
        opened.close()


@contextmanager
def statements_per_write(ledger: Ledger) -> Iterator[list[int]]:
    """The statements each transaction that wrote sends, as they commit."""
    sent: list[int] = []
    counts: dict[int, list[int]] = {}  # connection -> [statements, writes] of its open transaction
    lock = threading.Lock()

    def begun(conn: Any) -> None:
        with lock:
            counts[id(conn)] = [0, 0]

    def before(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        with lock:
            count = counts.setdefault(id(conn), [0, 0])
            count[0] += 1
            count[1] += statement.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))

    def committed(conn: Any) -> None:
        with lock:
            count = counts.pop(id(conn), [0, 0])
            if count[1]:
                sent.append(count[0])

    bind = ledger.engine
    listeners = [("begin", begun), ("before_cursor_execute", before), ("commit", committed)]
    for name, listener in listeners:
        event.listen(bind, name, listener)
    try:
        yield sent
    finally:
        for name, listener in listeners:
            event.remove(bind, name, listener)


def test_no_write_transaction_of_a_pass_grows_with_what_is_due(ledger: Ledger, clock: FixedClock) -> None:
    """60 schedules every minute on the same anchor: the pass that materializes their hour
    and the one where all of them come due at once write in transactions of a bounded
    size, many of them, never one for the whole catalogue."""
    ids = [f"minutely-{i:03d}" for i in range(60)]
    publish_many(ledger, clock, {**MINUTELY, "latenessWindow": "PT1H"}, ids)
    engine = Engine(ledger, clock, EngineOptions(max_workers=2))
    with statements_per_write(ledger) as first:
        report = engine.run_once()
    assert report.materialized >= 60 * 60 and report.promoted == 60
    clock.advance(timedelta(minutes=1))
    with statements_per_write(ledger) as due:
        report = engine.run_once()
    assert report.promoted == 60
    assert max(first) <= MOST_STATEMENTS, sorted(first)[-5:]
    assert max(due) <= MOST_STATEMENTS, sorted(due)[-5:]
