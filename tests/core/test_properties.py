"""Properties of expansion near real clock changes (docs/contract.md §2-3), checked with
hypothesis on about 100,000 wall times.

Each example picks a real transition of one of many zones (1970-2030 in the
installed tzdata), a point within 3 hours of it on the wall clock, a pair of
gap/fold policies and a minutely rule of 250 occurrences around that point
(with random seconds), then checks every row against the standard library's
own reading of the zone (PEP 495), never against the code under test.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta
from functools import cache
from itertools import pairwise
from typing import Any
from unittest import mock
from zoneinfo import ZoneInfo

import pytest
from helpers import make_data, make_interval_spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.enums import FoldPolicy, GapPolicy, Status
from core.recurrence import expand as expand_module
from core.recurrence.compile import CompiledSchedule, compile_schedule
from core.recurrence.expand import _DRIFT, _offset_bounds, expand, first_rows
from core.recurrence.occurrence import Occurrence
from core.spec.validation import parse_spec
from core.time.zones import Transition, get_zone, transitions

ZONES = [
    "America/New_York",
    "Europe/Berlin",
    "Europe/London",
    "Europe/Dublin",
    "Europe/Moscow",
    "Europe/Volgograd",
    "Europe/Istanbul",
    "Australia/Lord_Howe",
    "Australia/Sydney",
    "Antarctica/Troll",
    "Pacific/Apia",
    "Pacific/Kwajalein",
    "Pacific/Kiritimati",
    "Pacific/Chatham",
    "Pacific/Norfolk",
    "America/Havana",
    "America/Santiago",
    "America/Asuncion",
    "America/Sao_Paulo",
    "America/Mexico_City",
    "America/Caracas",
    "America/St_Johns",
    "America/Goose_Bay",
    "America/Nuuk",
    "Asia/Beirut",
    "Asia/Amman",
    "Asia/Tehran",
    "Asia/Gaza",
    "Africa/Cairo",
    "Africa/Casablanca",
]

COUNT = 250  # occurrences per example
EXAMPLES = 400  # 400 x 250 = 100,000 nominal wall times
WINDOW = timedelta(hours=3)

SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@cache
def real_transitions(zone: str) -> tuple[Transition, ...]:
    found = transitions(get_zone(zone), datetime(1970, 1, 1, tzinfo=UTC), datetime(2031, 1, 1, tzinfo=UTC))
    assert found, zone
    return tuple(found)


@st.composite
def near_transition(draw: st.DrawFn) -> dict[str, Any]:
    zone = draw(st.sampled_from(ZONES))
    tr = draw(st.sampled_from(real_transitions(zone)))
    step = draw(st.sampled_from([1, 1, 2, 3]))  # minutes between occurrences
    span = timedelta(minutes=step * (COUNT - 1))
    point = tr.local_before + timedelta(
        seconds=draw(st.integers(-int(WINDOW.total_seconds()), int(WINDOW.total_seconds())))
    )
    # The batch straddles the point; its wall times keep the start's seconds.
    start = (point - span / 2).replace(microsecond=0)
    exclude_mode = draw(st.sampled_from(["none"] * 6 + ["date", "time"]))
    exclude: list[str] = []
    if exclude_mode == "date":
        exclude = [tr.local_before.date().isoformat()]
    elif exclude_mode == "time":
        exclude = [(start + timedelta(minutes=step * draw(st.integers(0, COUNT - 1)))).isoformat()]
    return {
        "zone": zone,
        "start": start,
        "step": step,
        "gap": draw(st.sampled_from(list(GapPolicy))),
        "fold": draw(st.sampled_from(list(FoldPolicy))),
        "exclude": exclude,
        "period": draw(st.sampled_from([None] * 7 + ["{nominal:%Y-%m-%dT%H}"])),
        "split": draw(st.floats(0.0, 1.0)),
        "later": draw(st.floats(0.0, 1.0)),
    }


def build(case: dict[str, Any]) -> CompiledSchedule:
    data = make_data(
        scheduleId="prop.check_1",
        timeZone=case["zone"],
        rule=f"FREQ=MINUTELY;INTERVAL={case['step']};COUNT={COUNT}",
        start=case["start"].isoformat(),
        gapPolicy=case["gap"].value,
        foldPolicy=case["fold"].value,
        exclude=case["exclude"],
    )
    if case["period"]:
        data["businessPeriod"] = case["period"]
    return compile_schedule(parse_spec(data))


# --- the standard library's reading of a wall time (PEP 495) ------------------------------


def readings(zone: ZoneInfo, local: datetime) -> list[datetime]:
    """Every UTC instant whose wall time in ``zone`` is ``local``, earliest first."""
    found = set()
    for fold in (0, 1):
        instant = local.replace(tzinfo=zone, fold=fold).astimezone(UTC)
        if instant.astimezone(zone).replace(tzinfo=None) == local:
            found.add(instant)
    return sorted(found)


def offset_before_gap(zone: ZoneInfo, local: datetime) -> timedelta:
    off = local.replace(tzinfo=zone, fold=0).utcoffset()  # PEP 495: fold=0 in a gap = the offset before
    assert off is not None
    return off


def offset_after_gap(zone: ZoneInfo, local: datetime) -> timedelta:
    off = local.replace(tzinfo=zone, fold=1).utcoffset()
    assert off is not None
    return off


def wall(zone: ZoneInfo, instant: datetime) -> datetime:
    return instant.astimezone(zone).replace(tzinfo=None)


def occ_id(row: Occurrence) -> str:
    text = json.dumps([row.schedule_id, row.revision, row.nominal_local, row.fold_ordinal], separators=(",", ":"))
    return "occ-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def slot_id(row: Occurrence) -> str | None:
    if row.resolved_utc is None:
        return None
    text = json.dumps([row.schedule_id, row.resolved_utc], separators=(",", ":"))
    return "slot-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


# --- the checks ----------------------------------------------------------------------------


def check_row(row: Occurrence, zone: ZoneInfo, case: dict[str, Any], excluded: set[str]) -> None:
    nominal = row.nominal
    found = readings(zone, nominal)
    assert row.occurrence_id == occ_id(row)
    assert row.logical_slot_id == slot_id(row)
    assert 0 <= row.fold_ordinal < max(len(found), 1)
    if row.status.runnable:
        # Every runnable instant exists: it reads back as a wall time and back again.
        assert row.resolved is not None and row.position == row.resolved
        local = row.resolved.astimezone(zone)
        assert local.replace(tzinfo=None).replace(tzinfo=zone, fold=local.fold).astimezone(UTC) == row.resolved
        assert row.offset == local.utcoffset()
        assert row.resolved_local == local.replace(tzinfo=None)
        assert row.resolved_utc == row.resolved.strftime("%Y-%m-%dT%H:%M:%SZ")
    else:
        assert row.resolved is None and row.resolved_utc is None and row.logical_slot_id is None
        assert row.reason
    if row.status is Status.SCHEDULED:
        assert row.resolved is not None
        assert wall(zone, row.resolved) == nominal
        assert row.resolved == found[row.fold_ordinal]
        assert row.resolved.astimezone(zone).fold == (1 if len(found) == 2 and row.fold_ordinal == 1 else 0)
    elif row.status is Status.SHIFTED:
        assert row.resolved is not None
        assert found == [], "only a wall time in a gap is shifted"
        before, after = offset_before_gap(zone, nominal), offset_after_gap(zone, nominal)
        pre_gap = (nominal - before).replace(tzinfo=UTC)
        if case["gap"] is GapPolicy.SHIFT_BY_GAP:
            assert row.resolved == pre_gap
        else:
            assert case["gap"] is GapPolicy.SHIFT_FORWARD
            # The transition instant: the offset changes exactly there.
            assert (nominal - after).replace(tzinfo=UTC) < row.resolved <= pre_gap
            assert (row.resolved - timedelta(seconds=1)).astimezone(zone).utcoffset() != row.offset
        assert wall(zone, row.resolved) > nominal
    elif row.status is Status.SKIPPED_GAP:
        assert found == [] and case["gap"] is GapPolicy.SKIP
        assert row.position == (nominal - offset_before_gap(zone, nominal)).replace(tzinfo=UTC)
    elif row.status is Status.SKIPPED_FOLD:
        assert len(found) == 2 and case["fold"] is not FoldPolicy.BOTH
        assert row.position == found[row.fold_ordinal]
        assert row.fold_ordinal == (1 if case["fold"] is FoldPolicy.FIRST_ONLY else 0)
    elif row.status is Status.EXCLUDED:
        assert row.nominal_local in excluded or row.nominal_local[:10] in excluded
    else:
        assert row.status is Status.SKIPPED_DUPLICATE
        assert row.reason is not None and "which keeps it" in row.reason
        assert re.search(r"as (occ-[0-9a-f]{32}) \(nominal ", row.reason)
    if len(found) == 2 and row.status is not Status.EXCLUDED and row.status is not Status.SKIPPED_DUPLICATE:
        expected_runs = case["fold"] is FoldPolicy.BOTH or (case["fold"] is FoldPolicy.FIRST_ONLY) == (
            row.fold_ordinal == 0
        )
        assert row.status is (Status.SCHEDULED if expected_runs else Status.SKIPPED_FOLD)


def key(row: Occurrence) -> tuple[datetime, str, int]:
    return (row.position, row.nominal_local, row.fold_ordinal)


def check_rows(rows: list[Occurrence], zone: ZoneInfo, case: dict[str, Any]) -> None:
    excluded = set(case["exclude"])
    # Which occurrences exist: exactly the rule's 250 wall times, each once or (a fold) twice.
    step = timedelta(minutes=case["step"])
    expected_nominals = {(case["start"] + k * step).isoformat() for k in range(COUNT)}
    assert {r.nominal_local for r in rows} == expected_nominals
    per_nominal: dict[str, list[int]] = {}
    for row in rows:
        per_nominal.setdefault(row.nominal_local, []).append(row.fold_ordinal)
    for nominal, ordinals in per_nominal.items():
        assert sorted(ordinals) in ([0], [0, 1]), nominal
    # No duplicate identities.
    ids = [r.occurrence_id for r in rows]
    assert len(ids) == len(set(ids))
    slots = [r.logical_slot_id for r in rows if r.logical_slot_id is not None]
    assert len(slots) == len(set(slots))
    # One runnable row per instant and per business period.
    instants = [r.resolved for r in rows if r.status.runnable]
    assert len(instants) == len(set(instants))
    if case["period"]:
        periods = [r.period for r in rows if r.status.runnable]
        assert len(periods) == len(set(periods))
    # Ordered by (positionUtc, nominalLocal, foldOrdinal), strictly.
    keys = [key(r) for r in rows]
    assert all(a < b for a, b in pairwise(keys))
    by_id = {r.occurrence_id: r for r in rows}
    for row in rows:
        check_row(row, zone, case, excluded)
        if row.status is Status.SKIPPED_DUPLICATE:
            # The winner it names is another row of this very expansion, and it
            # runs unless it lost its own business period afterwards.
            found = re.search(r"as (occ-[0-9a-f]{32}) \(nominal ", row.reason or "")
            assert found is not None
            winner = by_id[found.group(1)]
            assert winner is not row
            assert winner.status.runnable or (case["period"] and winner.status is Status.SKIPPED_DUPLICATE)


def as_json(rows: list[Occurrence]) -> list[dict[str, Any]]:
    return [r.to_json() for r in rows]


@SETTINGS
@given(near_transition())
def test_expansion_near_real_transitions(case: dict[str, Any]) -> None:
    compiled = build(case)
    zone = get_zone(case["zone"])
    lo = case["start"].replace(tzinfo=UTC) - timedelta(days=2)
    hi = case["start"].replace(tzinfo=UTC) + timedelta(days=3)
    rows = expand(compiled, lo, hi)
    check_rows(rows, zone, case)

    # expand(a, c) == expand(a, b) + expand(b, c), for b anywhere among the rows.
    first, last = rows[0].position, rows[-1].position
    b = first + (last - first) * case["split"]
    b = b.replace(microsecond=0)
    assert as_json(expand(compiled, lo, b)) + as_json(expand(compiled, b, hi)) == as_json(rows)
    # Ids and statuses never depend on the --from start.
    later = first + (last - first) * case["later"]
    tail = [r for r in rows if r.position >= later]
    assert as_json(first_rows(compiled, later, 40)) == as_json(tail[:40])


@st.composite
def interval_near_transition(draw: st.DrawFn) -> dict[str, Any]:
    zone = draw(st.sampled_from(ZONES))
    tr = draw(st.sampled_from(real_transitions(zone)))
    every = timedelta(minutes=draw(st.integers(1, 45)), seconds=draw(st.sampled_from([0, 0, 0, 30, 7])))
    anchor = tr.utc - every * 100 + timedelta(seconds=draw(st.integers(0, int(every.total_seconds()))))
    return {"zone": zone, "every": every, "anchor": anchor, "split": draw(st.floats(0.0, 1.0))}


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(interval_near_transition())
def test_interval_expansion_near_real_transitions(case: dict[str, Any]) -> None:
    every: timedelta = case["every"]
    spec = make_interval_spec(
        timeZone=case["zone"],
        every=f"PT{int(every.total_seconds())}S",
        anchor=case["anchor"].strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    compiled = compile_schedule(spec)
    zone = get_zone(case["zone"])
    hi = case["anchor"] + every * 200
    rows = expand(compiled, case["anchor"], hi)
    assert [r.resolved for r in rows] == [case["anchor"] + k * every for k in range(200)]
    for row in rows:
        assert row.resolved is not None
        local = row.resolved.astimezone(zone)
        assert row.status is Status.SCHEDULED
        assert row.nominal == local.replace(tzinfo=None)
        assert row.fold_ordinal == local.fold
        assert row.occurrence_id == occ_id(row)
        assert row.logical_slot_id == slot_id(row)
    assert len({r.occurrence_id for r in rows}) == len(rows)
    keys = [key(r) for r in rows]
    assert all(a < b for a, b in pairwise(keys))
    b = (case["anchor"] + (hi - case["anchor"]) * case["split"]).replace(microsecond=0)
    assert as_json(expand(compiled, case["anchor"], b)) + as_json(expand(compiled, b, hi)) == as_json(rows)


# --- the margins of an expansion follow the zone's own offsets -------------------------------


@pytest.mark.parametrize(
    ("zone", "year", "least", "greatest"),
    [
        pytest.param("UTC", 2026, timedelta(0), timedelta(0), id="utc_needs_none"),
        pytest.param("America/New_York", 2026, timedelta(hours=-5), timedelta(hours=-4), id="new_york_est_edt"),
        pytest.param("Pacific/Kiritimati", 2026, timedelta(hours=14), timedelta(hours=14), id="kiritimati_plus_14"),
        pytest.param("Pacific/Apia", 2011, timedelta(hours=-11), timedelta(hours=14), id="apia_skips_a_day_2011"),
        pytest.param(
            "Asia/Kolkata", 2026, timedelta(hours=5, minutes=30), timedelta(hours=5, minutes=30), id="kolkata"
        ),
    ],
)
def test_offset_bounds_of_real_zones(zone: str, year: int, least: timedelta, greatest: timedelta) -> None:
    assert _offset_bounds(get_zone(zone), year) == (least, greatest)


@pytest.mark.parametrize(
    ("zone", "scan_limit"),
    [
        pytest.param("UTC", 5, id="utc_starts_at_start"),
        pytest.param("Asia/Tokyo", 5, id="positive_offset_starts_after_start"),
        pytest.param("America/New_York", 5 * 60 + 5, id="new_york_starts_five_hours_back"),
    ],
)
def test_an_expansion_visits_only_what_the_offsets_need(zone: str, scan_limit: int) -> None:
    """An every-minute rule listed from a start: before, two days of minutes were visited first (2,880)."""
    compiled = compile_schedule(
        parse_spec(
            make_data(scheduleId="prop.margin", timeZone=zone, rule="FREQ=MINUTELY", start="2026-01-01T00:00:00")
        )
    )
    start = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
    rows = first_rows(compiled, start, 3, scan_limit=scan_limit)
    assert [r.position for r in rows] == [start + timedelta(minutes=k) for k in range(3)]


@SETTINGS
@given(near_transition())
def test_narrow_margins_give_what_the_two_day_margin_gave(case: dict[str, Any]) -> None:
    """The rows listed from any start near a real transition are the same with the zone's own
    offsets as with the old fixed margin of two days each side."""
    compiled = build({**case, "period": None})
    lo = case["start"].replace(tzinfo=UTC) - timedelta(hours=18)
    at = lo + timedelta(hours=36) * case["later"]
    narrow = as_json(first_rows(compiled, at, 60))
    with mock.patch.object(expand_module, "_offset_bounds", lambda _zone, _year: (-_DRIFT, _DRIFT)):
        wide = as_json(first_rows(compiled, at, 60))
    assert narrow == wide
