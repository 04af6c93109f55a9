"""Something worked out from a document's spec off the GUI thread, again after each edit.

The preview rows, the summary sentence and the what-if answer all follow the
document the same way: wait for a pause in the edits, then, if the spec is
valid, compute from it on a worker (:class:`~scheduler_gui.background.LatestOnly`,
so only the newest answer arrives), and if it is not, say its first problem
instead of computing anything.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from core.spec.model import ScheduleSpec
from scheduler_gui.background import LatestOnly
from scheduler_gui.workspace.document import SpecDocument


class SpecFollower(QObject):
    """Runs ``work_for(spec)``'s work off the GUI thread, ``debounce_ms`` after the last edit.

    ``work_for`` is called on the GUI thread when a refresh starts (so it may read
    the caller's own inputs then) and returns the work to run off it.
    """

    done = Signal(object)
    """The newest answer."""
    failed = Signal(str)
    """Why the newest work failed, in one line."""
    incomplete = Signal(object)
    """The spec is not valid: nothing was computed. Carries its first problem (None when none is listed)."""
    busyChanged = Signal(bool)

    def __init__(
        self,
        document: SpecDocument,
        work_for: Callable[[ScheduleSpec], Callable[[], object]],
        debounce_ms: int,
        parent: QObject | None = None,
        stand_in: Callable[[], Callable[[], object] | None] | None = None,
    ) -> None:
        """``stand_in``, when given, is asked for work to run instead while the spec is not valid
        (None: there is none, and :attr:`incomplete` says why)."""
        super().__init__(parent)
        self._doc = document
        self._work_for = work_for
        self._stand_in = stand_in
        self._worker = LatestOnly(self)
        self._worker.done.connect(self.done)
        self._worker.failed.connect(self.failed)
        self._worker.busyChanged.connect(self.busyChanged)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.refresh_now)
        document.changed.connect(self.schedule_refresh)

    @property
    def busy(self) -> bool:
        """True while the newest request waits for its answer."""
        return self._worker.busy

    @property
    def pending(self) -> bool:
        """True from an edit until its answer arrives: waiting for the edits to pause, or for the work."""
        return self._timer.isActive() or self._worker.busy

    def schedule_refresh(self) -> None:
        """Work it out again once the edits pause."""
        self._timer.start()

    def refresh_now(self) -> None:
        """Work it out for the document as it is now."""
        self._timer.stop()
        spec = self._doc.spec
        instead = self._stand_in() if spec is None and self._stand_in is not None else None
        if instead is not None:
            self._worker.submit(instead)
            return
        if spec is None:
            self._worker.cancel()
            problems = self._doc.problems
            self.incomplete.emit(problems[0] if problems else None)
            return
        self._worker.submit(self._work_for(spec))

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the running work is done (tests, screenshots)."""
        return self._worker.wait(msecs)
