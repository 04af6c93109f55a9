"""The next start after a crash, as a person meets it (scheduler_gui.monitor.crash_report):
the dialog says when the window closed and where the crash log is, lists the attempts its
engine left with what recovery did, follows recovery while open, and opens an attempt's
occurrence in the monitor with Enter or the Show in Monitor button."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from a11y_support import a11y_problems
from gui_support import NOW
from monitor_support import interval_spec, put
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QListWidget, QPushButton
from sqlalchemy import select

from core.engine.processes import this_host
from core.ledger import events
from core.ledger.materialize import materialize_all
from core.ledger.models import Attempt, Occurrence
from core.ledger.states import OccurrenceState as S
from scheduler_gui.context import AppContext
from scheduler_gui.main_window import MainWindow
from scheduler_gui.monitor.crash_report import CrashReport, CrashReportDialog, headline
from scheduler_gui.workspace.session_guard import SESSION_HEADER, UncleanExit

#: The crashed window's pid: Linux never hands out one above 2**22.
PID = 2**22 + 1
STARTED = NOW - timedelta(hours=1)
LAST_SEEN = NOW - timedelta(minutes=10)


def _exit(tmp_path: Path, crash_text: str | None) -> UncleanExit:
    log = tmp_path / "crash.log"
    if crash_text is not None:
        header = SESSION_HEADER.format(pid=PID, started="2027-03-01T11:00:00Z")
        log.write_text(f"\n{header}\n{crash_text}\n", encoding="utf-8")
    return UncleanExit(this_host(), PID, STARTED, LAST_SEEN, log)


def _left_behind(ctx: AppContext, last_started: timedelta = timedelta(minutes=-1)) -> list[str]:
    """Two occurrences the crashed window's engine was running: one already settled as lost, one not
    (started ``last_started`` after the window's last beat)."""
    put(ctx, interval_spec("nightly-backup", {"argv": ["/bin/true"], "effect": "idempotent"}))
    put(ctx, interval_spec("invoice-run", {"argv": ["/bin/true"], "effect": "non_idempotent"}))
    ids = []
    with ctx.ledger.write() as session:
        materialize_all(session, ctx.clock)
    with ctx.ledger.write() as session:
        for n, sid in enumerate(("nightly-backup", "invoice-run")):
            occ = session.scalars(
                select(Occurrence).where(Occurrence.schedule_id == sid).order_by(Occurrence.position_utc)
            ).first()
            assert occ is not None
            started = LAST_SEEN + (last_started if n else timedelta(minutes=-2))
            events.transition(session, occ, S.DUE, started)
            events.transition(session, occ, S.DISPATCHING, started)
            lost = n == 0
            session.add(
                Attempt(
                    attempt_id=f"attempt-{sid}",
                    occurrence_id=occ.occurrence_id,
                    attempt_number=1,
                    claim_generation=1,
                    execution_epoch=1,
                    worker_host=this_host(),
                    worker_pid=PID,
                    started_at=started,
                    finished_at=NOW if lost else None,
                    error_class="lost" if lost else None,
                    input_digest="0" * 64,
                    outcome=S.RETRY_WAIT if lost else None,
                )
            )
            if lost:
                events.transition(session, occ, S.RETRY_WAIT, NOW, "the attempt lost its outcome")
            ids.append(occ.occurrence_id)
    return ids


@pytest.fixture
def window(ctx: AppContext, qtbot) -> MainWindow:
    w = MainWindow(ctx)
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.hub.ledgerReady, timeout=30_000):
        w.start_monitor()
    yield w
    w.hub.shutdown("stop")


def _named(root, kind, name):  # type: ignore[no-untyped-def]
    [found] = [w for w in root.findChildren(kind) if w.accessibleName() == name]
    return found


def _open(ctx: AppContext, window: MainWindow, exit_: UncleanExit, qtbot) -> CrashReportDialog:  # type: ignore[no-untyped-def]
    report = CrashReport(ctx, [exit_], window, window.hub.watcher)
    dialog = report.open()
    qtbot.waitUntil(lambda: "Reading" not in _named(dialog, QLabel, "Recovery").text(), timeout=30_000)
    return dialog


