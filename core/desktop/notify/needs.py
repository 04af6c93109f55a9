"""What newly needs a person, and the one short text a batch of it is told in.

Five things wait for a person: an occurrence whose effect nobody can vouch for
(``UNKNOWN_EFFECT``), a failure with its attempts used up that nobody looked at
(``FAILED``), a schedule with something due that no live engine runs (waiting
for an engine, :attr:`~core.ledger.queries.ScheduleSummary.waiting`), a
schedule the installed tz database (or a newer Tidemark) would move
(:mod:`core.ledger.drift_attention`), and a schedule the engines hold because
its revision cannot be read or expanded
(:attr:`~core.ledger.queries.ScheduleSummary.held`). :func:`needs_of` names each
as a :class:`Need` with a stable key.

A :class:`NoticeBook` remembers what it already told. Each :meth:`~NoticeBook.look`
gives at most one :class:`Notice` for everything new since the last one, never
sooner than ``min_gap`` after it (what comes meanwhile waits for the next
batch), and never tells the same need twice while it waits. A need that stops
waiting is forgotten, so that when it comes back (a schedule waits for an
engine again) it is news again.

The book lives in memory: it is not kept across a restart. Its first look
either tells what already waits, once, in one notice (``first_look=TELL``, the
headless engine: a person who just logged in hears once what waits) or takes
it as known (``QUIET``, the window, whose Attention badge shows it).

Pure: the time is an argument; nothing here reads a clock or the ledger.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Protocol

#: The notification's title, in the tray and from the service alike.
TITLE = "Tidemark: needs attention"
#: Needs named in one text; the rest are counted.
NAMED = 4
#: The least time between two notices.
MIN_GAP = timedelta(seconds=60)


class NeedKind(Enum):
    """Why a person is needed; each member's value is its words in the text."""

    UNKNOWN_EFFECT = "unknown effect"
    """A run whose effect nobody can vouch for."""
    FAILED = "failed"
    """A run that failed with its attempts used up, and nobody acknowledged it."""
    WAITING = "waiting for an engine"
    """A schedule with something due that no live engine runs."""
    DRIFT = "tzdata drift"
    """A schedule whose materialized future the installed tz database would move."""
    NEW_CODE = "computed otherwise by a new Tidemark"
    """A schedule whose materialized future a newer Tidemark computes otherwise."""
    HELD = "held by the engines"
    """A schedule the engines hold: its active revision cannot be read or expanded."""
    ALERTS = "alerts not delivered"
    """An alert route that keeps failing: one need per route, however many alerts wait for it."""

    @property
    def of_a_run(self) -> bool:
        return self in (NeedKind.UNKNOWN_EFFECT, NeedKind.FAILED)


_ORDER = list(NeedKind)


@dataclass(frozen=True)
class Need:
    """One thing that waits for a person; ``key`` names it across looks."""

    key: str
    kind: NeedKind
    schedule_id: str


class FirstLook(Enum):
    """What the first look does with what already waits."""

    TELL = "tell"
    """Tell it, once, in one notice."""
    QUIET = "quiet"
    """Take it as known: only what comes later is news."""


@dataclass(frozen=True)
class Notice:
    """One notification: its title and its text, and the needs it tells."""

    title: str
    text: str
    needs: tuple[Need, ...]
    at: datetime


class _Occurrence(Protocol):
    @property
    def occurrence_id(self) -> str: ...
    @property
    def schedule_id(self) -> str: ...
    @property
    def state(self) -> str: ...


class _Item(Protocol):
    @property
    def occurrence(self) -> _Occurrence: ...


class _Drift(Protocol):
    @property
    def schedule_id(self) -> str: ...
    @property
    def new_code(self) -> bool: ...


class _Summary(Protocol):
    @property
    def schedule_id(self) -> str: ...
    @property
    def waiting(self) -> str | None: ...
    @property
    def held(self) -> str | None: ...


def held_key(schedule_id: str) -> str:
    """How a schedule the engines hold is named among the needs."""
    return f"{schedule_id} (held)"


def waiting_key(schedule_id: str) -> str:
    """How a schedule waiting for an engine is named among the needs."""
    return f"{schedule_id} (waiting for an engine)"


def drift_key(schedule_id: str) -> str:
    """How a drifted schedule is named (the attention queue's own key,
    :func:`core.ledger.drift_attention.attention_key`)."""
    return f"{schedule_id} (tz drift)"


def alerts_key(route: str) -> str:
    """How an alert route that keeps failing is named among the needs."""
    return f"{route} (alerts not delivered)"


