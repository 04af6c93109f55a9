"""Preview rows for the document, computed off the GUI thread.

Edits arrive faster than a long preview can be built, so requests are
debounced and numbered; a result that is older than the newest request is
dropped instead of shown. Every view that draws rows (the preview table, the
timeline) listens to :attr:`PreviewService.ready`.

The service also holds the instant the designer looks from (:attr:`start`):
the preview's From when one is chosen, else the clock's "now", read once per
edit. The summary and the clock-change consequences are computed from that
same instant, so the dates they name are dates of rows the table shows.

Rows: the number asked for (:attr:`count`), and more, up to
:data:`REACH_LIMIT` in all, to go past the zone's next clock change;
:meth:`reach_next_change` (the "Next transition" button) goes on to the change
after the last row shown, up to :data:`MAX_ROWS`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from PySide6.QtCore import QObject, Signal

from core.clock import Clock
from core.errors import UserError
from core.preview import Preview, Reach, build_preview_to_change
from core.spec import ScheduleSpec
from core.spec_validation import parse_spec
from scheduler_gui.document import SpecDocument
from scheduler_gui.spec_follower import SpecFollower

#: The keys of the business calendar: rows are shown without them while they are being filled in.
_CALENDAR_KEYS = frozenset(("businessCalendar", "holidayPolicy"))
#: Milliseconds of quiet after the last edit before a preview is built.
DEBOUNCE_MS = 120
DEFAULT_COUNT = 50
#: The most rows a preview holds (the Rows control's maximum, and how far "Next transition" reaches).
MAX_ROWS = 5000
#: The most rows the preview adds on its own, in all, to show the zone's next clock change.
REACH_LIMIT = 1000


@dataclass(frozen=True)
class Answer:
    """One built preview, with how it reached for a clock change."""

    preview: Preview
    reach: Reach
    asked: bool  # built for :meth:`PreviewService.reach_next_change`
    #: Not empty when the rows are of the spec without its business calendar, whose problem this names.
    without_calendar: str = ""


def _without_calendar(problem: str, build: partial[Answer]) -> Answer:
    return dataclasses.replace(build(), without_calendar=problem)


def _build(spec: ScheduleSpec, start: datetime, count: int, after: datetime | None) -> Answer:
    """The rows asked for, on to the next clock change; with ``after`` (Next transition), on to
    the change after it, or, when that cannot be reached, the rows shown without it."""
    if after is not None:
        preview, reach = build_preview_to_change(spec, start, count, limit=max(MAX_ROWS, count), after=after)
        if reach.reached:
            return Answer(preview, reach, True)
        preview, _ = build_preview_to_change(spec, start, count, limit=max(REACH_LIMIT, count))
        return Answer(preview, reach, True)
    preview, reach = build_preview_to_change(spec, start, count, limit=max(REACH_LIMIT, count))
    return Answer(preview, reach, False)


class PreviewService(QObject):
    """Builds the preview of ``document`` from :attr:`start` (default: the clock's now)."""

    ready = Signal(object)
    """A :class:`~core.preview.Preview` for the newest request."""
    failed = Signal(str)
    """The spec is invalid, or the preview could not be built (the message says why)."""
    busyChanged = Signal(bool)
    startChanged = Signal()
    """:attr:`start` moved (From changed, or "now" was read again): what is seen from it must follow."""
    outdated = Signal()
    """The document or the start changed: the rows shown are of what was there before, until :attr:`ready`."""

    def __init__(self, document: SpecDocument, clock: Clock, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._doc = document
        self._clock = clock
        self._start: datetime | None = None
        self._now = clock.now()
        self._count = DEFAULT_COUNT
        self._latest: Preview | None = None
        self._answer: Answer | None = None
        self._reach_after: datetime | None = None
        self._follow = SpecFollower(document, self._work_for, DEBOUNCE_MS, self, stand_in=self._stand_in)
        self._follow.busyChanged.connect(self.busyChanged)
        self._follow.done.connect(self._on_done)
        self._follow.failed.connect(self.failed)
        self._follow.incomplete.connect(
            lambda first: self.failed.emit(str(first) if first is not None else "the schedule is not complete yet")
        )
        # Every edit reads "now" once, before anything computed from the edit asks for it.
        document.changed.connect(self._on_edit)

    def _work_for(self, spec: ScheduleSpec) -> partial[Answer]:
        return partial(_build, spec, self.start, self._count, self._reach_after)

    def _stand_in(self) -> partial[Answer] | None:
        """While the only problems are in the business calendar (just turned on, its policy not chosen yet),
        the rows without it, with the calendar's first problem to say what is missing."""
        problems = self._doc.problems
        if not problems or not all(p.key.split(".")[0] in _CALENDAR_KEYS for p in problems):
            return None
        data = {k: v for k, v in self._doc.data.items() if k not in _CALENDAR_KEYS}
        try:
            spec = parse_spec(data)
        except UserError:
            return None
        first = problems[0]
        return partial(_without_calendar, f"{first.key}: {first.message}", self._work_for(spec))

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def latest(self) -> Preview | None:
        """The last preview shown, if any."""
        return self._latest

    @property
    def answer(self) -> Answer | None:
        """The last preview shown, with how it reached for a clock change."""
        return self._answer

    @property
    def start(self) -> datetime:
        """The instant the rows start from: the chosen From, else "now" as read at the last edit or refresh."""
        return self._start if self._start is not None else self._now

    @property
    def from_now(self) -> bool:
        """True when no From is chosen: the rows start at the clock's now."""
        return self._start is None

    def set_start(self, start: datetime | None) -> None:
        """Rows from ``start`` (aware); None means from now."""
        self._start = start
        self._reach_after = None
        if start is None:
            self._now = self._clock.now()
        self.startChanged.emit()
        self.outdated.emit()
        self.schedule_refresh()

    @property
    def count(self) -> int:
        return self._count

    def set_count(self, count: int) -> None:
        self._count = max(1, count)
        self._reach_after = None
        self.schedule_refresh()

    def reach_next_change(self) -> None:
        """Build the rows again, on to the zone's next clock change after the last row shown
        (at most :data:`MAX_ROWS` rows); :attr:`answer` then says whether it was reached."""
        rows = self._latest.rows if self._latest is not None else []
        self._reach_after = rows[-1].position if rows else self.start
        self._follow.refresh_now()

    def schedule_refresh(self) -> None:
        """Ask for a new preview after the debounce interval."""
        self._follow.schedule_refresh()

    def refresh_now(self) -> None:
        """Read "now" again and start building a preview of the document as it is now (F5)."""
        self._read_now()
        self._follow.refresh_now()

    def _read_now(self) -> None:
        if self._start is None:
            now = self._clock.now()
            if now != self._now:
                self._now = now
                self.startChanged.emit()

    def _on_edit(self) -> None:
        self._reach_after = None
        self._read_now()
        self.outdated.emit()

    @property
    def busy(self) -> bool:
        """True while a preview is being built for the newest request."""
        return self._follow.busy

    @property
    def pending(self) -> bool:
        """True from an edit until its preview arrives (tests, screenshots)."""
        return self._follow.pending

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until running jobs finish (tests and screenshots)."""
        return self._follow.wait(msecs)

    def _on_done(self, answer: object) -> None:
        assert isinstance(answer, Answer)
        self._answer = answer
        self._latest = answer.preview
        self.ready.emit(answer.preview)
