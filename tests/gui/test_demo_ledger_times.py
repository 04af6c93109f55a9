"""The demo ledger's attempts last what their tasks took: the hanging task is killed after its
one-second timeout and the failing one runs for milliseconds, and the cards and the detail pane
say so (never "after 0 s" for a task that ran)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from core.clock import FixedClock
from core.ledger.monitor_queries import attempts_of
from core.ledger.queries import OccurrenceFilter, list_occurrences
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.attention import AttentionView
from scheduler_gui.monitor.demo_ledger import populate_demo_ledger
from scheduler_gui.monitor.detail import OccurrenceDetail
from scheduler_gui.monitor.timetext import run_time_text


@pytest.fixture
def demo(ctx: AppContext, clock: FixedClock) -> AppContext:
    populate_demo_ledger(ctx, days=1, outage=False)
    return ctx


def _attempts(ctx: AppContext, schedule_id: str) -> list:
    with ctx.ledger.read() as session:
        occurrences = list_occurrences(session, OccurrenceFilter(schedule_id=schedule_id)).rows
        return [a for occ in occurrences for a in attempts_of(session, occ.occurrence_id)]


def test_each_simulated_attempt_lasts_what_its_task_took(demo: AppContext) -> None:
    hung = _attempts(demo, "inbox-sync")
    assert hung and all(a.error_class == "timeout" for a in hung)
    # killed by its 1 s timeout: at least the timeout, and not minutes
    assert all(timedelta(seconds=1) <= a.duration < timedelta(seconds=30) for a in hung), [a.duration for a in hung]
    failed = _attempts(demo, "nightly-backup")
    assert failed and all(a.exit_status == 3 for a in failed)
    assert all(timedelta(0) < a.duration < timedelta(seconds=30) for a in failed)
    # The next attempt starts after the one before it ended (the clock never went backwards).
    starts = sorted((a.started_at, a.finished_at) for a in failed + hung)
    assert all(end >= start for start, end in starts)


def test_the_cards_and_the_detail_say_how_long_the_attempt_ran(demo: AppContext, qtbot) -> None:
    view = AttentionView(demo)
    qtbot.addWidget(view)
    view.resize(900, 700)
    with qtbot.waitSignal(view.loaded, timeout=20_000):
        view.reload()
    texts = {card.item.occurrence.schedule_id: card.attempt.text() for card in view.cards.values()}
    assert "inbox-sync" in texts and "nightly-backup" in texts
    assert re.search(r"timeout · started .* · ran [1-9]\d* s$", texts["inbox-sync"]), texts["inbox-sync"]
    assert re.search(r"exit 3 · started .* · ran (\d+ ms|[1-9]\d* s)$", texts["nightly-backup"])
    assert not any(text.endswith("ran 0 s") for text in texts.values())

    hung = next(card for card in view.cards.values() if card.item.occurrence.schedule_id == "inbox-sync")
    detail = OccurrenceDetail(demo)
    qtbot.addWidget(detail)
    with qtbot.waitSignal(detail.loaded, timeout=20_000):
        detail.show_occurrence(hung.item.occurrence.occurrence_id)
    assert re.search(r"timeout after [1-9]\d* s", detail.text()), detail.text()
    assert "after 0 s" not in detail.text()


@pytest.mark.parametrize(
    ("duration", "expected"),
    [
        pytest.param(timedelta(microseconds=300), "1 ms", id="under_a_millisecond_is_not_nothing"),
        pytest.param(timedelta(milliseconds=4), "4 ms", id="milliseconds"),
        pytest.param(timedelta(milliseconds=999), "999 ms", id="just_under_a_second"),
        pytest.param(timedelta(seconds=1, milliseconds=20), "1 s", id="a_second"),
        pytest.param(timedelta(0), "0 s", id="nothing"),
        pytest.param(timedelta(minutes=3, seconds=5), "3 min", id="minutes"),
        pytest.param(None, "—", id="still_running"),
    ],
)
def test_run_time_text(duration: timedelta | None, expected: str) -> None:
    assert run_time_text(duration) == expected
