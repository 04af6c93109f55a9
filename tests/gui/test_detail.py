"""The detail panel: why an occurrence exists, its attempts with output, its history."""

from __future__ import annotations

from pathlib import Path

from gui_support import NOW, demo_mapping
from monitor_support import FAILING_TASK, engine, ids_in, interval_spec, put, run_at

from core.ledger.monitor_queries import attempts_of
from core.ledger.states import OccurrenceState as S
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.detail import OccurrenceDetail


def _shown(qtbot, detail: OccurrenceDetail, occurrence_id: str) -> str:
    with qtbot.waitSignal(detail.loaded, timeout=20_000) as shown:
        detail.show_occurrence(occurrence_id)
    assert shown.args == [occurrence_id]
    return detail.text()


def test_a_failing_task_shows_its_attempts_and_stderr(qtbot, ctx: AppContext, tmp_path: Path) -> None:
    put(ctx, interval_spec("backup", FAILING_TASK, retry={"maxAttempts": 2, "initialBackoff": "PT30S"}))
    eng = engine(ctx)
    run_at(ctx, 5.5, eng)
    run_at(ctx, 6.5, eng)  # the retry, after its 30 s backoff
    (occ_id,) = ids_in(ctx, "backup", S.FAILED)
    with ctx.ledger.read() as session:
        first, second = attempts_of(session, occ_id)
    detail = OccurrenceDetail(ctx)
    qtbot.addWidget(detail)
    text = _shown(qtbot, detail, occ_id)
    assert text.startswith(f"✖ failed {occ_id}")
    assert "exited with status 3; all 2 attempts used" in text
    # why it exists
    assert "backup, revision 1 (scheduled)" in text
    assert "America/New_York" in text and "Mon 2027-03-01 07:05 EST −05:00 · 2027-03-01 12:05:00Z" in text
    # its attempts, every field
    assert "Attempts (2)" in text
    assert "#1 ↻ exit 3 12:05:30Z → #2 ✖ exit 3 12:06:30Z" in text
    assert "Attempt 1 · ↻ retry wait · exit 3" in text and "Attempt 2 · ✖ failed · exit 3" in text
    assert first.worker in text and first.input_digest in text
    assert f"{second.claim_generation} (execution epoch 1)" in text
    assert text.count("stderr\nbackup target unreachable\n") == 2
    assert text.count("stdout\ncopying files\n") == 2
    # its history
    assert "History (7 events)" in text
    assert "○ planned → ◔ due" in text and "▶ running → ✖ failed" in text
    # durations in words, not ISO 8601
    assert "maxAttempts 2, initialBackoff 30 s" in text and "PT30S" not in text
    assert ", timeout 10 min" in text and "PT10M" not in text
    detail.resize(700, 900)
    assert detail.grab().save(str(tmp_path / "detail.png"))


def test_an_unknown_occurrence_says_so(qtbot, ctx: AppContext) -> None:
    detail = OccurrenceDetail(ctx)
    qtbot.addWidget(detail)
    assert _shown(qtbot, detail, "occ-nothing") == "occ-nothing is not in this ledger."
    assert detail.occurrence_id == "occ-nothing"


def test_a_skipped_occurrence_explains_itself(qtbot, ctx: AppContext) -> None:

    from core.ledger.materialize import materialize
    from core.ledger.publish import publish
    from core.spec.validation import parse_spec

    mapping = demo_mapping("daily-ops-summary")
    with ctx.ledger.write() as session:
        publish(session, parse_spec(mapping), ctx.clock)
        materialize(session, "daily-ops-summary", ctx.clock)
    (gap,) = ids_in(ctx, "daily-ops-summary", S.SKIPPED_GAP)
    detail = OccurrenceDetail(ctx)
    qtbot.addWidget(detail)
    text = _shown(qtbot, detail, gap)
    assert "02:30 does not exist on 2027-03-14 in America/New_York" in text
    assert "Scheduled\nno such local time" in text
    assert "Rule\nFREQ=DAILY;BYHOUR=2;BYMINUTE=30" in text
    assert "Missing time\nSKIP" in text and "Repeated time\nFIRST_ONLY" in text
    assert "Not started yet." in text


def test_the_detail_says_who_decided_what(qtbot, ctx: AppContext, tmp_path: Path, monkeypatch) -> None:
    """A person's decision names them; the engine's own moves name its user and host; a held
    schedule names who held it."""
    from datetime import timedelta

    from monitor_support import HANGING_TASK

    from core.engine.reconcile import Decision, reconcile
    from core.ledger.publish import Gate, change_gate
    from core.team.actor import Actor, os_user

    # The engine runs as this process's OS user (its uid's, whatever LOGNAME says) on box.
    monkeypatch.setenv("TIDEMARK_HOSTNAME", "box")
    put(ctx, interval_spec("inbox", HANGING_TASK))
    run_at(ctx, 5.5)
    (occ_id,) = ids_in(ctx, "inbox", S.UNKNOWN_EFFECT)
    ctx.clock.set(NOW + timedelta(minutes=10))
    reconcile(ctx.ledger, occ_id, Decision.NOT_HAPPENED, ctx.clock, "no mail arrived", actor=Actor("alice", "alpha"))
    ctx.clock.set(NOW + timedelta(minutes=12))
    change_gate(ctx.ledger, "inbox", Gate.PAUSE, ctx.clock, "mail server down", actor=Actor("bob", "beta"))
    detail = OccurrenceDetail(ctx)
    qtbot.addWidget(detail)
    text = _shown(qtbot, detail, occ_id)
    assert "Schedule paused by bob@beta, 2027-03-01 12:12Z · note: mail server down" in text
    assert "Decisions (1)\nalice@alpha said it did not happen, 2027-03-01 12:10Z · note: no mail arrived" in text
    history = text[text.index("History (") :]  # one cell a line: time, what, by whom, why
    assert f"2027-03-01 12:05Z\n○ planned → ◔ due\n{os_user()}@box\n" in history
    assert "2027-03-01 12:10Z\n? unknown effect → ↻ retry wait\nalice@alpha\nreconciled by a person" in history
    detail.resize(700, 900)
    assert detail.grab().save(str(tmp_path / "detail-authors.png"))


def test_with_nothing_selected_the_pane_says_what_to_do_in_whole_lines(qtbot, ctx: AppContext) -> None:
    """At its narrowest (240 px, beside the occurrences at 1024 px) the hint wraps: all of it is
    shown, nothing cut off at the pane's edge; cleared again, it comes back."""
    from scheduler_gui.monitor.detail import HINT

    detail = OccurrenceDetail(ctx)
    qtbot.addWidget(detail)
    detail.resize(240, 400)
    detail.show()
    qtbot.waitExposed(detail)
    assert detail.text() == HINT
    browser = detail.browser
    assert browser.horizontalScrollBar().maximum() == 0
    assert browser.document().size().height() >= 2 * browser.fontMetrics().height()  # wrapped, not cut
    _shown(qtbot, detail, "occ-nothing")
    detail.clear()
    assert detail.text() == HINT and detail.occurrence_id is None
