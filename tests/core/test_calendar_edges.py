"""Previews and explanations at the edges of the calendar (years 1 and 9999) and rules
that dateutil cannot iterate: one line and exit 2, or the rows that exist; never a traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.conftest import Run

CALENDAR = """\
schema: scheduleSpec.v1
scheduleId: edge
revision: 1
timeZone: {zone}
rule: {rule}
start: {start}
gapPolicy: SKIP
foldPolicy: FIRST_ONLY
"""
INTERVAL = """\
schema: scheduleSpec.v1
scheduleId: edge
revision: 1
timeZone: {zone}
kind: interval
every: {every}
anchor: {anchor}
"""


def _calendar(
    tmp: Path,
    zone: str = "America/New_York",
    rule: str = "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    start: str = "0001-01-01T00:00:00",
) -> str:
    path = tmp / "calendar.yaml"
    path.write_text(CALENDAR.format(zone=zone, rule=rule, start=start), encoding="utf-8")
    return str(path)


def _interval(tmp: Path, every: str = "PT1H", anchor: str = "2026-01-01T00:00:00Z", zone: str = "UTC") -> str:
    path = tmp / "interval.yaml"
    path.write_text(INTERVAL.format(zone=zone, every=every, anchor=anchor), encoding="utf-8")
    return str(path)


def _clean(status: int, err: str) -> None:
    """Exit 0, or exit 2 with exactly one line; never a traceback or an internal error."""
    assert "Traceback" not in err and "internal error" not in err, err
    assert status in (0, 2), (status, err)
    if status == 2:
        assert len(err.strip().splitlines()) == 1, err


# (id, spec maker, arguments, expected status, text expected in stdout or stderr)
CASES = [
    ("from_year_1_new_york", lambda t: _calendar(t), ["preview", "--from", "0001-01-01"], 0, "LMT"),
    ("from_year_1_utc_instant", lambda t: _calendar(t), ["preview", "--from", "0001-01-01T00:00Z"], 0, "LMT"),
    (
        "last_minutes_of_the_calendar",
        lambda t: _calendar(t, zone="UTC", rule="FREQ=MINUTELY", start="2026-01-01T00:00:00"),
        ["preview", "--from", "9999-12-31T23:50Z", "--format", "csv"],
        0,
        "9999-12-31T23:59:00Z",
    ),
    (
        "until_the_last_hour",
        lambda t: _calendar(t, zone="UTC", rule="FREQ=MINUTELY", start="2026-01-01T00:00:00"),
        ["preview", "--from", "9999-12-31T23:00Z", "--until", "9999-12-31T23:59:59Z", "--format", "csv"],
        0,
        "9999-12-31T23:59:00Z",
    ),
    (
        "local_from_past_the_last_instant",
        lambda t: _calendar(t),
        ["preview", "--from", "9999-12-31T23:30"],
        2,
        "outside the calendar",
    ),
    ("last_day_new_york", lambda t: _calendar(t), ["preview", "--from", "9999-12-31"], 0, "9999-12-31"),
    ("explain_from_9999_new_york", lambda t: _calendar(t), ["explain", "--from", "9999-01-01"], 0, "America/New_York"),
    (
        "explain_last_minutes",
        lambda t: _calendar(t, zone="UTC", rule="FREQ=MINUTELY", start="2026-01-01T00:00:00"),
        ["explain", "--from", "9999-12-31T23:50Z"],
        0,
        "UTC",
    ),
    ("explain_from_year_1", lambda t: _calendar(t), ["explain", "--from", "0001-01-01"], 0, "America/New_York"),
    (
        "every_99999999_days_preview",
        lambda t: _interval(t, "P99999999D"),
        ["preview", "--from", "2025-12-31"],
        0,
        "2026-01-01",
    ),
    ("every_99999999_days_explain", lambda t: _interval(t, "P99999999D"), ["explain"], 0, "99999999"),
    ("every_99999999_days_validate", lambda t: _interval(t, "P99999999D"), ["validate"], 0, "ok"),
    (
        "interval_and_byhour_never_meet_validate",
        lambda t: _calendar(t, zone="UTC", rule="FREQ=MINUTELY;INTERVAL=1440;BYHOUR=1", start="2026-01-01T00:00:00"),
        ["validate"],
        2,
        "rule:",
    ),
    (
        "interval_and_byhour_never_meet_preview",
        lambda t: _calendar(t, zone="UTC", rule="FREQ=MINUTELY;INTERVAL=1440;BYHOUR=1", start="2026-01-01T00:00:00"),
        ["preview"],
        2,
        "rule:",
    ),
    (
        "interval_and_byhour_never_meet_explain",
        lambda t: _calendar(t, zone="UTC", rule="FREQ=MINUTELY;INTERVAL=1440;BYHOUR=1", start="2026-01-01T00:00:00"),
        ["explain"],
        2,
        "rule:",
    ),
    (
        "anchor_at_the_calendar_end",
        lambda t: _interval(t, "PT1H", anchor="9999-12-31T22:00:00Z", zone="America/New_York"),
        ["preview", "--format", "csv"],
        0,
        "9999-12-31T23:00:00Z",
    ),
]


@pytest.mark.parametrize(("make", "argv", "status", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_calendar_edges_through_the_cli(
    run: Run, tmp_path: Path, make: Callable[[Path], str], argv: list[str], status: int, text: str
) -> None:
    path = make(tmp_path)
    now = [] if argv[0] == "validate" else ["--now", "2026-03-05T12:00:00Z"]
    got, out, err = run(argv[0], path, *argv[1:], *now)
    _clean(got, err)
    assert got == status, err
    assert text in (out if status == 0 else err)


def test_the_last_rows_are_the_ones_that_exist(run: Run, tmp_path: Path) -> None:
    path = _calendar(tmp_path, zone="UTC", rule="FREQ=MINUTELY", start="2026-01-01T00:00:00")
    status, out, err = run("preview", path, "--from", "9999-12-31T23:50Z", "--count", "20", "--format", "csv")
    assert status == 0, err
    lines = out.strip().splitlines()[1:]
    assert len(lines) == 10  # 23:50 .. 23:59, then the calendar ends
    assert "calendar ends" in err


ZONES = st.sampled_from(["UTC", "America/New_York", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kolkata"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    zone=ZONES,
    year=st.integers(1, 9999),
    command=st.sampled_from(["preview", "explain"]),
    instant=st.booleans(),
    rule=st.sampled_from(["FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "FREQ=MINUTELY;INTERVAL=7", "FREQ=YEARLY"]),
)
def test_no_traceback_at_any_year(
    run: Run, tmp_path_factory: pytest.TempPathFactory, zone: str, year: int, command: str, instant: bool, rule: str
) -> None:
    path = _calendar(tmp_path_factory.mktemp("y"), zone=zone, rule=rule)
    when = f"{year:04d}-12-31T23:30" + ("Z" if instant else "")
    status, _out, err = run(command, path, "--from", when, "--now", "2026-03-05T12:00:00Z")
    _clean(status, err)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    zone=ZONES,
    days=st.integers(1, 99_999_999),
    year=st.integers(1, 9999),
    command=st.sampled_from(["preview", "explain", "validate"]),
)
def test_no_traceback_for_big_durations(
    run: Run, tmp_path_factory: pytest.TempPathFactory, zone: str, days: int, year: int, command: str
) -> None:
    path = _interval(tmp_path_factory.mktemp("d"), f"P{days}D", anchor=f"{year:04d}-06-01T00:00:00Z", zone=zone)
    extra = [] if command == "validate" else ["--now", "2026-03-05T12:00:00Z"]
    status, _out, err = run(command, path, *extra)
    _clean(status, err)


@pytest.mark.parametrize(
    ("argv", "rows", "noted"),
    [
        pytest.param(["--until", "9999-12-31T23:55Z"], 5, True, id="until_among_the_last_rows"),
        pytest.param(["--count", "10"], 10, False, id="count_met_before_the_end"),
        pytest.param(["--count", "11"], 10, True, id="count_past_the_end"),
    ],
)
def test_a_preview_that_meets_the_calendar_end_says_so(
    run: Run, tmp_path: Path, argv: list[str], rows: int, noted: bool
) -> None:
    path = _calendar(tmp_path, zone="UTC", rule="FREQ=MINUTELY", start="2026-01-01T00:00:00")
    status, out, err = run("preview", path, "--from", "9999-12-31T23:50Z", *argv, "--format", "csv")
    assert status == 0, err
    assert len(out.strip().splitlines()[1:]) == rows
    assert ("calendar ends" in err) is noted


def test_a_range_before_the_calendar_end_says_nothing_of_it(run: Run, tmp_path: Path) -> None:
    path = _calendar(tmp_path, zone="UTC", rule="FREQ=DAILY", start="2026-01-01T00:00:00")
    status, out, err = run(
        "preview", path, "--from", "9999-12-01T00:00Z", "--until", "9999-12-10T00:00Z", "--format", "csv"
    )
    assert status == 0, err
    assert len(out.strip().splitlines()[1:]) == 9
    assert "calendar ends" not in err
