"""A long preview's rows arrive in the table in order as they are computed, and an edit
during the computation stops it: none of its rows come after the newer document's."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLineEdit
from shell_fixtures import window_fixture  # noqa: F401

from core.clock import FixedClock
from core.recurrence.occurrence import Occurrence
from scheduler_gui.main_window import MainWindow
from scheduler_gui.preview import service as preview_service
from scheduler_gui.preview.panel import STALE_NOTE, PreviewPanel
from scheduler_gui.preview.service import CHUNK_ROWS, PreviewService
from scheduler_gui.workspace.document import SpecDocument

LEAP_DAY = "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=9;BYMINUTE=0"
INDEPENDENCE_DAY = "FREQ=YEARLY;BYMONTH=7;BYMONTHDAY=4;BYHOUR=9;BYMINUTE=0"
LONG = 400
#: How long a held computation waits at most before it goes on (a failing test must not hang).
HOLD_S = 10


def _paste(window: MainWindow, qtbot, rule: str) -> None:
    """Select the rule field's text and paste ``rule`` over it (Ctrl+V), as a person does."""
    field = window.designer.findChild(QLineEdit, "ruleText")
    assert field is not None
    QGuiApplication.clipboard().setText(rule)
    field.setFocus()
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)


def _nominals(panel: PreviewPanel) -> list[datetime]:
    rows = (panel.model.item(r) for r in range(panel.model.rowCount()))
    return [row.nominal for row in rows if isinstance(row, Occurrence)]


def _is_leap_day(when: datetime) -> bool:
    return (when.month, when.day) == (2, 29)


def _long_preview(window: MainWindow, qtbot) -> tuple[PreviewPanel, PreviewService]:
    panel, service = window.designer.preview, window.designer.service
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: panel.model.occurrence_count() > 0 and not service.pending, timeout=10_000)
    panel.count_spin.setValue(LONG)
    qtbot.waitUntil(lambda: panel.model.occurrence_count() == LONG and not service.pending, timeout=10_000)
    return panel, service


class _Gate:
    """Holds the computation on the worker after a chosen chunk until the test lets it go on."""

    def __init__(self, at: int) -> None:
        self.at = at  # rows handed over when it holds
        self.reached = threading.Event()
        self.go = threading.Event()

    def __call__(self, shown: int) -> None:
        if shown == self.at and not self.reached.is_set():
            self.reached.set()
            self.go.wait(HOLD_S)


@pytest.fixture
def gates() -> Iterator[list[_Gate]]:
    """The gates a test sets up, all opened when it ends (a failing test leaves no computation held)."""
    made: list[_Gate] = []
    yield made
    for gate in made:
        gate.go.set()


def _hold(service: PreviewService, gates: list[_Gate], *at: int) -> list[_Gate]:
    """Hold ``service``'s computation once after each count of ``at`` rows was handed over."""
    made = [_Gate(n) for n in at]
    gates.extend(made)

    def hook(shown: int) -> None:
        for gate in made:
            gate(shown)

    service.chunk_hook = hook
    return made


