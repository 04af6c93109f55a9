"""The crontab import (core/importing): each job's rule against croniter, an independent reader
of cron expressions; the clock-change behaviour of Debian's cron at both changes of
America/New_York and Europe/Berlin, written out by hand; and every kind of bad input refused
in one line naming its line number."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import islice, takewhile

import pytest
from croniter import CroniterBadDateError, croniter
from crontab import CronSlices
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.importing.cron import import_crontab
from core.importing.cron_changes import cron_runs, spec_runs
from core.importing.cron_command import task_command
from core.importing.cron_expr import parse_fields
from core.importing.crontab_file import MAX_CRONTAB_BYTES, CrontabError, crontab_text
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import iter_rows
from core.spec.model import ScheduleSpec
from core.time.zones import get_zone

NOW = datetime(2026, 1, 1, tzinfo=UTC)
YEAR_END = datetime(2027, 1, 1, tzinfo=UTC)
#: At most this many runs are compared per expression (a year of an every-minute job is 525,600).
MOST = 400


def _specs(line: str, zone: str = "UTC") -> list[ScheduleSpec]:
    result = import_crontab(line + "\n", zone=zone, now=NOW)
    assert len(result.jobs) == 1, result.unimported
    return [imported.spec for imported in result.jobs[0].specs]


def _spec_instants(specs: list[ScheduleSpec], start: datetime, end: datetime) -> list[datetime]:
    runs: list[datetime] = []
    for spec in specs:
        rows = takewhile(lambda r: r.position < end, iter_rows(compile_schedule(spec), start))
        runs += islice((r.resolved for r in rows if r.runnable and r.resolved is not None), MOST)
    return sorted(runs)[:MOST]


def _croniter_instants(expression: str, zone: str, start: datetime, end: datetime) -> list[datetime]:
    it = croniter(expression, start.astimezone(get_zone(zone)) - timedelta(seconds=1))
    runs = []
    while len(runs) < MOST:
        try:
            at = it.get_next(datetime).astimezone(UTC)
        except CroniterBadDateError:  # no such date within croniter's search (30 February)
            break
        if at >= end:
            break
        runs.append(at)
    return runs


# --- random expressions against croniter ------------------------------------------------------

_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]


@st.composite
def _item(draw: st.DrawFn, low: int, high: int, names: list[str] | None, star: bool) -> str:
    def value(lo: int = low) -> str:
        n = draw(st.integers(lo, high))
        if names and draw(st.booleans()) and n - low < len(names):
            return names[n - low]
        return str(n)

    kinds = ["one", "range", "range_step"] + (["star_step"] if star else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "one":
        return value()
    if kind == "star_step":
        return f"*/{draw(st.integers(1, high - low + 1))}"
    a = draw(st.integers(low, high - 1))
    b = draw(st.integers(a + 1, high))  # croniter reads N-N as *
    text = f"{a}-{b}"
    if kind == "range_step":
        text += f"/{draw(st.integers(1, max(1, b - a + 1)))}"
    return text


@st.composite
def _field(draw: st.DrawFn, low: int, high: int, names: list[str] | None = None, *, star_step: bool = True) -> str:
    """A cron field. The day fields get no ``*/N``: Debian's cron reads a day field that starts with
    ``*`` as unrestricted for the either-day rule, croniter does not (tested apart, below)."""
    if draw(st.integers(0, 3)) == 0:
        return "*"
    items = draw(st.lists(_item(low, high, names, star_step), min_size=1, max_size=3))
    return ",".join(items)


@st.composite
def expressions(draw: st.DrawFn, hours: tuple[int, int] = (0, 23)) -> str:
    minute = draw(_field(0, 59).filter(lambda f: f != "*"))  # sparse enough to compare a year
    every_hour = hours == (0, 23)
    hour = draw(_field(*hours, star_step=every_hour).filter(lambda f: every_hour or f != "*"))
    day = draw(_field(1, 31, star_step=False))
    month = draw(_field(1, 12, _MONTHS))
    weekday = draw(_field(0, 7, _DAYS, star_step=False))
    return f"{minute} {hour} {day} {month} {weekday}"


def _same_year_as_croniter(expression: str, zone: str) -> None:
    result = import_crontab(f"{expression} /bin/true\n", zone=zone, now=NOW)
    expected = _croniter_instants(expression, zone, NOW, YEAR_END)
    if not result.jobs:  # never runs: croniter finds nothing within the year either
        assert expected == []
        return
    assert _spec_instants([s.spec for s in result.jobs[0].specs], NOW, YEAR_END) == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions())
def test_a_year_in_utc_is_croniters(expression: str) -> None:
    _same_year_as_croniter(expression, "UTC")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(hours=(5, 23)), st.sampled_from(["America/New_York", "Europe/Berlin"]))
def test_a_year_in_a_zone_with_clock_changes_is_croniters_away_from_them(expression: str, zone: str) -> None:
    """Hours 5-23 never meet a change of these zones (they change at 01:00-03:00)."""
    _same_year_as_croniter(expression, zone)


@settings(max_examples=60, deadline=None)
@given(expressions())
def test_each_field_holds_the_values_python_crontab_reads(expression: str) -> None:
    """A second, independent reader of the fields: python-crontab's value sets (7 is Sunday there too)."""
    ours = parse_fields(tuple(expression.split()), 1)
    assume("7" not in expression.split()[4])  # python-crontab reads 1-7/2 as 0,2,4,6; cron as 1,3,5,7 (Sunday)
    try:
        theirs = [set(s) for s in CronSlices(expression)]
    except ValueError:  # python-crontab refuses a step longer than the field
        assume(False)
    assert [ours.minutes, ours.hours, ours.days, ours.months] == [frozenset(v) for v in theirs[:4]]
    assert ours.weekdays == frozenset(v % 7 for v in theirs[4])


