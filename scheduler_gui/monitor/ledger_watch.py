"""Following the ledger: the event log tailed on a timer, off the GUI thread.

The views never poll the database themselves: they listen to one
:class:`LedgerWatcher`, which reads the events written since the last one it
saw and, when something entered or left the attention queue, the queue's ids
(:func:`core.ledger.monitor_reads.events_since`, one read each tick). A ledger that is locked or
unreachable is retried on the next tick; the problem is reported once, and
again only after it has cleared and come back.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from core.ledger.events import EventKind
from core.ledger.monitor_reads import EventsRead, events_since
from core.ledger.queries import EventView
from scheduler_gui.background import LatestOnly
from scheduler_gui.context import AppContext
from scheduler_gui.monitor.background import describe_error, ledger_work

#: Milliseconds between two looks at the event log.
POLL_MS = 1000
#: Events read per query, and queries per poll at most (a backlog is read over several polls).
BATCH = 1000
MAX_BATCHES = 20

#: Events that add or change what the occurrences view shows: rows, and expired
#: ranges (a long outage's missed occurrences recorded as one entry).
LIVE_KINDS = frozenset(
    {
        EventKind.OCCURRENCE_TRANSITIONED.value,
        EventKind.OCCURRENCE_CREATED.value,
        EventKind.OCCURRENCES_MATERIALIZED.value,
        EventKind.OCCURRENCES_EXPIRED.value,
        EventKind.SCHEDULE_PUBLISHED.value,
    }
)


def is_live(event: EventView) -> bool:
    """Whether the occurrences view must be read again after this event."""
    return event.kind in LIVE_KINDS


class LedgerWatcher(QObject):
    """Tails the event log of ``ctx.ledger`` and tells the views what changed."""

    eventsArrived = Signal(list)
    """New events (:class:`~core.ledger.queries.EventView`), oldest first."""
    attentionCountChanged = Signal(int)
    """How many occurrences wait for a person (emitted on the first poll and on every change)."""
    newAttention = Signal(list)
    """Ids of occurrences that entered the attention queue since the last poll."""
    errorOccurred = Signal(str)
    """The ledger could not be read (once per spell of trouble)."""

    def __init__(self, ctx: AppContext, parent: QObject | None = None, *, interval_ms: int = POLL_MS) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._last_id: int | None = None
        self._attention: frozenset[str] | None = None
        self._in_flight = False
        self._reported = False
        self._background = LatestOnly(self, describe=describe_error)
        self._background.done.connect(self._done)
        self._background.failed.connect(self._error)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    # --- what it knows ------------------------------------------------------------------

    @property
    def attention_ids(self) -> frozenset[str]:
        """The queue as of the last poll."""
        return self._attention or frozenset()

    @property
    def attention_count(self) -> int:
        return len(self.attention_ids)

    @property
    def last_event_id(self) -> int | None:
        return self._last_id

    # --- polling ---------------------------------------------------------------------------

    def poll_now(self) -> None:
        """Read the ledger now, on the calling thread, and emit what changed (tests, F5)."""
        try:
            result = self._read(self._last_id, self._attention is None)
        except Exception as exc:
            self._failed(describe_error(exc))
            return
        self._apply(result)

    def stop(self) -> None:
        """Stop polling and wait for a read in flight."""
        self._timer.stop()
        self._background.wait()

    def start(self) -> None:
        self._timer.start()

    def _tick(self) -> None:
        if self._in_flight:
            return
        self._in_flight = True
        since, first = self._last_id, self._attention is None
        self._background.submit(ledger_work(lambda: self._read(since, first)))

    def _done(self, result: EventsRead) -> None:
        self._in_flight = False
        self._apply(result)

    def _error(self, message: str) -> None:
        self._in_flight = False
        self._failed(message)

    def _read(self, since: int | None, need_attention: bool) -> EventsRead:
        """Runs off the GUI thread (or in :meth:`poll_now`)."""
        return events_since(self._ctx.ledger, since, attention=need_attention, batch=BATCH, max_batches=MAX_BATCHES)

    def _apply(self, result: EventsRead) -> None:
        if result.since != self._last_id:
            return  # read before another poll moved on: already seen
        self._last_id = result.last_id
        self._reported = False  # the ledger answered: a new problem will be reported again
        if result.events:
            self.eventsArrived.emit(list(result.events))
        if result.attention is None:
            return
        before, self._attention = self._attention, result.attention
        if before is None or len(before) != len(result.attention):
            self.attentionCountChanged.emit(len(result.attention))
        fresh = sorted(result.attention - before) if before is not None else []
        if fresh:
            self.newAttention.emit(fresh)

    def _failed(self, message: str) -> None:
        if not self._reported:
            self._reported = True
            self.errorOccurred.emit(message)
