"""The ledger watcher: tails the event log, counts the attention queue, says
what newly entered it, and reports a ledger it cannot read once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from gui_support import NOW
from monitor_support import FAILING_TASK, NO_RETRY, interval_spec, put, run_at
from PySide6.QtCore import QSettings
from sqlalchemy.exc import OperationalError

from core.clock import FixedClock
from core.errors import LedgerError
from core.ledger.events import EventKind
from core.ledger.queries import EventView
from core.ledger.states import OccurrenceState as S
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.background import ledger_work
from scheduler_gui.monitor.ledger_watch import LedgerWatcher, is_live


def _recorder(watcher: LedgerWatcher) -> dict[str, list]:
    seen: dict[str, list] = {"events": [], "count": [], "new": [], "error": []}
    watcher.eventsArrived.connect(seen["events"].append)
    watcher.attentionCountChanged.connect(seen["count"].append)
    watcher.newAttention.connect(seen["new"].append)
    watcher.errorOccurred.connect(seen["error"].append)
    return seen


def test_first_poll_starts_at_the_end_of_the_log(qtbot, ctx: AppContext) -> None:
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    watcher = LedgerWatcher(ctx, interval_ms=3_600_000)
    seen = _recorder(watcher)
    watcher.poll_now()
    assert seen == {"events": [], "count": [0], "new": [], "error": []}
    assert watcher.last_event_id is not None and watcher.last_event_id > 0
    watcher.stop()


def test_a_failure_arrives_as_events_and_enters_the_queue(qtbot, ctx: AppContext) -> None:
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    watcher = LedgerWatcher(ctx, interval_ms=3_600_000)
    seen = _recorder(watcher)
    watcher.poll_now()
    run_at(ctx, 5.5)
    watcher.poll_now()
    moves = [
        (e.data["from"], e.data["to"])
        for batch in seen["events"]
        for e in batch
        if e.kind == EventKind.OCCURRENCE_TRANSITIONED.value
    ]
    assert moves == [("PLANNED", "DUE"), ("DUE", "DISPATCHING"), ("DISPATCHING", "RUNNING"), ("RUNNING", "FAILED")]
    (failed_id,) = {e.occurrence_id for batch in seen["events"] for e in batch if e.data.get("to") == S.FAILED.value}
    assert seen["count"] == [0, 1]
    assert seen["new"] == [[failed_id]]
    assert watcher.attention_ids == {failed_id}
    watcher.poll_now()  # nothing new: nothing emitted
    assert (len(seen["count"]), len(seen["new"])) == (2, 1)
    watcher.stop()


def test_the_timer_polls_off_the_gui_thread(qtbot, ctx: AppContext) -> None:
    put(ctx, interval_spec("backup", FAILING_TASK, retry=NO_RETRY))
    watcher = LedgerWatcher(ctx, interval_ms=20)
    with qtbot.waitSignal(watcher.attentionCountChanged, timeout=10_000) as first:
        pass
    assert first.args == [0]
    with qtbot.waitSignal(watcher.newAttention, timeout=20_000) as entered:
        run_at(ctx, 5.5)
    assert len(entered.args[0]) == 1
    watcher.stop()


def test_an_unreadable_ledger_is_reported_once(qtbot, tmp_path: Path, clock: FixedClock) -> None:
    broken = tmp_path / "ledger.db"
    broken.write_bytes(b"this is not a database" * 100)
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    ctx = AppContext(clock=clock, workspace=tmp_path, ledger_url=f"sqlite:///{broken}", settings=settings)
    watcher = LedgerWatcher(ctx, interval_ms=3_600_000)
    seen = _recorder(watcher)
    watcher.poll_now()
    watcher.poll_now()
    assert len(seen["error"]) == 1
    assert "is not a Tidemark ledger" in seen["error"][0]
    broken.unlink()  # the problem goes away: the next poll works, and a new problem would be reported again
    watcher.poll_now()
    assert seen["count"] == [0]
    watcher.stop()
    ctx.close()


def test_a_database_complaint_becomes_one_line() -> None:
    def locked() -> None:
        raise OperationalError("SELECT 1", {}, sqlite3.OperationalError("database is locked"))

    with pytest.raises(LedgerError) as raised:
        ledger_work(locked)()
    assert str(raised.value) == "the ledger is busy (locked by another program); trying again (database is locked)"
    assert ledger_work(lambda: 42)() == 42


def _event(kind: str) -> EventView:
    return EventView(1, NOW, "s", None, kind, {})


@pytest.mark.parametrize(
    ("kind", "live"),
    [
        pytest.param(EventKind.OCCURRENCES_EXPIRED.value, True, id="expired_range"),
        pytest.param(EventKind.OCCURRENCES_MATERIALIZED.value, True, id="materialized"),
        pytest.param(EventKind.OCCURRENCE_TRANSITIONED.value, True, id="transitioned"),
        pytest.param(EventKind.OCCURRENCE_CREATED.value, True, id="created"),
        pytest.param(EventKind.SCHEDULE_PUBLISHED.value, True, id="published"),
        pytest.param(EventKind.LEDGER_FENCED.value, False, id="fenced"),
        pytest.param(EventKind.SCHEDULE_PAUSED.value, False, id="paused"),
    ],
)
def test_live_events(kind: str, live: bool) -> None:
    assert is_live(_event(kind)) is live
