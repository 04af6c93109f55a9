"""Occurrence identity (docs/contract.md §3), recomputed here from the formula with
json.dumps and hashlib, never through core.identity."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import timedelta

import pytest
from helpers import compiled, first_n, make_interval_spec, make_spec, rows_between, utc

from core.errors import SpecError
from core.identity import canonical, jitter_seconds, logical_slot_id, occurrence_id
from core.recurrence.compile import compile_schedule
from core.recurrence.occurrence import Occurrence


def canon(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def expected_occurrence_id(schedule_id: str, revision: int, nominal_local: str, fold_ordinal: int) -> str:
    return "occ-" + hashlib.sha256(canon([schedule_id, revision, nominal_local, fold_ordinal])).hexdigest()[:32]


def expected_slot_id(schedule_id: str, resolved_utc: str | None) -> str | None:
    if resolved_utc is None:
        return None
    return "slot-" + hashlib.sha256(canon([schedule_id, resolved_utc])).hexdigest()[:32]


def check_row_ids(row: Occurrence) -> None:
    assert row.occurrence_id == expected_occurrence_id(
        row.schedule_id, row.revision, row.nominal_local, row.fold_ordinal
    )
    assert row.logical_slot_id == expected_slot_id(row.schedule_id, row.resolved_utc)


NOMINAL = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
RESOLVED = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


@pytest.mark.parametrize(
    ("nominal", "fold", "occ", "resolved_utc", "slot"),
    [
        # Typed from `printf '%s' '<canonical text>' | sha256sum`, independent of any Python.
        pytest.param("2026-03-08T02:30:00", 0, "occ-2d66fca5531cb927e364a89bce48ec8e", "2026-03-08T07:30:00Z",
                     "slot-96a955132535069629287f6c1a6f6102", id="shift_by_gap_row"),
        pytest.param("2026-11-01T01:30:00", 1, "occ-6dca847f9c7775edb46dd7bb66793155", "2026-11-01T06:30:00Z",
                     "slot-1dffc140013163cdc46585bb9eef4fa4", id="second_reading_of_fold"),
    ],
)  # fmt: skip
def test_golden_ids(nominal: str, fold: int, occ: str, resolved_utc: str, slot: str) -> None:
    spec = compiled(
        rule="FREQ=DAILY;BYHOUR=1,2;BYMINUTE=30", gapPolicy="SHIFT_BY_GAP", foldPolicy="BOTH"
    )  # daily-ops-summary revision 7
    rows = rows_between(spec, utc(resolved_utc) - timedelta(hours=1), utc(resolved_utc) + timedelta(hours=1))
    (row,) = [r for r in rows if (r.nominal_local, r.fold_ordinal) == (nominal, fold)]
    assert (row.occurrence_id, row.resolved_utc, row.logical_slot_id) == (occ, resolved_utc, slot)


@pytest.mark.parametrize(
    "schedule_id",
    [
        pytest.param("daily-ops-summary", id="dashes"),
        pytest.param("ops.daily_summary.v2", id="dots_and_underscores"),
        pytest.param("0", id="single_digit"),
        pytest.param("a" * 64, id="longest"),
        pytest.param("x.y_z-1.2_3", id="mixed"),
    ],
)
@pytest.mark.parametrize(
    ("overrides", "window"),
    [
        pytest.param({"gapPolicy": "SKIP", "foldPolicy": "BOTH"},
                     ("2026-03-01T00:00:00Z", "2026-03-15T00:00:00Z"), id="spring"),
        pytest.param({"gapPolicy": "SHIFT_FORWARD", "foldPolicy": "FIRST_ONLY", "rule": "FREQ=HOURLY"},
                     ("2026-10-31T20:00:00Z", "2026-11-01T12:00:00Z"), id="fall_hourly"),
        pytest.param({"gapPolicy": "SHIFT_BY_GAP", "foldPolicy": "SECOND_ONLY", "rule": "FREQ=MINUTELY;INTERVAL=20",
                      "exclude": ["2026-03-08T03:20:00"]},
                     ("2026-03-08T05:00:00Z", "2026-03-08T09:00:00Z"), id="spring_minutely_with_exclude"),
    ],
)  # fmt: skip
def test_row_ids_follow_the_formula(schedule_id: str, overrides: dict[str, object], window: tuple[str, str]) -> None:
    spec = compiled(scheduleId=schedule_id, start="2026-01-01T00:00:00", **overrides)
    rows = rows_between(spec, *window)
    assert rows
    for row in rows:
        check_row_ids(row)
        assert NOMINAL.match(row.nominal_local)
        assert row.resolved_utc is None or RESOLVED.match(row.resolved_utc)
        assert row.logical_slot_id is None or row.status.runnable


@pytest.mark.parametrize(
    ("schedule_id", "revision", "nominal", "fold", "resolved"),
    [
        pytest.param("daily-ops-summary", 7, "2026-03-08T02:30:00", 0, "2026-03-08T07:30:00Z", id="plain"),
        pytest.param("ops.daily_summary", 1, "2026-11-01T01:30:00", 1, "2026-11-01T06:30:00Z", id="dots"),
        # Values the spec never admits still hash canonically (escaping, non-ASCII kept as UTF-8).
        pytest.param("Zürich-Ops", 2, "2026-01-01T00:00:00", 0, "2026-01-01T00:00:00Z", id="non_ascii_utf8"),
        pytest.param('quote"back\\slash', 3, "2026-01-01T00:00:00", 0, "2026-01-01T00:00:00Z", id="json_escapes"),
        pytest.param("trailing-newline\n", 4, "2026-01-01T00:00:00", 0, "2026-01-01T00:00:00Z", id="trailing_newline"),
    ],
)
def test_identity_functions_match_the_formula(
    schedule_id: str, revision: int, nominal: str, fold: int, resolved: str
) -> None:
    assert occurrence_id(schedule_id, revision, nominal, fold) == expected_occurrence_id(
        schedule_id, revision, nominal, fold
    )
    assert logical_slot_id(schedule_id, resolved) == expected_slot_id(schedule_id, resolved)
    assert logical_slot_id(schedule_id, None) is None
    assert canonical([schedule_id, revision]).encode("utf-8") == canon([schedule_id, revision])


def test_canonical_keeps_non_ascii_as_utf8() -> None:
    assert canonical(["Zürich", 1]) == '["Zürich",1]'
    assert canonical({"a": [1, "b"]}) == '{"a":[1,"b"]}'


@pytest.mark.parametrize("schedule_id", ["daily\n", "Daily", "über-ops", "-leading-dash", "a" * 65, ""])
def test_schedule_ids_outside_the_pattern_are_refused(schedule_id: str) -> None:
    with pytest.raises(SpecError) as info:
        make_spec(scheduleId=schedule_id)
    assert [p.key for p in info.value.problems] == ["scheduleId"]


@pytest.mark.parametrize(
    ("overrides", "window", "froms"),
    [
        pytest.param({"gapPolicy": "SHIFT_FORWARD", "foldPolicy": "BOTH", "rule": "FREQ=HOURLY"},
                     ("2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z"),
                     ["2026-03-07T12:00:00Z", "2026-03-08T06:59:59Z", "2026-03-08T07:00:00Z", "2026-03-08T07:00:01Z"],
                     id="hourly_spring_collision"),
        pytest.param({"gapPolicy": "SKIP", "foldPolicy": "BOTH", "rule": "FREQ=MINUTELY;INTERVAL=15"},
                     ("2026-10-31T22:00:00Z", "2026-11-01T10:00:00Z"),
                     ["2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:15:00Z"],
                     id="quarter_hourly_fall_fold"),
        pytest.param({"foldPolicy": "BOTH", "rule": "FREQ=HOURLY", "businessPeriod": "{nominal:%Y-%m-%d}"},
                     ("2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z"),
                     ["2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-02T03:00:00Z"],
                     id="business_period_per_day"),
    ],
)  # fmt: skip
def test_ids_and_statuses_do_not_depend_on_from(
    overrides: dict[str, object], window: tuple[str, str], froms: list[str]
) -> None:
    spec = compiled(start="2026-01-01T00:00:00", **overrides)
    full = rows_between(spec, *window)

    def key(r: Occurrence) -> tuple[object, ...]:
        return (r.occurrence_id, r.logical_slot_id, r.status, r.resolved_utc, r.reason, r.fold_ordinal)

    for start in froms:
        later = rows_between(spec, start, window[1])
        assert [key(r) for r in later] == [key(r) for r in full if r.position >= utc(start)]
        firsts = first_n(spec, start, 5)
        assert [key(r) for r in firsts] == [key(r) for r in full if r.position >= utc(start)][:5]


def test_revision_changes_occurrence_id_but_not_slot() -> None:
    r7 = rows_between(make_spec(revision=7), "2026-06-01T00:00:00Z", "2026-06-03T00:00:00Z")
    r8 = rows_between(make_spec(revision=8), "2026-06-01T00:00:00Z", "2026-06-03T00:00:00Z")
    assert [r.nominal_local for r in r7] == [r.nominal_local for r in r8]
    assert all(a.occurrence_id != b.occurrence_id for a, b in zip(r7, r8, strict=True))
    assert [r.logical_slot_id for r in r7] == [r.logical_slot_id for r in r8]


def test_ids_do_not_depend_on_anything_but_the_formula_inputs() -> None:
    # Different title, task, horizon, retry, tzdbVersion, jitter: same ids.
    a = make_spec()
    b = make_spec(
        title="Another title",
        horizon="P30D",
        tzdbVersion="2020a",
        jitter="PT5M",
        retry={"maxAttempts": 5},
        task={"argv": ["/bin/true"]},
    )
    rows_a = rows_between(a, "2026-06-01T00:00:00Z", "2026-06-05T00:00:00Z")
    rows_b = rows_between(b, "2026-06-01T00:00:00Z", "2026-06-05T00:00:00Z")
    assert [(r.occurrence_id, r.logical_slot_id) for r in rows_a] == [
        (r.occurrence_id, r.logical_slot_id) for r in rows_b
    ]


def test_compiling_twice_gives_the_same_ids() -> None:
    spec = make_spec(rule="FREQ=HOURLY", gapPolicy="SHIFT_FORWARD", foldPolicy="BOTH")
    one = rows_between(compile_schedule(spec), "2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z")
    two = rows_between(compile_schedule(spec), "2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z")
    assert [r.to_json() for r in one] == [r.to_json() for r in two]


def test_fold_readings_have_distinct_ids_and_slots() -> None:
    spec = compiled(rule="FREQ=DAILY;BYHOUR=1;BYMINUTE=30", foldPolicy="BOTH")
    rows = rows_between(spec, "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z")
    assert [(r.nominal_local, r.fold_ordinal) for r in rows] == [("2026-11-01T01:30:00", 0), ("2026-11-01T01:30:00", 1)]
    assert rows[0].occurrence_id != rows[1].occurrence_id
    assert rows[0].logical_slot_id != rows[1].logical_slot_id


def test_interval_rows_follow_the_formula() -> None:
    spec = make_interval_spec(every="PT20M", anchor="2026-11-01T05:00:00Z")
    rows = first_n(spec, "2026-11-01T05:00:00Z", 9)
    for row in rows:
        check_row_ids(row)
    assert [(r.nominal_local, r.fold_ordinal) for r in rows] == [
        ("2026-11-01T01:00:00", 0),
        ("2026-11-01T01:20:00", 0),
        ("2026-11-01T01:40:00", 0),
        ("2026-11-01T01:00:00", 1),
        ("2026-11-01T01:20:00", 1),
        ("2026-11-01T01:40:00", 1),
        ("2026-11-01T02:00:00", 0),
        ("2026-11-01T02:20:00", 0),
        ("2026-11-01T02:40:00", 0),
    ]


@pytest.mark.parametrize("jitter", ["PT0S", "PT1S", "PT5M", "PT1H"])
def test_jitter_is_a_stable_hash_of_the_occurrence_id(jitter: str) -> None:
    spec = compiled(jitter=jitter, rule="FREQ=HOURLY")
    seconds = int(make_spec(jitter=jitter).jitter.total_seconds())
    rows = rows_between(spec, "2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z")
    for row in rows:
        digest = hashlib.sha256(row.occurrence_id.encode("utf-8")).digest()
        expected = int.from_bytes(digest[:8], "big") % seconds if seconds else 0
        assert row.dispatch_delay == expected == jitter_seconds(row.occurrence_id, seconds)
        assert 0 <= row.dispatch_delay < max(seconds, 1)
        assert row.dispatch == row.resolved + timedelta(seconds=expected)
