"""The summary follows every edit and says what is missing in words: one short
sentence, then each policy on a line of its own, seen from the preview's start."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from consequence_support import open_designer, settle, table_rows

from core.clock import FixedClock
from core.errors import Problem
from scheduler_gui.context import AppContext
from scheduler_gui.designer.summary import SummaryLine, problem_in_words
from scheduler_gui.workspace.document import SpecDocument


def _summary(document: SpecDocument, ctx: AppContext, qtbot) -> SummaryLine:
    line = SummaryLine(document, ctx)
    qtbot.addWidget(line)
    qtbot.waitUntil(lambda: line.plain_text().startswith("Every day"), timeout=5000)
    return line


def test_shows_the_schedule_in_words(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    line = _summary(document, ctx, qtbot)
    assert line.plain_text().startswith("Every day at 02:30 in America/New_York.\n")
    assert "Next gap: Sun 2027-03-14" in line.plain_text()
    assert "skips it (gapPolicy SKIP)" in line.plain_text()
    assert line.wordWrap()
    assert line.accessibleName() == "Schedule summary"


def test_follows_edits_and_undo(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    line = _summary(document, ctx, qtbot)
    with qtbot.waitSignal(line.updated, timeout=5000):
        document.set_value("gapPolicy", "SHIFT_FORWARD")
    assert "runs it at 03:00 EDT instead (gapPolicy SHIFT_FORWARD)" in line.plain_text()
    with qtbot.waitSignal(line.updated, timeout=5000):
        document.set_value("rule", "FREQ=DAILY;BYHOUR=9;BYMINUTE=0", merge=True)
    assert line.plain_text().startswith("Every day at 09:00")
    with qtbot.waitSignal(line.updated, timeout=5000):
        document.undo_stack.undo()
    assert line.plain_text().startswith("Every day at 02:30")


def test_invalid_spec_shows_its_first_problem(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    line = _summary(document, ctx, qtbot)
    with qtbot.waitSignal(line.updated, timeout=5000):
        document.set_value("gapPolicy", None)
    assert line.plain_text().startswith("Not complete: choose a gap policy")
    assert line.property("incomplete") is True
    with qtbot.waitSignal(line.updated, timeout=5000):
        document.set_value("gapPolicy", "SKIP")
    assert line.plain_text().startswith("Every day")
    assert line.property("incomplete") is False


@pytest.mark.parametrize(
    ("problem", "words"),
    [
        pytest.param(
            Problem("foldPolicy", "required for a calendar schedule"), "Not complete: choose a repeat", id="fold"
        ),
        pytest.param(Problem("start", "required"), "Not complete: give a start.", id="start"),
        pytest.param(
            Problem("rule", "BYHOUR=25 is out of range"), "Not complete: rule: BYHOUR=25 is out", id="message"
        ),
    ],
)
def test_problem_in_words(problem: Problem, words: str) -> None:
    assert problem_in_words(problem).startswith(words)


def test_one_short_sentence_then_each_policy_on_its_own_line(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    line = _summary(document, ctx, qtbot)
    assert line.plain_text().split("\n") == [
        "Every day at 02:30 in America/New_York.",
        "Next gap: Sun 2027-03-14, clocks jump from 02:00 EST to 03:00 EDT; 02:30 does not exist that day and "
        "this schedule skips it (gapPolicy SKIP).",
        "Next fold: Sun 2027-11-07, clocks fall back from 02:00 EDT to 01:00 EST; "
        "this schedule's times are not affected.",
        "After an outage only the newest missed run is made up and the rest expire (misfirePolicy "
        "CATCH_UP_BOUNDED, maxCatchUp 1); a run that comes due while the previous one still runs is skipped "
        "(overlapPolicy SKIP).",
    ]
    # The sentence stands out; each policy starts a line of its own.
    assert line.text().startswith("<b>Every day at 02:30 in America/New_York.</b><br>Next gap:")
    assert line.text().count("<br>") == 3
    assert line.accessibleDescription() == line.plain_text()


def test_seen_from_the_preview_start(document: SpecDocument, ctx: AppContext, clock: FixedClock, qtbot) -> None:
    with open_designer(document, ctx, qtbot) as page:
        summary = page.summary
        assert "Next gap: Sun 2027-03-14," in summary.plain_text()
        # From a chosen time: the words follow the preview's rows.
        page.preview.set_start_time(datetime(2027, 11, 1, tzinfo=UTC))
        qtbot.waitUntil(lambda: "Next gap: Sun 2028-03-12," in summary.plain_text(), timeout=10_000)
        assert "Next fold: Sun 2027-11-07," in summary.plain_text()
        # From now again, and now has moved on: F5 reads it once for the rows and the words alike.
        page.preview.from_choice.setCurrentIndex(0)
        clock.set(datetime(2028, 4, 1, tzinfo=UTC))
        page.refresh()
        qtbot.waitUntil(lambda: "Next gap: Sun 2029-03-11," in summary.plain_text(), timeout=10_000)
        settle(page, qtbot)
        assert page.service.start == clock.now()
        assert table_rows(page)[0].nominal_local == "2028-04-01T02:30:00"