def needs_of(
    items: Iterable[_Item],
    drifts: Iterable[_Drift],
    summaries: Iterable[_Summary],
    failing_routes: Iterable[str] = (),
) -> list[Need]:
    """The needs in the attention queue's ``items`` (:class:`~core.ledger.attention_queries.AttentionItem`),
    its ``drifts`` (:class:`~core.ledger.drift_attention.DriftAttention`), the schedules' ``summaries``
    (:class:`~core.ledger.queries.ScheduleSummary`, read with ``stale_after`` so that ``waiting`` is set)
    and the alert routes that keep failing (:func:`core.ledger.alert_queries.failing_routes`; the
    route stands where a schedule would: ``{secret: NAME}`` for one kept as a secret)."""
    found = [
        Need(
            i.occurrence.occurrence_id,
            NeedKind.UNKNOWN_EFFECT if str(i.occurrence.state) == "UNKNOWN_EFFECT" else NeedKind.FAILED,
            i.occurrence.schedule_id,
        )
        for i in items
    ]
    found += [
        Need(drift_key(d.schedule_id), NeedKind.NEW_CODE if d.new_code else NeedKind.DRIFT, d.schedule_id)
        for d in drifts
    ]
    summaries = list(summaries)
    found += [Need(waiting_key(s.schedule_id), NeedKind.WAITING, s.schedule_id) for s in summaries if s.waiting]
    found += [Need(held_key(s.schedule_id), NeedKind.HELD, s.schedule_id) for s in summaries if s.held]
    found += [Need(alerts_key(route), NeedKind.ALERTS, route) for route in failing_routes]
    return sorted(found, key=lambda n: (_ORDER.index(n.kind), n.schedule_id, n.key))


def notice_text(needs: Sequence[Need]) -> str:
    """``3 runs need a decision: backup.nightly unknown effect (2), report.daily failed``: the
    needs grouped by schedule and kind, the first :data:`NAMED` groups named, the rest counted."""
    ordered = sorted(needs, key=lambda n: (_ORDER.index(n.kind), n.schedule_id, n.key))
    groups: dict[tuple[str, NeedKind], int] = {}
    for n in ordered:
        groups[(n.schedule_id, n.kind)] = groups.get((n.schedule_id, n.kind), 0) + 1
    named = [f"{sid} {kind.value}" + (f" ({count})" if count > 1 else "") for (sid, kind), count in groups.items()]
    rest = len(named) - NAMED
    listed = ", ".join(named[:NAMED]) + (f" and {rest} more" if rest > 0 else "")
    count = len(ordered)
    if all(n.kind.of_a_run for n in ordered):
        what = "run needs" if count == 1 else "runs need"
    elif all(n.kind is NeedKind.ALERTS for n in ordered):
        what = "alert route needs" if count == 1 else "alert routes need"
    elif not any(n.kind.of_a_run or n.kind is NeedKind.ALERTS for n in ordered):
        what = "schedule needs" if count == 1 else "schedules need"
    else:
        what = "things need"
    return f"{count} {what} a decision: {listed}"


class NoticeBook:
    """What was told, and what the next batch is (see the module's text)."""

    def __init__(self, *, min_gap: timedelta = MIN_GAP, first_look: FirstLook = FirstLook.TELL) -> None:
        self.min_gap = min_gap
        self.first_look = first_look
        self._told: set[str] | None = None
        self._last_at: datetime | None = None

    @property
    def told(self) -> frozenset[str]:
        """The keys of the needs told (or taken as known) that still wait."""
        return frozenset(self._told or ())

    def look(self, needs: Iterable[Need], now: datetime, *, quiet: bool = False) -> Notice | None:
        """The notice for what is new in ``needs`` (everything waiting now), or None when nothing
        is new or the last notice is less than ``min_gap`` old. ``quiet``: someone else tells
        (the window's tray) or notices are off: what is new counts as told, and no notice is given."""
        current = {n.key: n for n in needs}
        if self._told is None and self.first_look is FirstLook.QUIET:
            self._told = set(current)
            return None
        told = self._told = (self._told or set()) & set(current)  # a need that left is news when it comes back
        fresh = [n for key, n in current.items() if key not in told]
        if not fresh:
            return None
        if quiet:
            told.update(n.key for n in fresh)
            return None
        if self._last_at is not None and now - self._last_at < self.min_gap:
            return None  # too soon: what is new waits for the next batch
        told.update(n.key for n in fresh)
        self._last_at = now
        return Notice(TITLE, notice_text(fresh), tuple(fresh), now)