def test_a_day_field_starting_with_a_star_makes_both_day_fields_count() -> None:
    """``*/2`` in the day of the month with a weekday: Debian's cron wants both (odd days that are
    Mondays), croniter either; the spec follows Debian's cron."""
    specs = _specs("0 9 */2 * mon /bin/true")
    runs = _spec_instants(specs, NOW, datetime(2026, 3, 1, tzinfo=UTC))
    assert [r.date().isoformat() for r in runs] == ["2026-01-05", "2026-01-19", "2026-02-09", "2026-02-23"]


def test_a_job_on_a_date_that_never_exists_is_reported_not_written() -> None:
    result = import_crontab("0 0 30 2 * /bin/true\n", zone="UTC", now=NOW)
    assert result.jobs == []
    assert [(u.line, u.reason) for u in result.unimported] == [
        (1, "never runs: its day of the month never exists in its months")
    ]
    _same_year_as_croniter("0 0 30 2 *", "UTC")


def test_either_day_becomes_two_schedules_that_never_meet() -> None:
    specs = _specs("0 9 1,15 * mon /bin/true")
    assert [s.rule for s in specs] == [
        "FREQ=MONTHLY;BYMONTHDAY=1,15;BYHOUR=9;BYMINUTE=0",
        "FREQ=DAILY;BYMONTHDAY=2,3,4,5,6,7,8,9,10,11,12,13,14,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31;"
        "BYDAY=MO;BYHOUR=9;BYMINUTE=0",
    ]
    assert [s.schedule_id for s in specs] == ["true-monthdays", "true-weekdays"]
    # 2026-06-01 and 2026-06-15 are Mondays: cron runs once on each, so do the two schedules.
    runs = _spec_instants(specs, datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC))
    assert [r.day for r in runs] == [1, 8, 15, 22, 29]
    assert runs == _croniter_instants("0 9 1,15 * mon", "UTC", datetime(2026, 6, 1, tzinfo=UTC), YEAR_END)[:5]


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("@hourly x", "FREQ=HOURLY;BYMINUTE=0"),
        ("@daily x", "FREQ=DAILY;BYHOUR=0;BYMINUTE=0"),
        ("@midnight x", "FREQ=DAILY;BYHOUR=0;BYMINUTE=0"),
        ("@weekly x", "FREQ=WEEKLY;BYDAY=SU;BYHOUR=0;BYMINUTE=0"),
        ("@monthly x", "FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=0;BYMINUTE=0"),
        ("@yearly x", "FREQ=MONTHLY;BYMONTH=1;BYMONTHDAY=1;BYHOUR=0;BYMINUTE=0"),
        ("@annually x", "FREQ=MONTHLY;BYMONTH=1;BYMONTHDAY=1;BYHOUR=0;BYMINUTE=0"),
        ("* * * * * x", "FREQ=MINUTELY"),
        ("* 9-17 * * * x", "FREQ=MINUTELY;BYHOUR=9,10,11,12,13,14,15,16,17"),
        ("*/20 * * * * x", "FREQ=HOURLY;BYMINUTE=0,20,40"),
        ("0 9 * * mon-fri x", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0"),
        ("0 9 * * 7 x", "FREQ=WEEKLY;BYDAY=SU;BYHOUR=9;BYMINUTE=0"),
        ("15 6 * jan-mar/2 * x", "FREQ=DAILY;BYMONTH=1,3;BYHOUR=6;BYMINUTE=15"),
        ("0 0 1 * sun-sat x", "FREQ=DAILY;BYHOUR=0;BYMINUTE=0"),  # either day, and every weekday: every day
    ],
    ids=lambda v: v.split(" x")[0] if " x" in v else v[:20],
)
def test_rules(line: str, rule: str) -> None:
    assert [s.rule for s in _specs(line)] == [rule]


