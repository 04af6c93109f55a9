"""Preview rows for the document, computed off the GUI thread.

Edits arrive faster than a long preview can be built, so requests are
debounced and numbered; a result that is older than the newest request is
dropped instead of shown. Every view that draws rows (the preview table, the
timeline) listens to :attr:`PreviewService.ready`.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial

from PySide6.QtCore import QObject, Signal

from core.clock import Clock
from core.preview import Preview, build_preview
from scheduler_gui.document import SpecDocument
from scheduler_gui.spec_follower import SpecFollower

#: Milliseconds of quiet after the last edit before a preview is built.
DEBOUNCE_MS = 120
DEFAULT_COUNT = 50


class PreviewService(QObject):
    """Builds the preview of ``document`` from ``start`` (default: the clock's now)."""

    ready = Signal(object)
    """A :class:`~core.preview.Preview` for the newest request."""
    failed = Signal(str)
    """The spec is invalid, or the preview could not be built (the message says why)."""
    busyChanged = Signal(bool)

    def __init__(self, document: SpecDocument, clock: Clock, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._doc = document
        self._clock = clock
        self._start: datetime | None = None
        self._count = DEFAULT_COUNT
        self._latest: Preview | None = None
        self._follow = SpecFollower(
            document, lambda spec: partial(build_preview, spec, self.start, count=self._count), DEBOUNCE_MS, self
        )
        self._follow.busyChanged.connect(self.busyChanged)
        self._follow.done.connect(self._on_done)
        self._follow.failed.connect(self.failed)
        self._follow.incomplete.connect(
            lambda first: self.failed.emit(str(first) if first is not None else "the schedule is not complete yet")
        )

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def latest(self) -> Preview | None:
        """The last preview shown, if any."""
        return self._latest

    @property
    def start(self) -> datetime:
        return self._start if self._start is not None else self._clock.now()

    def set_start(self, start: datetime | None) -> None:
        """Rows from ``start`` (aware); None means from now."""
        self._start = start
        self.schedule_refresh()

    @property
    def count(self) -> int:
        return self._count

    def set_count(self, count: int) -> None:
        self._count = max(1, count)
        self.schedule_refresh()

    def schedule_refresh(self) -> None:
        """Ask for a new preview after the debounce interval."""
        self._follow.schedule_refresh()

    def refresh_now(self) -> None:
        """Start building a preview of the document as it is now."""
        self._follow.refresh_now()

    @property
    def busy(self) -> bool:
        """True while a preview is being built for the newest request."""
        return self._follow.busy

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until running jobs finish (tests and screenshots)."""
        return self._follow.wait(msecs)

    def _on_done(self, preview: object) -> None:
        assert isinstance(preview, Preview)
        self._latest = preview
        self.ready.emit(preview)