def test_the_report_lists_what_recovery_did_and_opens_an_attempt_with_enter(
    ctx: AppContext, window: MainWindow, qtbot, tmp_path: Path
) -> None:
    backup, invoice = _left_behind(ctx)
    dialog = _open(ctx, window, _exit(tmp_path, "Fatal Python error: Segmentation fault\n\nThread 0x1 ..."), qtbot)
    assert dialog.windowTitle() == "Tidemark closed unexpectedly"
    assert "last seen running at 2027-03-01 11:50:00Z" in _named(dialog, QLabel, "What happened").text()
    log = _named(dialog, QLabel, "Crash log").text()
    assert "Fatal Python error: Segmentation fault" in log and str(tmp_path / "crash.log") in log
    assert _named(dialog, QLabel, "Recovery").text().startswith("It was running 2 tasks. 1 recovered so far")
    listed = _named(dialog, QListWidget, "Attempts found after the crash")
    assert [listed.item(i).text() for i in range(listed.count())] == [
        "nightly-backup: attempt 1, started 2027-03-01T11:48:00Z: lost, settled as RETRY_WAIT",
        "invoice-run: attempt 1, started 2027-03-01T11:49:00Z: not settled yet "
        "(the engine settles it once its claim lapses; the occurrence is DISPATCHING)",
    ]
    assert a11y_problems(dialog) == []
    listed.setFocus()
    qtbot.keyClick(listed, Qt.Key.Key_Down)
    qtbot.keyClick(listed, Qt.Key.Key_Return)
    assert dialog.isVisible(), "Enter opens the attempt; the report stays open for the others"
    assert window.current_view() == "occurrences"
    view = window.page("occurrences").view  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: view.table.currentIndex().isValid(), timeout=30_000)
    assert view.text_edit.text() == invoice
    assert view.model.rowCount() == 1
    qtbot.mouseClick(listed.viewport(), Qt.MouseButton.LeftButton, pos=listed.visualItemRect(listed.item(0)).center())
    qtbot.mouseClick(_named(dialog, QPushButton, "Show in Monitor"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.text_edit.text() == backup and view.table.currentIndex().isValid(), timeout=30_000)


@pytest.mark.parametrize(
    ("last_started", "said"),
    [
        pytest.param(
            timedelta(minutes=-1),
            "at about 11:50 on Mon 01 Mar (last seen running at 2027-03-01 11:50:00Z;",
            id="beat_after_the_attempts",
        ),
        pytest.param(
            timedelta(seconds=21),  # within a beat of the last one: the window was alive then
            "at about 11:50 on Mon 01 Mar (last known running when it started invoice-run's attempt 1, "
            "at 2027-03-01 11:50:21Z;",
            id="attempt_after_the_last_beat",
        ),
    ],
)
def test_the_time_said_is_never_before_an_attempt_listed(
    ctx: AppContext, window: MainWindow, qtbot, tmp_path: Path, last_started: timedelta, said: str
) -> None:
    _left_behind(ctx, last_started)
    dialog = _open(ctx, window, _exit(tmp_path, None), qtbot)
    assert said in _named(dialog, QLabel, "What happened").text()


def test_the_list_follows_recovery_while_the_dialog_is_open(
    ctx: AppContext, window: MainWindow, qtbot, tmp_path: Path
) -> None:
    _backup, invoice = _left_behind(ctx)
    dialog = _open(ctx, window, _exit(tmp_path, None), qtbot)
    assert "No fatal error was recorded" in _named(dialog, QLabel, "Crash log").text()
    window.hub.watcher.poll_now()  # the watcher has read the ledger up to here
    with ctx.ledger.write() as session:  # the engine settles the second one
        row = session.get(Attempt, "attempt-invoice-run")
        occ = session.get(Occurrence, invoice)
        assert row is not None and occ is not None
        row.finished_at, row.error_class, row.outcome = NOW, "lost", S.UNKNOWN_EFFECT
        events.transition(session, occ, S.UNKNOWN_EFFECT, NOW, "the attempt lost its outcome")
    window.hub.watcher.poll_now()
    recovery = _named(dialog, QLabel, "Recovery")
    qtbot.waitUntil(lambda: "recovered each one" in recovery.text(), timeout=30_000)
    listed = _named(dialog, QListWidget, "Attempts found after the crash")
    assert listed.item(1).text().endswith("lost, settled as UNKNOWN_EFFECT")


def test_nothing_running_says_so_and_close_closes(ctx: AppContext, window: MainWindow, qtbot, tmp_path: Path) -> None:
    dialog = _open(ctx, window, _exit(tmp_path, None), qtbot)
    assert _named(dialog, QLabel, "Recovery").text() == "It was running no task, so nothing needed recovering."
    assert not _named(dialog, QPushButton, "Show in Monitor").isEnabled()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_the_dialog_renders_readably(ctx: AppContext, window: MainWindow, qtbot, tmp_path: Path) -> None:
    _left_behind(ctx)
    dialog = _open(ctx, window, _exit(tmp_path, "Fatal Python error: Aborted"), qtbot)
    shot = dialog.grab()
    assert shot.save(str(tmp_path / "crash-report.png")) and shot.width() >= 600
    for label in dialog.findChildren(QLabel):
        if label.isVisible():
            assert label.height() >= label.heightForWidth(label.width()) or not label.wordWrap(), label.text()


@pytest.mark.parametrize(
    ("closed", "said"),
    [
        pytest.param(1, None, id="once_says_nothing_more"),
        pytest.param(2, " It closed unexpectedly twice since it last quit normally.", id="twice"),
        pytest.param(3, " It closed unexpectedly 3 times since it last quit normally.", id="three_times"),
    ],
)
def test_the_headline_counts_the_unclean_exits_in_words(tmp_path: Path, closed: int, said: str | None) -> None:
    text = headline([_exit(tmp_path, None)] * closed)
    assert text.endswith(said) if said is not None else "closed unexpectedly" not in text.split(").", 1)[1]