# --- both clock changes, by hand ------------------------------------------------------------------


def _z(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


CHANGES = [
    # zone, window [lo, hi) in UTC, job, expected runs (UTC), written out by hand
    # New York, 2026-03-08: 02:00 EST -> 03:00 EDT at 07:00Z; the 02:30 job runs right after, at 03:00 EDT.
    ("America/New_York", "2026-03-08T05:00Z", "2026-03-08T09:00Z", "30 2 * * *", ["2026-03-08T07:00Z"]),
    ("America/New_York", "2026-03-08T06:00Z", "2026-03-08T08:00Z", "*/15 * * * *",
     ["2026-03-08T06:00Z", "2026-03-08T06:15Z", "2026-03-08T06:30Z", "2026-03-08T06:45Z",  # 01:xx EST
      "2026-03-08T07:00Z", "2026-03-08T07:15Z", "2026-03-08T07:30Z", "2026-03-08T07:45Z"]),  # 03:xx EDT
    ("America/New_York", "2026-03-08T05:00Z", "2026-03-08T09:00Z", "30 1 * * *", ["2026-03-08T06:30Z"]),
    # New York, 2026-11-01: 02:00 EDT -> 01:00 EST at 06:00Z; 01:xx happens twice.
    ("America/New_York", "2026-11-01T04:00Z", "2026-11-01T08:00Z", "30 2 * * *", ["2026-11-01T07:30Z"]),
    ("America/New_York", "2026-11-01T05:00Z", "2026-11-01T07:00Z", "*/15 * * * *",
     ["2026-11-01T05:00Z", "2026-11-01T05:15Z", "2026-11-01T05:30Z", "2026-11-01T05:45Z",  # 01:xx EDT
      "2026-11-01T06:00Z", "2026-11-01T06:15Z", "2026-11-01T06:30Z", "2026-11-01T06:45Z"]),  # 01:xx EST
    ("America/New_York", "2026-11-01T04:00Z", "2026-11-01T08:00Z", "30 1 * * *", ["2026-11-01T05:30Z"]),
    # Berlin, 2026-03-29: 02:00 CET -> 03:00 CEST at 01:00Z.
    ("Europe/Berlin", "2026-03-28T23:00Z", "2026-03-29T03:00Z", "30 2 * * *", ["2026-03-29T01:00Z"]),
    ("Europe/Berlin", "2026-03-29T00:00Z", "2026-03-29T02:00Z", "*/15 * * * *",
     ["2026-03-29T00:00Z", "2026-03-29T00:15Z", "2026-03-29T00:30Z", "2026-03-29T00:45Z",  # 01:xx CET
      "2026-03-29T01:00Z", "2026-03-29T01:15Z", "2026-03-29T01:30Z", "2026-03-29T01:45Z"]),  # 03:xx CEST
    ("Europe/Berlin", "2026-03-28T23:00Z", "2026-03-29T03:00Z", "30 1 * * *", ["2026-03-29T00:30Z"]),
    # Berlin, 2026-10-25: 03:00 CEST -> 02:00 CET at 01:00Z; 02:xx happens twice.
    ("Europe/Berlin", "2026-10-24T23:00Z", "2026-10-25T03:00Z", "30 2 * * *", ["2026-10-25T00:30Z"]),
    ("Europe/Berlin", "2026-10-25T00:00Z", "2026-10-25T02:00Z", "*/15 * * * *",
     ["2026-10-25T00:00Z", "2026-10-25T00:15Z", "2026-10-25T00:30Z", "2026-10-25T00:45Z",  # 02:xx CEST
      "2026-10-25T01:00Z", "2026-10-25T01:15Z", "2026-10-25T01:30Z", "2026-10-25T01:45Z"]),  # 02:xx CET
    ("Europe/Berlin", "2026-10-24T22:00Z", "2026-10-25T03:00Z", "30 1 * * *", ["2026-10-24T23:30Z"]),
]  # fmt: skip


def _change_id(case: tuple[str, str, str, str, list[str]]) -> str:
    zone, lo, _, expression, _ = case
    return f"{zone.split('/')[1]}-{lo[5:10]}-{expression.replace(' ', '_')}"


@pytest.mark.parametrize("case", CHANGES, ids=[_change_id(c) for c in CHANGES])
def test_both_changes_the_spec_runs_as_debian_cron(case: tuple[str, str, str, str, list[str]]) -> None:
    zone, lo, hi, expression, expected = case
    runs = [_z(e) for e in expected]
    specs = _specs(f"{expression} /bin/true", zone)
    assert spec_runs(specs, _z(lo), _z(hi)) == runs
    assert cron_runs(parse_fields(tuple(expression.split()), 1), get_zone(zone), _z(lo), _z(hi)) == runs


def test_two_fixed_times_in_the_skipped_hour_run_twice_in_cron_once_in_the_spec() -> None:
    """The one difference at a change (docs/import.md): the spec never runs one schedule twice at once."""
    lo, hi = _z("2026-03-08T05:00Z"), _z("2026-03-08T09:00Z")
    expr = parse_fields(("0,30", "2", "*", "*", "*"), 1)
    assert cron_runs(expr, get_zone("America/New_York"), lo, hi) == [_z("2026-03-08T07:00Z")] * 2
    assert spec_runs(_specs("0,30 2 * * * /bin/true", "America/New_York"), lo, hi) == [_z("2026-03-08T07:00Z")]


# --- the command, the zone, the variables -----------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "argv", "shell"),
    [
        ("/usr/bin/backup --full", ["/usr/bin/backup", "--full"], False),
        ("backup > /tmp/log 2>&1", ["/bin/sh", "-c", "backup > /tmp/log 2>&1"], True),
        ("a | b", ["/bin/sh", "-c", "a | b"], True),
        ("cd /srv && make", ["/bin/sh", "-c", "cd /srv && make"], True),
        ("echo $HOME", ["/bin/sh", "-c", "echo $HOME"], True),
        ("rm /tmp/*.log", ["/bin/sh", "-c", "rm /tmp/*.log"], True),
        ("date +\\%Y", ["date", "+%Y"], False),  # \% is a plain %
        ("FOO=1 run", ["/bin/sh", "-c", "FOO=1 run"], True),
        (
            "mail -s hi ops%Dear ops,%all done",
            ["/bin/sh", "-c", 'printf "%s" "$1" | "$2" -c "$3"', "cron-input", "Dear ops,\nall done", "/bin/sh",
             "mail -s hi ops"],
            True,
        ),
    ],
)  # fmt: skip
def test_commands(command: str, argv: list[str], shell: bool) -> None:
    found = task_command(command)
    assert found.argv == argv
    assert bool(found.why_shell) is shell


