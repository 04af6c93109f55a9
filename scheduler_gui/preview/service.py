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

While a preview of an edit is built, its first rows are handed over as they are
computed (:attr:`PreviewService.rowsArrived`), :data:`CHUNK_ROWS` at a time or
whatever came in :data:`CHUNK_SECONDS`; a newer edit stops the older build, and
its rows still on their way are dropped.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from PySide6.QtCore import QObject, Signal

from core.clock import Clock
from core.errors import UserError
from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import Preview, Reach, build_preview_to_change
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec
from scheduler_gui.background import Superseded
from scheduler_gui.workspace.document import SpecDocument
from scheduler_gui.workspace.spec_follower import SpecFollower

#: The keys of the business calendar: rows are shown without them while they are being filled in.
_CALENDAR_KEYS = frozenset(("businessCalendar", "holidayPolicy"))
#: Milliseconds of quiet after the last edit before a preview is built.
DEBOUNCE_MS = 120
DEFAULT_COUNT = 50
#: The most rows a preview holds (the Rows control's maximum, and how far "Next transition" reaches).
MAX_ROWS = 5000
#: The most rows the preview adds on its own, in all, to show the zone's next clock change.
REACH_LIMIT = 1000
#: Rows handed to the table at a time while a preview is built...
CHUNK_ROWS = 50
#: ...or fewer, when this many seconds have passed since the last ones.
CHUNK_SECONDS = 0.1


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


class _RowsRelay(QObject):
    chunk = Signal(int, object, int)  # build number, rows, rows handed over so far


class _Stream:
    """On the worker: gathers the rows of build ``number`` as they are computed and hands them over
    in chunks; stops the build (:class:`Superseded`) once a newer one is wanted."""

    def __init__(self, service: PreviewService, number: int) -> None:
        self._service = service
        self._number = number
        self._rows: list[Occurrence] = []
        self._shown = 0
        self._since = service.ticks()

    def __call__(self, row: Occurrence) -> None:
        service = self._service
        # One int, written only by the GUI thread (as in background.LatestOnly).
        if service.stream_number != self._number:
            raise Superseded
        self._rows.append(row)
        if len(self._rows) >= CHUNK_ROWS or service.ticks() - self._since >= CHUNK_SECONDS:
            self._shown += len(self._rows)
            service.relay.chunk.emit(self._number, self._rows, self._shown)
            self._rows = []
            self._since = service.ticks()
            if service.chunk_hook is not None:
                service.chunk_hook(self._shown)


def _build(
    spec: ScheduleSpec,
    start: datetime,
    count: int,
    after: datetime | None,
    on_row: Callable[[Occurrence], None] | None = None,
) -> Answer:
    """The rows asked for, on to the next clock change; with ``after`` (Next transition), on to
    the change after it, or, when that cannot be reached, the rows shown without it.
    ``on_row`` sees the rows asked for as they are computed (without ``after`` only)."""
    if after is not None:
        preview, reach = build_preview_to_change(spec, start, count, limit=max(MAX_ROWS, count), after=after)
        if reach.reached:
            return Answer(preview, reach, True)
        preview, _ = build_preview_to_change(spec, start, count, limit=max(REACH_LIMIT, count))
        return Answer(preview, reach, True)
    preview, reach = build_preview_to_change(spec, start, count, limit=max(REACH_LIMIT, count), on_row=on_row)
    return Answer(preview, reach, False)


class PreviewService(QObject):
    """Builds the preview of ``document`` from :attr:`start` (default: the clock's now)."""

    ready = Signal(object)
    """A :class:`~core.recurrence.preview.Preview` for the newest request."""
    failed = Signal(str)
    """The spec is invalid, or the preview could not be built (the message says why)."""
    busyChanged = Signal(bool)
    startChanged = Signal()
    """:attr:`start` moved (From changed, or "now" was read again): what is seen from it must follow."""
    outdated = Signal()
    """The document or the start changed: the rows shown are of what was there before, until :attr:`ready`."""
    rowsArrived = Signal(object, int)
    """The next rows of the preview being built (a list of occurrences, in order), and how many
    have arrived so far: the first chunk's count is its own length. :attr:`ready` brings them all."""

    def __init__(
        self,
        document: SpecDocument,
        clock: Clock,
        parent: QObject | None = None,
        *,
        ticks: Callable[[], float] = time.monotonic,
    ) -> None:
        """``ticks`` is the clock (in seconds) that times the chunks of rows."""
        super().__init__(parent)
        self.ticks = ticks
        self.stream_number = 0
        #: Called on the worker after each chunk is handed over, with the rows handed over so far (tests).
        self.chunk_hook: Callable[[int], None] | None = None
        self.relay = _RowsRelay(self)
        self.relay.chunk.connect(self._on_chunk)
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
        self.building: ScheduleSpec | None = None
        """The spec of the rows under way (they arrive before the whole preview)."""

    def _work_for(self, spec: ScheduleSpec) -> partial[Answer]:
        self.building = spec
        self._stop_stream()
        stream = _Stream(self, self.stream_number) if self._reach_after is None else None
        return partial(_build, spec, self.start, self._count, self._reach_after, stream)

    def _stop_stream(self) -> None:
        """The build under way is of an older request: it stops, and its rows on their way are dropped."""
        self.stream_number += 1

    def _on_chunk(self, number: int, rows: list[Occurrence], shown: int) -> None:
        if number == self.stream_number:
            self.rowsArrived.emit(rows, shown)

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
        self._stop_stream()
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
        self._stop_stream()
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
        self._stop_stream()
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
