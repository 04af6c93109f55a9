"""The summary sentence follows every edit and says what is missing in words."""

from __future__ import annotations

import pytest

from core.errors import Problem
from scheduler_gui.context import AppContext
from scheduler_gui.designer.summary import SummaryLine, problem_in_words
from scheduler_gui.document import SpecDocument


def _summary(document: SpecDocument, ctx: AppContext, qtbot) -> SummaryLine:
    line = SummaryLine(document, ctx)
    qtbot.addWidget(line)
    qtbot.waitUntil(lambda: line.text().startswith("Every day"), timeout=5000)
    return line


def test_shows_the_schedule_in_words(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    line = _summary(document, ctx, qtbot)
    assert line.text().startswith("Every day at 02:30 in America/New_York.")
    assert "Next gap: Sun 2027-03-14" in line.text()
    assert "skips it (gapPolicy SKIP)" in line.text()
    assert line.wordWrap()
    assert line.accessibleName() == "Schedule summary"


def test_follows_edits_and_undo(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    line = _summary(document, ctx, qtbot)
    with qtbot.waitSignal(line.updated, timeout=5000):
        document.set_value("gapPolicy", "SHIFT_FORWARD")
    assert "runs it at 03:00 EDT instead (gapPolicy SHIFT_FORWARD)" in line.text()
    with qtbot.waitSignal(line.updated, timeout=5000):
        document.set_value("rule", "FREQ=DAILY;BYHOUR=9;BYMINUTE=0", merge=True)
    assert line.text().startswith("Every day at 09:00")
    with qtbot.waitSignal(line.updated, timeout=5000):
        document.undo_stack.undo()
    assert line.text().startswith("Every day at 02:30")


def test_invalid_spec_shows_its_first_problem(document: SpecDocument, ctx: AppContext, qtbot) -> None:
    line = _summary(document, ctx, qtbot)
    with qtbot.waitSignal(line.updated, timeout=5000):
        document.set_value("gapPolicy", None)
    assert line.text().startswith("Not complete: choose a gap policy")
    assert line.property("incomplete") is True
    with qtbot.waitSignal(line.updated, timeout=5000):
        document.set_value("gapPolicy", "SKIP")
    assert line.text().startswith("Every day")
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