def test_zone_and_variables_apply_to_the_lines_below() -> None:
    text = (
        "MAILTO=ops@example.com\n"
        "SHELL=/bin/bash\n"
        "PATH = /usr/local/bin:/usr/bin:/bin\n"
        "0 1 * * * early && late\n"
        "CRON_TZ=Europe/Berlin\n"
        "FOO='a b'\n"
        "0 2 * * * later\n"
        "@reboot boot\n"
    )
    result = import_crontab(text, zone="America/New_York", now=NOW)
    first, second = (job.specs[0].spec for job in result.jobs)
    assert (first.time_zone, result.jobs[0].zone_from) == ("America/New_York", "from --zone")
    assert (second.time_zone, result.jobs[1].zone_from) == ("Europe/Berlin", "CRON_TZ, line 5")
    assert first.task is not None and second.task is not None
    assert first.task.argv == ["/bin/bash", "-c", "early && late"]
    assert first.task.env == {"SHELL": "/bin/bash", "PATH": "/usr/local/bin:/usr/bin:/bin"}
    assert second.task.env == {"SHELL": "/bin/bash", "PATH": "/usr/local/bin:/usr/bin:/bin", "FOO": "a b"}
    assert [(u.line, u.source) for u in result.unimported] == [(1, "MAILTO=ops@example.com"), (8, "@reboot boot")]


