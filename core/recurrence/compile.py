"""A validated spec compiled into what expansion needs: the zone, the rule as a
dateutil iterator over wall times, the bounds and the exclusions."""

from __future__ import annotations

import calendar
import itertools
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from dateutil import rrule as du

from core.calendar.business_days import BusinessDays
from core.enums import FoldPolicy, GapPolicy, Kind
from core.errors import Problem, SpecError
from core.recurrence.invalid_dates import MonthDayPlan, expand_month_days, plan_for
from core.recurrence.rebase import can_rebase, explicit_parts, rebased_start
from core.recurrence.rules import ParsedRule, RuleError, build_rrule, parse_rule, until_instant, until_local
from core.spec.facts import SpecFacts
from core.spec.model import ScheduleSpec
from core.time.zones import ZoneIndex, get_zone, zone_index

#: A rule whose first occurrence is further than this from its start is refused.
FIRST_OCCURRENCE_BOUND_YEARS = 1000
_MAX_MONTH_LEN = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}


#: Places in the count a compiled schedule remembers.
_KNOWN_COUNTS = 16


@dataclass(frozen=True)
class CountHint:
    """One time of a rule with COUNT and how many of its times come before it
    (0 for DTSTART's own): enough to resume the count there, not at DTSTART."""

    nominal: datetime
    index: int


