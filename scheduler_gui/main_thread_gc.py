"""Python's cyclic garbage collection, run on the GUI thread only.

Python collects reference cycles in whichever thread happens to allocate past
the collector's threshold. When that is a worker (a preview, the summary, the
engine), a cycle holding a widget left over from a closed page is destroyed
from the worker, while the GUI thread may be deleting Qt objects of its own:
Qt objects must die on the thread they live on, and this one crashes the
process. So the app turns automatic collection off and collects from a timer
on the GUI thread instead, with the same thresholds Python would have used.
Reference counting still frees everything that is not in a cycle at once.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

#: How often the GUI thread looks at the collector's counts.
INTERVAL_MS = 500


class MainThreadCollector(QObject):
    """Collects garbage cycles on the thread that owns it (the GUI thread), never on another."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)
        self._was_enabled = gc.isenabled()

    def start(self) -> None:
        """Turn Python's automatic collection off and collect from this thread's timer from now on."""
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        """Give collection back to Python (as it was before :meth:`start`)."""
        self._timer.stop()
        if self._was_enabled:
            gc.enable()

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def collect_due(self) -> int:
        """Collect the oldest generation whose count passed its threshold, as Python itself would; the
        number of unreachable objects found (0 when nothing was due)."""
        counts = gc.get_count()
        thresholds = gc.get_threshold()
        if counts[0] <= thresholds[0]:
            return 0
        generation = 0
        if counts[1] > thresholds[1]:
            generation = 1
            if counts[2] > thresholds[2]:
                generation = 2
        return gc.collect(generation)


_collector: MainThreadCollector | None = None


def collect_on_this_thread(app: QObject) -> MainThreadCollector:
    """Install one :class:`MainThreadCollector` for ``app`` (the QApplication, on the GUI thread); idempotent."""
    global _collector
    if _collector is None:
        _collector = MainThreadCollector(app)
        _collector.start()
        app.destroyed.connect(_forget)
    return _collector


def _forget() -> None:
    global _collector
    if _collector is not None:
        gc.enable()
    _collector = None