def test_each_file_says_why_in_comments() -> None:
    result = import_crontab("30 2 * * * backup > /tmp/log\n*/5 * * * * poll\n", zone="UTC", now=NOW)
    fixed, wildcard = (job.specs[0].text for job in result.jobs)
    assert fixed.startswith("# Imported from crontab line 1: 30 2 * * * backup > /tmp/log\n")
    assert (
        "# cron runs a fixed-time job whose time the clocks skip right after they jump\ngapPolicy: SHIFT_FORWARD\n"
        in fixed
    )
    assert (
        "# cron runs a fixed-time job once when clocks fall back: at the first reading\nfoldPolicy: FIRST_ONLY\n"
        in fixed
    )
    assert "# cron runs nothing it missed while it was not running\nmisfirePolicy: SKIP\n" in fixed
    assert "the command has a redirection (>)" in fixed
    assert "gapPolicy: SKIP\n" in wildcard and "foldPolicy: BOTH\n" in wildcard


def test_ids_are_unique_and_valid() -> None:
    text = "0 1 * * * /usr/bin/backup\n0 2 * * * /usr/bin/backup\n0 3 * * * ::::\n"
    ids = [job.specs[0].spec.schedule_id for job in import_crontab(text, zone="UTC", now=NOW).jobs]
    assert ids == ["backup", "backup-2", "cron-line-3"]


# --- bad input --------------------------------------------------------------------------------------

BAD = [
    ("four_fields", "* * * *\n", "line 1: 4 fields; a job is five time fields"),
    ("command_as_a_field", "# hi\n* * * * /bin/true\n", "line 2: day of week '/bin/true' is not a number or a name"),
    ("minute_61", "61 * * * * x\n", "line 1: minute 61 is out of range 0-59"),
    ("minute_61_alone", "61 * * * *\n", "line 1: minute 61 is out of range 0-59"),
    ("no_command", "0 * * * *\n", "line 1: no command after the five time fields"),
    ("hour_24", "\n0 24 * * * x\n", "line 2: hour 24 is out of range 0-23"),
    ("day_0", "0 0 0 * * x\n", "line 1: day of month 0 is out of range 1-31"),
    ("month_13", "0 0 * 13 * x\n", "line 1: month 13 is out of range 1-12"),
    ("weekday_8", "0 0 * * 8 x\n", "line 1: day of week 8 is out of range 0-7"),
    ("step_0", "*/0 * * * * x\n", "line 1: minute '*/0': the step must be a whole number above 0"),
    ("step_after_one", "5/10 * * * * x\n", "line 1: minute '5/10': a step follows a range or *"),
    ("backwards", "10-5 * * * * x\n", "line 1: minute '10-5' runs backwards"),
    ("empty_item", "1,,2 * * * * x\n", "line 1: minute '1,,2' has an empty item"),
    ("unknown_name", "0 0 * foo * x\n", "line 1: month 'foo' is not a number or a name (jan-dec)"),
    ("unknown_nickname", "@fortnightly x\n", "line 1: @fortnightly is not a nickname"),
    ("nickname_alone", "@daily\n", "line 1: no command after @daily"),
    ("unknown_zone", "CRON_TZ=Mars/Olympus\n", "line 1: CRON_TZ=Mars/Olympus:"),
]
#: Text that says it is no crontab, or too big a one: refused whole.
NOT_A_CRONTAB = [
    ("control_character", "0 0 * * * x\x1b[2J\n", "line 1: a control character (U+001B)"),
    ("too_many_jobs", "# many\n" + "0 0 * * * x\n" * 1001, "line 1002: more than 1,000 jobs"),
]