@dataclass(slots=True)
class CompiledSchedule:
    """Everything expansion needs, derived once from a spec.

    It holds the spec's models until :meth:`release_spec` lets them go (a cached revision
    does: :mod:`core.ledger.compiled`); expansion reads ``facts``, never the models."""

    facts: SpecFacts
    zone: ZoneInfo
    parsed: ParsedRule | None = None
    rule: du.rrule | None = None
    month_days: MonthDayPlan | None = None
    until: datetime | None = None  # inclusive local bound (rule UNTIL and a local ``end``)
    end_utc: datetime | None = None  # inclusive instant bound (an ``end`` ending in Z, a UTC UNTIL)
    excluded_dates: frozenset[date] = frozenset()  # one shared empty set: a compiled revision is kept per schedule
    excluded_times: frozenset[datetime] = frozenset()
    #: The business calendar with its holiday policy (a calendar schedule with ``businessCalendar``).
    business_days: BusinessDays | None = field(default=None, compare=False, repr=False)
    #: Which wall times lie near an offset change in ``zone``: the zone's shared index,
    #: or one of its own for a zone built from a revision's pinned bytes.
    index: ZoneIndex | None = field(default=None, compare=False, repr=False)
    #: Places in the count found so far (a COUNT rule): walks resume from the nearest.
    known_counts: list[CountHint] = field(default_factory=list, compare=False, repr=False)
    #: The spec's models while they are held (None once released).
    held: ScheduleSpec | None = field(default=None, compare=False, repr=False)
    #: How to have the spec again once released.
    reload: Callable[[], ScheduleSpec] | None = field(default=None, compare=False, repr=False)

    @property
    def spec(self) -> ScheduleSpec:
        """The whole validated spec: held, or had again (parsed anew, or from a cache) once released."""
        if self.held is not None:
            return self.held
        assert self.reload is not None
        return self.reload()

    def release_spec(self, reload: Callable[[], ScheduleSpec]) -> None:
        """Let the spec's models go; ``reload`` gives the spec to whoever asks for it later."""
        self.reload = reload
        self.held = None

    @property
    def schedule_id(self) -> str:
        return self.facts.schedule_id

    @property
    def revision(self) -> int:
        return self.facts.revision

    @property
    def kind(self) -> Kind:
        return self.facts.kind

    @property
    def start(self) -> datetime | None:
        return self.facts.start

    @property
    def gap_policy(self) -> GapPolicy:
        return self.facts.gap_policy

    @property
    def fold_policy(self) -> FoldPolicy:
        return self.facts.fold_policy

    def is_excluded(self, nominal: datetime) -> bool:
        return nominal in self.excluded_times or nominal.date() in self.excluded_dates

    @property
    def count(self) -> int | None:
        """The rule's COUNT, when it has one (and its times are dateutil's own, not moved month days)."""
        if self.parsed is None or self.month_days is not None or "COUNT" not in self.parsed.parts:
            return None
        return int(self.parsed.parts["COUNT"])

    def counted(self, hint: CountHint) -> Iterator[CountHint]:
        """The rule's times from ``hint`` on, each with its place in the count, until COUNT runs out.

        The rule without COUNT names the same times, so it is resumed at a period
        boundary near ``hint`` (see :mod:`core.recurrence.rebase`) and numbered from there.
        """
        count = self.count
        assert count is not None and self.parsed is not None and self.facts.start is not None
        anchor = rebased_start(self.parsed, self.facts.start, hint.nominal)
        resumed = build_rrule(ParsedRule(explicit_parts(self.parsed, self.facts.start)), anchor, until=self.until)
        times = (when for when in resumed.xafter(hint.nominal, inc=True) if when >= self.facts.start)
        for index, when in enumerate(times, start=hint.index):
            if index >= count:
                return
            yield CountHint(when, index)

    def nearest_count(self, local: datetime, *, strictly: bool = False) -> CountHint | None:
        """The latest place in the count found so far at or before ``local`` (``strictly``: before it)."""
        before = [h for h in self.known_counts if h.nominal < local or (h.nominal == local and not strictly)]
        return max(before, key=lambda h: h.nominal) if before else None

    def count_position(self, local: datetime, hint: CountHint | None) -> CountHint | None:
        """The last time of a COUNT rule before ``local`` with its place in the count, walking
        from ``hint`` (or the nearest place found before; from DTSTART without one); None
        when no time comes before ``local``. What it finds is remembered for later walks."""
        assert self.facts.start is not None
        if hint is None or hint.nominal >= local:  # a place at ``local`` itself says nothing of the one before
            hint = self.nearest_count(local, strictly=True)
        if hint is None or hint.nominal >= local:
            first = next(iter(self.rule), None) if self.rule is not None else None
            if first is None:
                return None
            hint = CountHint(first, 0)
        found = None
        for item in self.counted(hint):
            if item.nominal >= local:
                break
            found = item
        if found is not None and found not in self.known_counts:
            self.known_counts.append(found)
            del self.known_counts[:-_KNOWN_COUNTS]
        return found

    def nominals(
        self, after: datetime | None = None, *, rebase: bool = True, hint: CountHint | None = None
    ) -> Iterator[tuple[datetime, str | None]]:
        """Calendar nominal wall times (>= ``after`` when given), each with a move note or None.

        With ``rebase`` (the default) a rule without COUNT resumes near ``after``
        instead of walking every period from its start; the times are the same.
        A rule with COUNT resumes at ``hint`` (a time at or before ``after`` and
        its place in the count) when one is given.
        """
        assert self.parsed is not None and self.facts.start is not None
        if self.count is not None and after is not None and (hint is None or hint.nominal > after):
            hint = self.nearest_count(after)
        if hint is not None and after is not None and hint.nominal <= after and self.count is not None:
            return ((item.nominal, None) for item in self.counted(hint) if item.nominal >= after)
        if self.month_days is not None:
            items = expand_month_days(self.parsed, self.facts.start, self.month_days, self.until)
            if after is None:
                return items
            return itertools.dropwhile(lambda item: item[0] < after, items)
        assert self.rule is not None
        if after is None or after <= self.facts.start:
            source: Iterator[datetime] = iter(self.rule)
        elif rebase and can_rebase(self.parsed):
            anchor = rebased_start(self.parsed, self.facts.start, after)
            parts = explicit_parts(self.parsed, self.facts.start)
            resumed = build_rrule(ParsedRule(parts), anchor, until=self.until)
            source = (when for when in resumed.xafter(after, inc=True) if when >= self.facts.start)
        else:
            source = self.rule.xafter(after, inc=True)
        return ((when, None) for when in source)


#: Parsed rules by their text, and dateutil rules by their text, start and bound, each shared by
#: every compiled schedule that has the same (an engine keeps one compiled schedule per live
#: revision; a catalogue repeats its rules). Held weakly: one lives while a schedule uses it.
#: Neither is changed once made (a rule's parts are read, never written; an rrule is iterated).
_PARSED: weakref.WeakValueDictionary[str, ParsedRule] = weakref.WeakValueDictionary()
_BUILT: weakref.WeakValueDictionary[tuple[object, ...], du.rrule] = weakref.WeakValueDictionary()
_SHARED_LOCK = threading.Lock()


def shared_rule(text: str) -> ParsedRule:
    """``parse_rule(text)``, one instance for every caller that asks for the same text."""
    found = _PARSED.get(text)
    if found is None:
        made = parse_rule(text)
        with _SHARED_LOCK:
            found = _PARSED.setdefault(text, made)
    return found