def _count_rows_after(gate: _Gate, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many rows the expansion hands on after ``gate`` was let go (one counter per computation)."""
    counts: list[int] = []
    real = preview_service.build_preview_to_change

    def counting(*args: Any, on_row: Callable[[Occurrence], None] | None = None, **kwargs: Any) -> Any:
        if on_row is None:
            return real(*args, **kwargs)
        counts.append(0)
        at = len(counts) - 1

        def seen(row: Occurrence) -> None:
            if gate.go.is_set():
                counts[at] += 1
            on_row(row)

        return real(*args, on_row=seen, **kwargs)

    monkeypatch.setattr(preview_service, "build_preview_to_change", counting)
    return counts


def test_the_rows_of_a_long_preview_arrive_in_order_as_they_are_computed(
    window: MainWindow, qtbot, gates: list[_Gate], tmp_path: Path
) -> None:
    panel, service = _long_preview(window, qtbot)
    (gate,) = _hold(service, gates, CHUNK_ROWS)
    arrived: list[tuple[int, int]] = []
    service.rowsArrived.connect(lambda rows, shown: arrived.append((len(rows), shown)))
    _paste(window, qtbot, LEAP_DAY)
    # Held after its first chunk: those rows have replaced the grey ones, and say how many there are.
    qtbot.waitUntil(lambda: panel.model.rowCount() == CHUNK_ROWS, timeout=10_000)
    first = _nominals(panel)
    assert all(_is_leap_day(n) for n in first) and first == sorted(first)
    assert service.pending and not panel.model.stale
    assert panel.stale_note.isVisible() and panel.stale_note.text() == f"Updating: {CHUNK_ROWS} rows shown so far."
    # Part of a preview is neither exported nor looked through for a clock change.
    target = tmp_path / "part.csv"
    for attempt in (lambda: panel.export("csv", target), panel.next_transition):
        assert attempt() is None
        assert panel.notice.text() == "The preview is still being built: try again when all its rows are shown."
    assert not target.exists()
    gate.go.set()
    qtbot.waitUntil(lambda: not service.pending, timeout=10_000)
    every = _nominals(panel)
    assert len(every) == LONG and all(_is_leap_day(n) for n in every) and every == sorted(every)
    assert every[:CHUNK_ROWS] == first
    assert not panel.stale_note.isVisible()
    # Chunk after chunk, each counting what came before it, up to the rows asked for.
    assert arrived[0] == (CHUNK_ROWS, CHUNK_ROWS)
    assert all(shown == before + size for (_, before), (size, shown) in itertools.pairwise(arrived))
    assert arrived[-1][1] <= LONG


def test_an_edit_during_a_computation_never_shows_its_rows_after_the_newer_ones(
    window: MainWindow, qtbot, gates: list[_Gate], monkeypatch: pytest.MonkeyPatch
) -> None:
    panel, service = _long_preview(window, qtbot)
    first, second = _hold(service, gates, CHUNK_ROWS, 2 * CHUNK_ROWS)
    computed_after_edit = _count_rows_after(second, monkeypatch)
    _paste(window, qtbot, LEAP_DAY)
    qtbot.waitUntil(lambda: panel.model.rowCount() == CHUNK_ROWS, timeout=10_000)
    # On to the second chunk, handed over by the worker but not yet taken by the table (no events run).
    first.go.set()
    assert second.reached.wait(HOLD_S)
    inserted: list[bool] = []  # for each row added from now on: is it a 29 February?
    panel.model.rowsInserted.connect(
        lambda _parent, lo, hi: inserted.extend(_is_leap_day(panel.model.item(r).nominal) for r in range(lo, hi + 1))
    )
    _paste(window, qtbot, INDEPENDENCE_DAY)
    assert panel.model.stale and panel.stale_note.text() == STALE_NOTE
    second.go.set()
    qtbot.waitUntil(lambda: not service.pending, timeout=10_000)
    every = _nominals(panel)
    assert len(every) == LONG and all((n.month, n.day) == (7, 4) for n in every)
    assert not any(inserted)  # the second chunk of 29 Februaries was dropped, never appended
    assert computed_after_edit[0] == 1  # the older computation stopped at its next row


def _ticking(step: float) -> Callable[[], float]:
    """A clock that moves ``step`` seconds each time it is read."""
    counter = itertools.count()
    return lambda: next(counter) * step


@pytest.mark.parametrize(
    ("step", "size"),
    [
        (0.0, CHUNK_ROWS),  # a fast computation: 50 rows at a time
        (0.04, 3),  # 40 ms a row: what came in 100 ms
        (0.2, 1),  # a slow one: every row as it comes
    ],
)
def test_rows_are_handed_over_every_fifty_or_every_tenth_of_a_second(
    document: SpecDocument, clock: FixedClock, qtbot, step: float, size: int
) -> None:
    service = PreviewService(document, clock, ticks=_ticking(step))
    sizes: list[int] = []
    service.rowsArrived.connect(lambda rows, _shown: sizes.append(len(rows)))
    service.set_count(LONG)
    with qtbot.waitSignal(service.ready, timeout=10_000):
        service.refresh_now()
    service.wait()
    assert sizes and set(sizes) == {size}
    assert sum(sizes) == LONG - LONG % size