@pytest.mark.parametrize(("text", "message"), [(t, m) for _, t, m in BAD], ids=[i for i, _, _ in BAD])
def test_a_bad_line_is_refused_in_one_line_and_the_good_ones_are_imported(text: str, message: str) -> None:
    good = "CRON_TZ=UTC\n15 4 * * * /usr/bin/good\n"
    result = import_crontab(crontab_text((text + good).encode()), zone="UTC", now=NOW)
    (refused,) = result.refused
    assert str(refused).startswith(message), str(refused)
    assert "\n" not in str(refused)
    assert [job.source for job in result.jobs] == ["15 4 * * * /usr/bin/good"]


def test_every_bad_line_is_named_in_one_run_in_the_crontab_s_order() -> None:
    text = "".join(t for _, t, _ in BAD) + "CRON_TZ=UTC\n15 4 * * * /usr/bin/good\n"
    result = import_crontab(crontab_text(text.encode()), zone="UTC", now=NOW)
    numbers = [int(str(exc).split(":")[0].removeprefix("line ")) for exc in result.refused]
    assert len(numbers) == len(BAD) and numbers == sorted(numbers)
    assert [job.source for job in result.jobs] == ["15 4 * * * /usr/bin/good"]


def test_the_jobs_below_a_bad_zone_are_refused_with_it() -> None:
    text = "CRON_TZ=Mars/Olympus\n0 1 * * * /a\nCRON_TZ=Europe/Berlin\n0 2 * * * /b\n"
    result = import_crontab(text, zone="UTC", now=NOW)
    assert [str(exc).split(":")[0] for exc in result.refused] == ["line 1", "line 2"]
    assert str(result.refused[1]) == "line 2: runs in CRON_TZ=Mars/Olympus of line 1, which is not a zone"
    assert [(job.line, job.zone) for job in result.jobs] == [(4, "Europe/Berlin")]


@pytest.mark.parametrize(
    ("text", "message"), [(t, m) for _, t, m in NOT_A_CRONTAB], ids=[i for i, _, _ in NOT_A_CRONTAB]
)
def test_text_that_is_no_crontab_is_refused_whole(text: str, message: str) -> None:
    with pytest.raises(CrontabError) as raised:
        import_crontab(crontab_text(text.encode()), zone="UTC", now=NOW)
    assert str(raised.value).startswith(message), str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"0 0 * * * x\n\x00\x01\x02", "line 2: a NUL byte; this is binary data, not a crontab"),
        (b"# ok\n0 0 * * * caf\xe9\n", "line 2: not UTF-8 text"),
        (b"#" * (MAX_CRONTAB_BYTES + 1), f"more than {MAX_CRONTAB_BYTES:,} bytes"),
    ],
    ids=["nul", "not_utf8", "huge"],
)
def test_bad_bytes(data: bytes, message: str) -> None:
    with pytest.raises(CrontabError) as raised:
        crontab_text(data)
    assert str(raised.value).startswith(message)


def test_no_zone_anywhere_is_one_line_asking_for_it() -> None:
    (refused,) = import_crontab("# x\n0 0 * * * x\n", zone=None, now=NOW).refused
    assert str(refused) == (
        "line 2: no CRON_TZ= or TZ= line above this job; give --zone ZONE, the zone the machine's cron ran in "
        "(e.g. --zone Europe/Berlin)"
    )
