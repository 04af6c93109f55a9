"""A monitor page that is thrown away stops following the ledger watcher, which
outlives it (bench/window_stress.py found pages still called after deletion:
"Internal C++ object (QTimer) already deleted" on every watcher signal)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtWidgets import QWidget

from core.engine.processes import this_host
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.attention import AttentionView
from scheduler_gui.monitor.crash_report import CrashReport
from scheduler_gui.monitor.health import HealthView
from scheduler_gui.monitor.ledger_watch import LedgerWatcher
from scheduler_gui.workspace.session_guard import UncleanExit


class _Window(QWidget):
    def show_occurrence(self, _occurrence_id: str) -> None:
        pass


def _crash_report(ctx: AppContext, watcher: LedgerWatcher) -> QObject:
    now = ctx.clock.now()
    window = _Window()
    gone = UncleanExit(this_host(), 2**22 + 1, now - timedelta(hours=1), now, ctx.workspace / "crash.log")
    report = CrashReport(ctx, [gone], window, watcher)
    report.open()
    report.wait()
    return window  # the report and its dialog go with the window


PAGES: list[Any] = [
    pytest.param(lambda ctx, watcher: AttentionView(ctx, watcher), id="attention"),
    pytest.param(lambda ctx, watcher: HealthView(ctx, watcher), id="health"),
    pytest.param(_crash_report, id="crash_report"),
]


@pytest.mark.parametrize("make", PAGES)
def test_a_deleted_page_is_no_longer_called_by_the_watcher(
    ctx: AppContext, qtbot: Any, make: Callable[[AppContext, LedgerWatcher], QObject]
) -> None:
    watcher = LedgerWatcher(ctx)
    watcher.stop()
    page = make(ctx, watcher)
    qtbot.wait(50)  # its first reads are delivered
    page.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    watcher.eventsArrived.emit([])
    watcher.attentionCountChanged.emit(3)
    watcher.newAttention.emit(["occ-1"])
    QCoreApplication.processEvents()
