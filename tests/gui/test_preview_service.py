"""Previews are built off the GUI thread, debounced, and stale ones are dropped."""

from __future__ import annotations

from core.clock import FixedClock
from core.enums import Status
from scheduler_gui.preview.service import PreviewService
from scheduler_gui.workspace.document import SpecDocument


def test_ready_after_edit(document: SpecDocument, clock: FixedClock, qtbot) -> None:
    service = PreviewService(document, clock)
    service.set_count(20)
    with qtbot.waitSignal(service.ready, timeout=5000) as blocker:
        document.set_value("gapPolicy", "SHIFT_FORWARD")
    preview = blocker.args[0]
    assert len(preview.rows) == 20
    spring = [r for r in preview.rows if r.nominal_local.startswith("2027-03-14")]
    assert spring and spring[0].status is Status.SHIFTED


def test_invalid_spec_reports_failure(document: SpecDocument, clock: FixedClock, qtbot) -> None:
    service = PreviewService(document, clock)
    with qtbot.waitSignal(service.failed, timeout=5000) as blocker:
        document.set_value("rule", "FREQ=SECONDLY")
    assert "rule" in blocker.args[0]


def test_only_newest_request_is_shown(document: SpecDocument, clock: FixedClock, qtbot) -> None:
    service = PreviewService(document, clock)
    shown = []
    service.ready.connect(shown.append)
    # Both counts go past the spring change (the 14th row), so neither is extended to reach it.
    service.set_count(20)
    service.refresh_now()
    service.set_count(30)
    with qtbot.waitSignal(service.ready, timeout=5000):
        service.refresh_now()
    service.wait()
    qtbot.wait(50)
    assert [len(p.rows) for p in shown] == [30]