def _shared_rrule(text: str, parsed: ParsedRule, start: datetime, until: datetime | None) -> du.rrule:
    """``build_rrule(parsed, start, until=until)``, one instance for every compiled schedule with the same
    rule text, start and bound (their folds too: equal wall times at another fold are another key)."""
    key = (text, start, start.fold, until, until.fold if until is not None else None)
    found = _BUILT.get(key)
    if found is None:
        made = build_rrule(parsed, start, until=until)
        with _SHARED_LOCK:
            found = _BUILT.setdefault(key, made)
    return found


def _impossible_month_days(parsed: ParsedRule, start: datetime) -> str | None:
    """A reason when BYMONTH x BYMONTHDAY can never name a real date."""
    days = parsed.ints("BYMONTHDAY")
    if not days:
        return None
    months = parsed.ints("BYMONTH") or list(range(1, 13))
    for m in months:
        for d in days:
            if abs(d) <= _MAX_MONTH_LEN[m]:
                return None
    names = ", ".join(calendar.month_name[m] for m in months)
    return f"it yields no occurrence at all: day {','.join(map(str, days))} never exists in {names}"


def compile_schedule(spec: ScheduleSpec, zone: ZoneInfo | None = None) -> CompiledSchedule:
    """Compile a spec. Raises :class:`SpecError` naming ``rule`` (or another key) when it cannot run.

    ``zone`` is the spec's zone built from a revision's pinned TZif bytes
    (``tzdbPolicy: PIN``); by default the installed tzdata's.
    """
    facts = SpecFacts.of(spec)
    if zone is None:
        compiled = CompiledSchedule(facts, get_zone(spec.time_zone), index=zone_index(spec.time_zone), held=spec)
    else:
        compiled = CompiledSchedule(facts, zone, index=ZoneIndex(zone), held=spec)
    zone = compiled.zone
    if spec.end is not None:
        if spec.end.tzinfo is None:
            compiled.until = spec.end
        else:
            compiled.end_utc = spec.end
    dates = {e for e in spec.exclude if not isinstance(e, datetime)}
    times = {e for e in spec.exclude if isinstance(e, datetime)}
    if dates:
        compiled.excluded_dates = frozenset(dates)
    if times:
        compiled.excluded_times = frozenset(times)
    if spec.kind is not Kind.CALENDAR:
        return compiled
    if spec.business_calendar is not None and spec.holiday_policy is not None:
        compiled.business_days = BusinessDays(spec.business_calendar, spec.holiday_policy)
    assert spec.rule is not None and spec.start is not None
    try:
        parsed = shared_rule(spec.rule)
        rule_until = until_local(parsed, zone)
        if rule_until is not None:
            compiled.until = rule_until if compiled.until is None else min(rule_until, compiled.until)
        rule_end = until_instant(parsed)
        if rule_end is not None:
            compiled.end_utc = rule_end if compiled.end_utc is None else min(rule_end, compiled.end_utc)
        compiled.parsed = parsed
        compiled.month_days = plan_for(parsed, spec.start, spec.invalid_date_policy)
        if compiled.month_days is None:
            impossible = _impossible_month_days(parsed, spec.start)
            if impossible:
                raise RuleError(impossible)
        compiled.rule = _shared_rrule(spec.rule, parsed, spec.start, compiled.until)
    except RuleError as exc:
        raise SpecError([Problem("rule", str(exc))]) from None
    try:
        first = next(compiled.nominals(), None)
    except ValueError as exc:  # dateutil finds out only while iterating (INTERVAL with BYHOUR that never meet)
        raise SpecError([Problem("rule", f"it yields no occurrence at all ({str(exc).rstrip('.').lower()})")]) from None
    if first is None:
        if compiled.until is not None:
            raise SpecError([Problem("rule", "it yields no occurrence between start and its end (UNTIL or end)")])
        raise SpecError([Problem("rule", "it yields no occurrence at all")])
    if first[0] - spec.start > timedelta(days=366 * FIRST_OCCURRENCE_BOUND_YEARS):
        bound = f"the iteration bound of {FIRST_OCCURRENCE_BOUND_YEARS} years"
        raise SpecError([Problem("rule", f"its first occurrence ({first[0]:%Y-%m-%d}) lies beyond {bound}")])
    return compiled
