"""Needs attention: a hung task lands in the queue, a person decides in the
window, the ledger records it and ``schedctl`` sees it; failures can be run
again or acknowledged; a refusal is shown on its card; the tray stays silent
where there is no tray."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from gui_support import NOW
from monitor_support import FAILING_TASK, HANGING_TASK, NO_RETRY, engine, ids_in, interval_spec, put, run_at
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton
from sqlalchemy import select

from core.cli import main as schedctl
from core.desktop.notify.needs import Need, NeedKind
from core.engine.reconcile import Decision, reconcile
from core.ledger.models import Attempt
from core.ledger.monitor_queries import events_of
from core.ledger.publish import Gate, change_gate
from core.ledger.queries import OccurrenceFilter, list_occurrences
from core.ledger.states import OccurrenceKind
from core.ledger.states import OccurrenceState as S
from core.team.actor import Actor, os_user
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.attention import Action, AttentionView
from scheduler_gui.monitor.ledger_watch import LedgerWatcher
from scheduler_gui.monitor.tray import AttentionTray


def _cli(capsys: pytest.CaptureFixture[str], ctx: AppContext, *args: str) -> dict:
    capsys.readouterr()
    assert schedctl([*args, "--db", str(ctx.ledger_url), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _view(qtbot, ctx: AppContext, watcher: LedgerWatcher | None = None) -> AttentionView:
    view = AttentionView(ctx, watcher)
    qtbot.addWidget(view)
    view.resize(900, 700)
    return view


def _reloaded(qtbot, view: AttentionView) -> None:
    with qtbot.waitSignal(view.loaded, timeout=20_000):
        view.reload()


def _decide(qtbot, view: AttentionView, occ_id: str, action: str, note: str) -> str:
    card = view.cards[occ_id]
    card.note.setText(note)
    with qtbot.waitSignal(view.decisionRecorded, timeout=30_000) as recorded:
        qtbot.mouseClick(card.buttons[action], Qt.MouseButton.LeftButton)
    assert recorded.args[0] == occ_id
    qtbot.waitUntil(lambda: occ_id not in view.cards or view.cards[occ_id] is not card, timeout=20_000)
    return str(recorded.args[1])


@pytest.fixture
def hung(qtbot, ctx: AppContext) -> tuple[AppContext, LedgerWatcher, str]:
    """A non-idempotent task that hangs, killed by its 1 s timeout: UNKNOWN_EFFECT."""
    put(ctx, interval_spec("inbox", HANGING_TASK))
    watcher = LedgerWatcher(ctx, interval_ms=3_600_000)
    watcher.poll_now()
    run_at(ctx, 5.5)
    (occ_id,) = ids_in(ctx, "inbox", S.UNKNOWN_EFFECT)
    yield ctx, watcher, occ_id
    watcher.stop()


def test_a_hung_task_lands_in_attention_and_is_reconciled(qtbot, hung, capsys) -> None:
    ctx, watcher, occ_id = hung
    view = _view(qtbot, ctx, watcher)
    with (
        qtbot.waitSignal(view.countChanged, timeout=20_000) as counted,
        qtbot.waitSignal(watcher.newAttention, timeout=20_000) as entered,
    ):
        watcher.poll_now()
    assert entered.args == [[occ_id]]
    assert counted.args == [1] and view.count == 1
    card = view.cards[occ_id]
    assert set(card.buttons) == {Action.HAPPENED, Action.NOT_HAPPENED, Action.ABANDON}
    assert [card.buttons[a].text() for a in (Action.HAPPENED, Action.NOT_HAPPENED, Action.ABANDON)] == [
        "It happened",
        "It did not happen, retry",
        "Abandon",
    ]
    assert card.accessibleName() == f"unknown effect: inbox {occ_id}"
    for control in [*card.findChildren(QPushButton), *card.findChildren(QLineEdit)]:
        assert control.accessibleName() and control.toolTip(), control
    assert view.grab().save(str(ctx.workspace / "attention.png"))

    words = _decide(qtbot, view, occ_id, Action.HAPPENED, "checked the mailbox: synced")
    assert words == f"{occ_id} is now SUCCEEDED"
    assert view.count == 0 and view.empty_label.isVisibleTo(view)

    attempts = _cli(capsys, ctx, "attempts", occ_id)
    assert attempts["state"] == "SUCCEEDED"
    assert [(a["attemptNumber"], a["errorClass"], a["outcome"]) for a in attempts["attempts"]] == [
        (1, "timeout", "UNKNOWN_EFFECT")
    ]
    rows = _cli(capsys, ctx, "ledger", "--schedule", "inbox", "--state", "SUCCEEDED")["occurrences"]
    assert [(r["occurrenceId"], r["state"]) for r in rows] == [(occ_id, "SUCCEEDED")]
    assert rows[0]["reason"] == "reconciled by a person: happened (checked the mailbox: synced)"


def test_not_happened_makes_it_due_again(qtbot, hung, capsys) -> None:
    ctx, watcher, occ_id = hung
    view = _view(qtbot, ctx, watcher)
    _reloaded(qtbot, view)
    _decide(qtbot, view, occ_id, Action.NOT_HAPPENED, "")
    rows = _cli(capsys, ctx, "ledger", "--schedule", "inbox", "--state", "RETRY_WAIT")["occurrences"]
    assert [r["occurrenceId"] for r in rows] == [occ_id]


def test_a_note_being_typed_survives_a_reload(qtbot, ctx: AppContext) -> None:
    put(ctx, interval_spec("inbox", HANGING_TASK))
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    run_at(ctx, 5.5)
    (unknown_id,) = ids_in(ctx, "inbox", S.UNKNOWN_EFFECT)
    (failed_id,) = ids_in(ctx, "backup", S.FAILED)
    view = _view(qtbot, ctx)
    _reloaded(qtbot, view)
    assert list(view.cards) == [unknown_id, failed_id]  # the longest-waiting first
    card = view.cards[unknown_id]
    card.note.setText("half-written")
    _reloaded(qtbot, view)
    assert view.cards[unknown_id] is card and card.note.text() == "half-written"
    assert view._list_layout.indexOf(card) == 0


def test_a_decision_someone_else_made_first_is_refused_on_the_card(qtbot, hung) -> None:
    ctx, _watcher, occ_id = hung
    view = _view(qtbot, ctx)
    _reloaded(qtbot, view)
    reconcile(ctx.ledger, occ_id, Decision.ABANDON, ctx.clock, "from the command line")
    card = view.cards[occ_id]
    with qtbot.waitSignal(view.errorOccurred, timeout=20_000) as refused:
        qtbot.mouseClick(card.buttons[Action.HAPPENED], Qt.MouseButton.LeftButton)
    assert refused.args[0] == f"{occ_id} is FAILED, not UNKNOWN_EFFECT; only an unknown effect needs reconciling"
    assert card.message.text() == refused.args[0] and card.buttons[Action.HAPPENED].isEnabled()


@pytest.fixture
def failed(ctx: AppContext) -> tuple[AppContext, str]:
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    run_at(ctx, 5.5)
    (occ_id,) = ids_in(ctx, "backup", S.FAILED)
    return ctx, occ_id


def test_a_failure_is_acknowledged_with_a_note(qtbot, failed) -> None:
    ctx, occ_id = failed
    view = _view(qtbot, ctx)
    _reloaded(qtbot, view)
    card = view.cards[occ_id]
    assert set(card.buttons) == {Action.RETRY, Action.ACKNOWLEDGE}
    assert card.item.last_attempt is not None and card.item.last_attempt.stderr_tail == "backup target unreachable\n"
    words = _decide(qtbot, view, occ_id, Action.ACKNOWLEDGE, "target back online")
    assert words == f"{occ_id} acknowledged"
    assert view.count == 0
    with ctx.ledger.read() as session:
        last = events_of(session, occ_id)[-1]
    assert (last.kind, last.data["note"], last.data["action"]) == (
        "occurrence.acknowledged",
        "target back online",
        "acknowledged",
    )


def test_a_failure_runs_again_as_a_backfill(qtbot, failed) -> None:
    ctx, occ_id = failed
    view = _view(qtbot, ctx)
    _reloaded(qtbot, view)
    words = _decide(qtbot, view, occ_id, Action.RETRY, "one more try")
    with ctx.ledger.read() as session:
        (again,) = list_occurrences(session, OccurrenceFilter(kind=OccurrenceKind.BACKFILL)).rows
    assert words == f"{occ_id} runs again as {again.occurrence_id}"
    assert again.state is S.DUE and again.nominal_local == "2027-03-01T07:05:00"
    run_at(ctx, 7, engine(ctx))  # it runs, and fails again: a new card, the old one stays resolved
    _reloaded(qtbot, view)
    assert list(view.cards) == [again.occurrence_id]


def test_the_tray_is_silent_without_a_system_tray(qtbot, ctx: AppContext) -> None:
    tray = AttentionTray(ctx, available=lambda: False)
    assert not tray.available
    tray.see([])
    assert tray.see([Need("occ-1", NeedKind.UNKNOWN_EFFECT, "daily")]) is None
    tray.say("Tidemark", "anything")
    assert tray.messages == []


def _set_attempt_start(ctx: AppContext, occ_id: str, started: datetime) -> None:
    """A long attempt: it started well before it was killed (the fixed clock stood still while it ran)."""
    with ctx.ledger.write() as session:
        (attempt,) = session.scalars(select(Attempt).where(Attempt.occurrence_id == occ_id))
        attempt.started_at = started


def test_a_card_shows_the_attempts_own_age_apart_from_its_waiting(qtbot, hung) -> None:
    ctx, _watcher, occ_id = hung  # killed at 12:05:30 by its timeout
    _set_attempt_start(ctx, occ_id, NOW + timedelta(minutes=1))  # started at 12:01
    ctx.clock.set(NOW + timedelta(minutes=35, seconds=30))  # 12:35:30
    view = _view(qtbot, ctx)
    _reloaded(qtbot, view)
    card = view.cards[occ_id]
    assert "waiting 30 min" in card.title.text()
    assert card.attempt.text().endswith("timeout · started 2027-03-01 12:01:00Z, 34 min ago · ran 4 min")
    # Between readings the ages follow the clock; the card (and a note being typed) stays.
    card.note.setText("checking")
    ctx.clock.set(NOW + timedelta(hours=2, minutes=5, seconds=30))
    view.show_ages()
    assert view.cards[occ_id] is card and card.note.text() == "checking"
    assert "waiting 2 h 00 min" in card.title.text()
    assert "started 2027-03-01 12:01:00Z, 2 h 04 min ago" in card.attempt.text()
    assert card.title.accessibleName() == "unknown effect, inbox, waiting 2 h 00 min"


def test_a_card_shows_the_earlier_decisions_on_the_same_occurrence(qtbot, hung, monkeypatch) -> None:
    ctx, _watcher, occ_id = hung
    view = _view(qtbot, ctx)
    _reloaded(qtbot, view)
    assert view.cards[occ_id].history is None  # nobody has decided anything yet
    ctx.clock.set(NOW + timedelta(minutes=10))
    with monkeypatch.context() as person:  # the person at this window is this OS user, on alpha
        person.setenv("TIDEMARK_HOSTNAME", "alpha")
        _decide(qtbot, view, occ_id, Action.NOT_HAPPENED, "no mail arrived")
    # The engine, on this machine as the publisher's user, runs the retry.
    run_at(ctx, 11)  # due again at once: the retry hangs too, and comes back
    assert ids_in(ctx, "inbox", S.UNKNOWN_EFFECT) == [occ_id]
    _reloaded(qtbot, view)
    card = view.cards[occ_id]
    assert card.history is not None and card.history.isVisibleTo(view)
    assert card.history.text() == (
        f"Earlier decisions:\n{os_user()}@alpha said it did not happen, 2027-03-01 12:10Z · note: no mail arrived"
    )
    assert card.attempt.text().startswith("Attempt 2 on ")


def test_an_empty_attention_page_says_so_at_the_top(qtbot, ctx: AppContext, tmp_path) -> None:
    view = _view(qtbot, ctx)
    view.show()
    qtbot.waitExposed(view)
    _reloaded(qtbot, view)
    assert view.empty_label.isVisible() and not view.scroll_area.isVisible()
    view.layout().activate()
    # The heading and the empty state sit at the top of the page, as on every other page:
    # the heading is as tall as its line, and the empty state's text starts right under the intro.
    assert view.heading.geometry().top() < 20
    assert view.heading.height() < 2 * view.heading.sizeHint().height()
    assert view.empty_label.geometry().top() < 6 * view.heading.sizeHint().height()
    assert view.empty_label.alignment() & Qt.AlignmentFlag.AlignTop
    assert "Occurrences (View ▸ Occurrences, Ctrl+2)" in view.empty_label.text()
    assert view.grab().save(str(tmp_path / "attention-empty.png"))


def _label(widget, name: str) -> QLabel:
    """The label a screen reader announces as ``name``."""
    (found,) = [label for label in widget.findChildren(QLabel) if label.accessibleName() == name]
    return found


def test_a_card_says_who_decided_and_who_holds_the_schedule(qtbot, hung, tmp_path) -> None:
    """Decisions made elsewhere (bob on beta) and a pause by carol on gamma, each named on the card."""
    ctx, watcher, occ_id = hung
    ctx.clock.set(NOW + timedelta(minutes=10))
    reconcile(ctx.ledger, occ_id, Decision.NOT_HAPPENED, ctx.clock, "no mail arrived", actor=Actor("bob", "beta"))
    run_at(ctx, 11)  # the retry hangs too: it waits again
    change_gate(ctx.ledger, "inbox", Gate.PAUSE, ctx.clock, "mail server down", actor=Actor("carol", "gamma"))
    view = _view(qtbot, ctx, watcher)
    _reloaded(qtbot, view)
    card = view.cards[occ_id]
    assert _label(card, "Earlier decisions").text() == (
        "Earlier decisions:\nbob@beta said it did not happen, 2027-03-01 12:10Z · note: no mail arrived"
    )
    held = _label(card, "Schedule held")
    assert held.isVisibleTo(view)
    assert held.text() == "Schedule paused by carol@gamma, 2027-03-01 12:11Z · note: mail server down"
    view.show()
    qtbot.waitExposed(view)
    assert view.grab().save(str(tmp_path / "attention-authors.png"))
    # Resumed: the card no longer says the schedule is held (the watcher's events reload it).
    change_gate(ctx.ledger, "inbox", Gate.RESUME, ctx.clock, actor=Actor("carol", "gamma"))
    with qtbot.waitSignal(view.loaded, timeout=20_000):
        watcher.poll_now()
    assert [
        label for label in view.cards[occ_id].findChildren(QLabel) if label.accessibleName() == "Schedule held"
    ] == []


@pytest.mark.parametrize(
    ("error_class", "said"),
    [
        pytest.param("lost", "Its output was not kept: the engine running it stopped", id="lost_is_not_said_silent"),
        pytest.param("timeout", "It printed nothing.", id="a_silent_task_printed_nothing"),
    ],
)
def test_a_card_without_output_says_only_what_is_known(qtbot, hung, error_class: str, said: str) -> None:
    """The hung task printed nothing before its timeout; had its engine died instead (a lost attempt),
    what it printed went with that engine, and the card must not claim it printed nothing."""
    from sqlalchemy import update

    ctx, _watcher, occ_id = hung
    with ctx.ledger.write() as session:
        session.execute(update(Attempt).where(Attempt.occurrence_id == occ_id).values(error_class=error_class))
    view = _view(qtbot, ctx)
    _reloaded(qtbot, view)
    texts = [label.text() for label in view.cards[occ_id].findChildren(QLabel)]
    assert any(text.startswith(said) for text in texts), texts
    assert ("It printed nothing." in texts) is (error_class != "lost")
