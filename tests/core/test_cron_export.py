"""The crontab export (core/exporting): each spec's nearest crontab text, a table of specs cron has
no equivalent for (refused with the reason), and the round trip: a spec exported exactly and read
back by the crontab import runs at the same UTC instants, at both clock changes of its zone."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from itertools import islice, takewhile
from typing import Any

import pytest
from croniter import CroniterBadDateError, croniter
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.errors import UserError
from core.exporting.crontab import export_crontab
from core.exporting.refusal import ExportRefused
from core.importing.cron import import_crontab
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import iter_rows
from core.spec.model import ScheduleSpec
from core.spec.validation import parse_spec
from core.time.zones import get_zone, transitions

NOW = datetime(2026, 1, 1, tzinfo=UTC)
#: Cron's own behaviour: what a spec must say to be exported exactly.
CRON_LIKE = {"misfirePolicy": "SKIP", "overlapPolicy": "ALLOW", "retry": {"maxAttempts": 1}}
FIXED = {"gapPolicy": "SHIFT_FORWARD", "foldPolicy": "FIRST_ONLY"}
WILD = {"gapPolicy": "SKIP", "foldPolicy": "BOTH"}
ZONE_NOTE = (
    "# CRON_TZ is read by cronie; Debian's cron ignores it and runs every job on the machine's zone "
    "(TZ= only sets the job's environment): there, install this on a machine whose zone is {zone}"
)
TIMEOUT_NOTE = "# not kept: task.timeout PT10M: cron never stops a job (timeout(1) in the command does)"


def _spec(**keys: Any) -> ScheduleSpec:
    document: dict[str, Any] = {
        "schema": "scheduleSpec.v1",
        "scheduleId": "job",
        "revision": 1,
        "timeZone": "Europe/Berlin",
        "start": "2025-06-01T00:00:00",
        **FIXED,
        **CRON_LIKE,
        "task": {"argv": ["/usr/bin/job"]},
    }
    document.update(keys)
    for key in [k for k, v in document.items() if v is None]:
        del document[key]
    return parse_spec(document)


def _interval(every: str, anchor: str, **keys: Any) -> ScheduleSpec:
    return _spec(kind="interval", every=every, anchor=anchor, start=None, gapPolicy=None, foldPolicy=None, **keys)


def _job_line(text: str) -> str:
    return text.rstrip("\n").rsplit("\n", 1)[-1]


# --- the case table ---------------------------------------------------------------------------

CASES = [
    ("daily_fixed", _spec(rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30"), "30 2 * * *"),
    ("daily_from_start", _spec(rule="FREQ=DAILY", start="2025-06-01T07:45:00"), "45 7 * * *"),
    ("every_minute", _spec(rule="FREQ=MINUTELY", **WILD), "* * * * *"),
    ("quarter_hours", _spec(rule="FREQ=MINUTELY;INTERVAL=15", **WILD), "*/15 * * * *"),
    (
        "quarter_hours_offset",
        _spec(rule="FREQ=MINUTELY;INTERVAL=15", start="2025-06-01T00:05:00", **WILD),
        "5-50/15 * * * *",
    ),
    ("hourly", _spec(rule="FREQ=HOURLY;BYMINUTE=0,30", **WILD), "0,30 * * * *"),
    ("six_hourly", _spec(rule="FREQ=HOURLY;INTERVAL=6;BYMINUTE=5", start="2025-06-01T01:00:00"), "5 1-19/6 * * *"),
    (
        "two_hours_in_minutes",
        _spec(rule="FREQ=MINUTELY;INTERVAL=120", start="2025-06-01T00:10:00", **WILD),
        "10 */2 * * *",
    ),
    ("weekdays", _spec(rule="FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0"), "0 9 * * 1-5"),
    ("weekly_from_start", _spec(rule="FREQ=WEEKLY;BYHOUR=8;BYMINUTE=0"), "0 8 * * 0"),  # 2025-06-01 is a Sunday
    ("daily_weekend", _spec(rule="FREQ=DAILY;BYDAY=SA,SU;BYHOUR=10;BYMINUTE=0"), "0 10 * * 0,6"),
    ("monthly_days", _spec(rule="FREQ=MONTHLY;BYMONTHDAY=1,15;BYHOUR=0;BYMINUTE=0"), "0 0 1,15 * *"),
    ("monthly_from_start", _spec(rule="FREQ=MONTHLY", start="2025-06-03T04:05:00"), "5 4 3 * *"),
    (
        "quarterly",
        _spec(rule="FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=1;BYHOUR=6;BYMINUTE=0", start="2025-01-01T00:00:00"),
        "0 6 1 */3 *",
    ),
    ("quarterly_from_june", _spec(rule="FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=1;BYHOUR=6;BYMINUTE=0"), "0 6 1 3-12/3 *"),
    ("quarterly_from_feb", _spec(rule="FREQ=MONTHLY;INTERVAL=3", start="2025-02-10T06:00:00"), "0 6 10 2-11/3 *"),
    ("yearly", _spec(rule="FREQ=YEARLY", start="2025-12-25T08:00:00"), "0 8 25 12 *"),
    ("yearly_months", _spec(rule="FREQ=YEARLY;BYMONTH=1,7;BYMONTHDAY=1;BYHOUR=0;BYMINUTE=0"), "0 0 1 1,7 *"),
    ("yearly_month_weekdays", _spec(rule="FREQ=YEARLY;BYMONTH=12;BYDAY=MO;BYHOUR=9;BYMINUTE=0"), "0 9 * 12 1"),
    ("interval_quarter_hours", _interval("PT15M", "2025-01-01T00:05:00Z"), "5-50/15 * * * *"),
    ("interval_hourly", _interval("PT1H", "2025-03-01T00:20:00Z"), "20 * * * *"),
    ("interval_eight_hours", _interval("PT8H", "2025-03-01T02:30:00Z"), "30 2-18/8 * * *"),
    ("interval_daily", _interval("P1D", "2025-03-01T04:00:00Z"), "0 4 * * *"),
]


@pytest.mark.parametrize(("spec", "expression"), [(s, e) for _, s, e in CASES], ids=[i for i, _, _ in CASES])
def test_each_spec_becomes_its_cron_fields(spec: ScheduleSpec, expression: str) -> None:
    export = export_crontab(spec, NOW)
    assert _job_line(export.text) == f"{expression} /usr/bin/job"
    assert export.exact, export.notes


def test_the_whole_text_of_a_cron_like_spec() -> None:
    spec = _spec(
        rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        title="Nightly backup",
        task={"argv": ["/usr/bin/backup", "--to", "/mnt/b a", "100%"], "env": {"PATH": "/usr/bin:/bin"}},
    )
    assert export_crontab(spec, NOW).text == "\n".join(
        [
            "# Exported from schedule job (revision 1): Nightly backup",
            "# The nearest crontab equivalent; each comment below names what cron does not keep.",
            ZONE_NOTE.format(zone="Europe/Berlin"),
            "CRON_TZ=Europe/Berlin",
            TIMEOUT_NOTE,
            "PATH=/usr/bin:/bin",
            "30 2 * * * /usr/bin/backup --to '/mnt/b a' 100\\%",
            "",
        ]
    )


def test_an_interval_is_written_in_utc_with_the_reason() -> None:
    text = export_crontab(_interval("PT20M", "2026-01-01T00:05:00Z"), NOW).text
    assert "# every PT20M counts elapsed time: the times are written in UTC, which has no clock changes\n" in text
    assert ZONE_NOTE.format(zone="UTC") + "\nCRON_TZ=UTC\n" in text


NOTES = [
    ("gap_by_gap", {"gapPolicy": "SHIFT_BY_GAP"}, "gapPolicy SHIFT_BY_GAP: the spec runs a time the clocks skip later"),
    (
        "gap_skip_fixed",
        {"gapPolicy": "SKIP"},
        "gapPolicy SKIP: the spec skips a time the clocks skip; cron runs a fixed",
    ),
    ("fold_both_fixed", {"foldPolicy": "BOTH"}, "foldPolicy BOTH: the spec runs a repeated time at both readings"),
    ("fold_second", {"foldPolicy": "SECOND_ONLY"}, "foldPolicy SECOND_ONLY: the spec runs a repeated time at its sec"),
    ("misfire_all", {"misfirePolicy": "CATCH_UP_ALL"}, "misfirePolicy CATCH_UP_ALL: every missed run runs late; cron"),
    ("misfire_bounded", {"misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 3}, "the newest 3 missed runs run late"),
    ("overlap_queue", {"overlapPolicy": "QUEUE_ONE"}, "overlapPolicy QUEUE_ONE: cron starts a job even while"),
    ("overlap_skip", {"overlapPolicy": "SKIP"}, "overlapPolicy SKIP: cron starts a job even while"),
    ("retry", {"retry": {"maxAttempts": 3}}, "retry: up to 3 attempts; cron never runs a failed job again"),
    ("jitter", {"jitter": "PT5M"}, "jitter PT5M: cron starts a job on the minute"),
    (
        "period",
        {"businessPeriod": "{nominal:%Y-%m-%d}"},
        "businessPeriod {nominal:%Y-%m-%d}: the spec runs at most once a period; cron has no periods",
    ),
    ("exclude", {"exclude": ["2026-12-25", "2026-12-26"]}, "exclude 2026-12-25, 2026-12-26: cron has no exclusions"),
    (
        "business_days",
        {"businessCalendar": {"holidays": ["US-NY"]}, "holidayPolicy": "NEXT_BUSINESS_DAY"},
        "businessCalendar with holidayPolicy NEXT_BUSINESS_DAY: cron knows no holidays or business days",
    ),
    ("count", {"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30;COUNT=10"}, "COUNT=10: the spec stops after 10 runs"),
    ("until", {"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30;UNTIL=20261231"}, "UNTIL=20261231: the spec ends then"),
    ("end", {"end": "2026-06-30"}, "end 2026-06-30T23:59:59: the spec ends then; a crontab line never ends"),
    ("start_later", {"start": "2026-02-01T00:00:00"}, "start 2026-02-01T00:00:00: the spec starts then; cron runs"),
    ("pinned", {"tzdbPolicy": "PIN"}, "tzdbPolicy PIN: cron follows the machine's time zone database"),
    ("runs_on", {"runsOn": {"host": "alpha"}}, "runsOn: cron runs the job on the machine whose crontab holds"),
    (
        "backward",
        {"rule": "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=0;BYMINUTE=0", "invalidDatePolicy": "BACKWARD"},
        "invalidDatePolicy BACKWARD: the spec moves a day a month lacks",
    ),
    (
        "secret",
        {"task": {"argv": ["/usr/bin/job"], "env": {"TOKEN": {"secret": "api-token"}}}},
        "TOKEN comes from the secret api-token, which is never written to a file: add TOKEN=... here by hand",
    ),
]
#: Notes that change when the job runs (the export is then not exact).
WHEN = {
    "gap_by_gap",
    "gap_skip_fixed",
    "fold_both_fixed",
    "fold_second",
    "exclude",
    "business_days",
    "count",
    "until",
    "end",
    "start_later",
    "period",
    "backward",
}


@pytest.mark.parametrize(("keys", "note"), [(k, n) for _, k, n in NOTES], ids=[i for i, _, _ in NOTES])
def test_every_policy_cron_cannot_keep_is_a_comment(
    request: pytest.FixtureRequest, keys: dict[str, Any], note: str
) -> None:
    spec = _spec(**{"rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", **keys})
    export = export_crontab(spec, NOW)
    comments = [line for line in export.text.splitlines() if line.startswith("# not kept: ")]
    assert any(note in line for line in comments), comments
    assert _job_line(export.text).startswith("30 2 ") or _job_line(export.text).startswith("0 0 31 ")
    assert export.exact is (request.node.callspec.id not in WHEN)


def test_two_fixed_times_in_the_skipped_hour_are_a_comment() -> None:
    """Cron runs both right after the change, the spec once (docs/import.md): the export says so."""
    export = export_crontab(_spec(rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=0,30", timeZone="America/New_York"), NOW)
    assert not export.exact
    assert (
        "# not kept: at the clock change of 2026-03-08 cron runs the job at 03:00 EDT, 03:00 EDT; the spec at 03:00 EDT"
        in export.text.splitlines()
    )


def test_a_policy_difference_that_never_shows_is_no_comment() -> None:
    """An hourly SHIFT_FORWARD spec lands the skipped hour's run on the next hour's, as cron's SKIP
    does; its FIRST_ONLY fold does show (cron runs the repeated hour's run again)."""
    export = export_crontab(_spec(rule="FREQ=HOURLY;BYMINUTE=0", **FIXED), NOW)
    assert _job_line(export.text).startswith("0 * * * * ")
    notes = [note.text for note in export.notes]
    assert not [n for n in notes if n.startswith("gapPolicy")]
    assert [n for n in notes if n.startswith("foldPolicy FIRST_ONLY")]


def test_a_start_to_come_is_one_comment_not_a_clock_difference() -> None:
    export = export_crontab(_spec(rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30", start="2026-06-01T00:00:00"), NOW)
    assert [note.text.split(":")[0] for note in export.notes if note.when] == ["start 2026-06-01T00"]


@pytest.mark.parametrize(
    ("rule", "noted"),
    [
        ("FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=0;BYMINUTE=0", True),
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=0;BYMINUTE=0", True),
        ("FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=30;BYHOUR=0;BYMINUTE=0", False),
        ("FREQ=DAILY;BYHOUR=0;BYMINUTE=0", False),
    ],
)
def test_an_invalid_date_policy_is_a_comment_only_where_a_date_is_lacking(rule: str, noted: bool) -> None:
    export = export_crontab(_spec(rule=rule, invalidDatePolicy="FORWARD"), NOW)
    assert any(note.text.startswith("invalidDatePolicy FORWARD") for note in export.notes) is noted


def test_a_secret_is_never_written() -> None:
    spec = _spec(rule="FREQ=DAILY", task={"argv": ["/usr/bin/job"], "env": {"TOKEN": {"secret": "api-token"}}})
    assert "TOKEN=" not in export_crontab(spec, NOW).text.replace("add TOKEN=...", "")


def test_a_wildcard_job_in_a_zone_with_no_clock_changes_needs_no_clock_comment() -> None:
    export = export_crontab(_spec(rule="FREQ=MINUTELY;INTERVAL=5", timeZone="UTC", **FIXED), NOW)
    assert export.exact and "gapPolicy" not in export.text and "foldPolicy" not in export.text
    berlin = export_crontab(_spec(rule="FREQ=MINUTELY;INTERVAL=5", **FIXED), NOW)
    assert not berlin.exact and "# not kept: foldPolicy FIRST_ONLY" in berlin.text


COMMANDS = [
    ("plain", ["/usr/bin/job", "-v"], {}, None, "/usr/bin/job -v"),
    ("quoted", ["/usr/bin/say", "it's", "a b"], {}, None, "/usr/bin/say 'it'\"'\"'s' 'a b'"),
    ("percent", ["date", "+%Y-%m-%d"], {}, None, "date +\\%Y-\\%m-\\%d"),
    ("shell_text", ["/bin/sh", "-c", "a | b > /tmp/x 2>&1"], {}, None, "a | b > /tmp/x 2>&1"),
    ("other_shell", ["/bin/bash", "-c", "a | b"], {}, None, "/bin/bash -c 'a | b'"),
    ("crontab_shell", ["/bin/bash", "-c", "a | b"], {"SHELL": "/bin/bash"}, None, "a | b"),
    ("cwd", ["./run"], {}, "/srv/app dir", "cd '/srv/app dir' && ./run"),
]


@pytest.mark.parametrize(("argv", "env", "cwd", "command"), [c[1:] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_the_task_becomes_the_command(argv: list[str], env: dict[str, str], cwd: str | None, command: str) -> None:
    task: dict[str, Any] = {"argv": argv, "env": env}
    if cwd is not None:
        task["cwd"] = cwd
    export = export_crontab(_spec(rule="FREQ=DAILY", task=task), NOW)
    assert _job_line(export.text) == f"0 0 * * * {command}"


def test_variables_are_written_so_that_cron_reads_them_back() -> None:
    env = {"A": "plain", "B": " spaced ", "C": "'quoted'", "D": "", "E": "x=y # z"}
    text = export_crontab(_spec(rule="FREQ=DAILY", task={"argv": ["/usr/bin/job"], "env": env}), NOW).text
    assert [line for line in text.splitlines() if line[:2] in {"A=", "B=", "C=", "D=", "E="}] == [
        "A=plain",
        'B=" spaced "',
        "C=\"'quoted'\"",
        "D=",
        "E=x=y # z",
    ]
    imported = import_crontab(text, zone=None, now=NOW).jobs[0].specs[0].spec
    assert imported.task is not None and imported.task.env == env


@pytest.mark.parametrize(
    ("env", "cwd"),
    [
        pytest.param({"MAILTO": "ops@example.com"}, None, id="mailto"),
        pytest.param({"MAILTO": "a b 100% 'q' $HOME", "MAILFROM": "cron@x", "MODE": "full"}, "/tmp", id="hostile"),
        pytest.param({"MAILTO": ""}, None, id="empty"),
    ],
)
def test_a_task_mail_variable_is_its_own_never_cron_mail_line(env: dict[str, str], cwd: str | None) -> None:
    """As a line, ``MAILTO=`` tells cron where to mail the output of every job below it in the
    crontab: the task's variable is set by its command instead, which sh runs with exactly it."""
    task: dict[str, Any] = {"argv": ["/usr/bin/env"], "env": env, **({"cwd": cwd} if cwd else {})}
    text = export_crontab(_spec(rule="FREQ=DAILY", task=task), NOW).text
    assert not [line for line in text.splitlines() if line.startswith(("MAILTO", "MAILFROM"))]
    for name in ("MAILTO", "MAILFROM"):
        if name in env:
            assert f"# {name} is the task's own variable, set in its command: as a line of its own, cron " in text
    imported = import_crontab(text, zone=None, now=NOW)
    assert [u.source for u in imported.unimported] == []  # no mail line for the import to leave out
    command = _job_line(text).split(" ", 5)[5].replace("\\%", "%")  # cron reads \% as %
    ran = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, check=True, env={"PATH": "/bin"})
    seen = dict(line.split("=", 1) for line in ran.stdout.splitlines() if "=" in line)
    assert {name: seen.get(name) for name in env if name.startswith("MAIL")} == {
        name: value for name, value in env.items() if name.startswith("MAIL")
    }


# --- refusals ---------------------------------------------------------------------------------

REFUSED = [
    ("bysetpos", _spec(rule="FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1"), "BYSETPOS (the n-th of a set): cron"),
    ("last_day", _spec(rule="FREQ=MONTHLY;BYMONTHDAY=-1"), "BYMONTHDAY counted from the month's end"),
    ("nth_weekday", _spec(rule="FREQ=MONTHLY;BYDAY=2TU"), "a numbered weekday in BYDAY (2TU, -1FR)"),
    ("day_and_weekday", _spec(rule="FREQ=MONTHLY;BYMONTHDAY=13;BYDAY=FR"), "BYMONTHDAY and BYDAY together"),
    ("fortnightly", _spec(rule="FREQ=WEEKLY;INTERVAL=2"), "FREQ=WEEKLY;INTERVAL=2 (every 2 weeks): cron has no such"),
    ("every_other_day", _spec(rule="FREQ=DAILY;INTERVAL=2"), "FREQ=DAILY;INTERVAL=2 (every 2 days)"),
    ("every_other_year", _spec(rule="FREQ=YEARLY;INTERVAL=2"), "FREQ=YEARLY;INTERVAL=2 (every 2 years)"),
    ("seven_minutes", _spec(rule="FREQ=MINUTELY;INTERVAL=7", **WILD), "cron's steps start again every hour (60"),
    ("five_hours", _spec(rule="FREQ=HOURLY;INTERVAL=5", **WILD), "cron's steps start again every day (24 hours)"),
    ("five_months", _spec(rule="FREQ=MONTHLY;INTERVAL=5"), "cron's steps start again every year (12 months)"),
    ("week_numbers", _spec(rule="FREQ=YEARLY;BYWEEKNO=1"), "BYWEEKNO (weeks of the year)"),
    ("year_days", _spec(rule="FREQ=YEARLY;BYYEARDAY=100"), "BYYEARDAY (days of the year)"),
    ("seconds", _spec(rule="FREQ=DAILY", start="2025-06-01T00:00:30"), "the start 00:00:30 has seconds"),
    (
        "after_completion",
        _spec(kind="after_completion", delay="PT1H", rule=None, gapPolicy=None, foldPolicy=None),
        "an after_completion schedule waits for the last run to end",
    ),
    (
        "interval_90m",
        _interval("PT1H30M", "2026-01-01T00:00:00Z"),
        "an interval with an anchor that cron cannot express: every PT1H30M neither divides an hour",
    ),
    ("interval_2d", _interval("P2D", "2026-01-01T00:00:00Z"), "an interval with an anchor that cron cannot express"),
    (
        "interval_seconds",
        _interval("PT15M", "2026-01-01T00:00:10Z"),
        "an interval with an anchor that cron cannot express: the anchor 00:00:10Z has seconds",
    ),
    (
        "line_break",
        _spec(rule="FREQ=DAILY", task={"argv": ["/bin/echo", "a\nb"]}),
        "task.argv[1] has a line break: a crontab line cannot hold one",
    ),
    (
        "env_line_break",
        _spec(rule="FREQ=DAILY", task={"argv": ["/bin/true"], "env": {"A": "x\ny"}}),
        "task.env.A has a line break",
    ),
    (
        "cron_tz_variable",
        _spec(rule="FREQ=DAILY", task={"argv": ["/bin/true"], "env": {"CRON_TZ": "UTC"}}),
        "task.env.CRON_TZ: a crontab reads CRON_TZ as the zone of the jobs below it",
    ),
    ("no_task", _spec(rule="FREQ=DAILY", task=None), "the spec has no task: cron needs a command to run"),
]


@pytest.mark.parametrize(("spec", "reason"), [(s, r) for _, s, r in REFUSED], ids=[i for i, _, _ in REFUSED])
def test_what_cron_cannot_hold_is_refused_with_the_reason(spec: ScheduleSpec, reason: str) -> None:
    with pytest.raises(ExportRefused) as caught:
        export_crontab(spec, NOW)
    assert reason in str(caught.value)
    assert "\n" not in str(caught.value)


# --- the round trip ---------------------------------------------------------------------------

#: At most this many runs are compared per window (a day of an every-minute job is 1,440).
MOST = 3000


def _instants(specs: list[ScheduleSpec], start: datetime, end: datetime) -> list[datetime]:
    runs: list[datetime] = []
    for spec in specs:
        rows = takewhile(lambda r: r.position < end, iter_rows(compile_schedule(spec), start))
        runs += islice((r.resolved for r in rows if r.runnable and r.resolved is not None), MOST)
    return sorted(runs)[:MOST]


def _windows(zone: str) -> list[tuple[datetime, datetime]]:
    """A year from 2026-01-02 (after the imported spec's start; its first MOST runs), and two days
    around each clock change."""
    windows = [(datetime(2026, 1, 2, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))]
    for change in transitions(get_zone(zone), windows[0][0], datetime(2027, 1, 1, tzinfo=UTC)):
        windows.append((change.utc - timedelta(days=1), change.utc + timedelta(days=1)))
    return windows


def _round_trip(spec: ScheduleSpec) -> None:
    export = export_crontab(spec, NOW)
    assert export.exact, export.notes
    result = import_crontab(export.text, zone=None, now=NOW)
    assert not result.unimported
    imported = [s.spec for job in result.jobs for s in job.specs]
    assert len(imported) == 1
    for start, end in _windows(spec.time_zone):
        assert _instants(imported, start, end) == _instants([spec], start, end), (start, export.text)


ROUND_TRIPS = [
    *((f"berlin_{i}", s) for i, s, _ in CASES),
    *((f"new_york_{i}", s.model_copy(update={"time_zone": "America/New_York"})) for i, s, _ in CASES),
    ("gap_hour_once", _spec(rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30", timeZone="America/New_York")),
    ("fold_hour_wild", _spec(rule="FREQ=MINUTELY;INTERVAL=10;BYHOUR=1,2", timeZone="America/New_York", **WILD)),
]


@pytest.mark.parametrize("spec", [s for _, s in ROUND_TRIPS], ids=[i for i, _ in ROUND_TRIPS])
def test_export_then_import_runs_at_the_same_instants(spec: ScheduleSpec) -> None:
    _round_trip(spec)


@st.composite
def _simple_spec(
    draw: st.DrawFn, zones: tuple[str, ...] = ("Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC")
) -> ScheduleSpec:
    freq = draw(st.sampled_from(["MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"]))
    parts = [f"FREQ={freq}"]
    interval = {
        "MINUTELY": st.sampled_from([1, 5, 10, 15, 20, 30, 60, 120, 180]),
        "HOURLY": st.sampled_from([1, 2, 3, 4, 6, 8, 12]),
        "MONTHLY": st.sampled_from([1, 2, 3, 4, 6]),
    }.get(freq, st.just(1))
    step = draw(interval)
    if step > 1:
        parts.append(f"INTERVAL={step}")
    if freq in ("HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY") and draw(st.booleans()):
        parts.append(f"BYMONTH={','.join(map(str, sorted(draw(st.sets(st.integers(1, 12), min_size=1)))))}")
    day_kind = draw(st.sampled_from(["none", "monthday", "weekday"] if freq != "WEEKLY" else ["none", "weekday"]))
    if day_kind == "monthday":
        parts.append(f"BYMONTHDAY={','.join(map(str, sorted(draw(st.sets(st.integers(1, 31), min_size=1)))))}")
    elif day_kind == "weekday":
        days = draw(st.sets(st.sampled_from(["MO", "TU", "WE", "TH", "FR", "SA", "SU"]), min_size=1))
        parts.append(f"BYDAY={','.join(sorted(days))}")
    if draw(st.booleans()):
        parts.append(f"BYHOUR={','.join(map(str, sorted(draw(st.sets(st.integers(0, 23), min_size=1, max_size=4)))))}")
    if draw(st.booleans()):
        parts.append(
            f"BYMINUTE={','.join(map(str, sorted(draw(st.sets(st.integers(0, 59), min_size=1, max_size=4)))))}"
        )
    start = datetime(
        2025, draw(st.integers(1, 12)), draw(st.integers(1, 28)), draw(st.integers(0, 23)), draw(st.integers(0, 59))
    )
    zone = draw(st.sampled_from(zones))
    try:
        spec = _spec(rule=";".join(parts), start=start.isoformat(), timeZone=zone)
    except UserError:  # a rule whose parts never meet (BYMONTH=2;BYMONTHDAY=30)
        assume(False)
    try:
        wildcard = export_crontab(spec, NOW).fields.wildcard
    except ExportRefused:
        assume(False)
    spec = spec.model_copy(update=_policies(wildcard))
    assume(export_crontab(spec, NOW).exact)  # two fixed times in a skipped hour: cron runs both (a comment says so)
    return spec


def _policies(wildcard: bool) -> dict[str, Any]:
    from core.enums import FoldPolicy, GapPolicy

    if wildcard:
        return {"gap_policy": GapPolicy.SKIP, "fold_policy": FoldPolicy.BOTH}
    return {"gap_policy": GapPolicy.SHIFT_FORWARD, "fold_policy": FoldPolicy.FIRST_ONLY}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_simple_spec())
def test_random_simple_rules_round_trip(spec: ScheduleSpec) -> None:
    _round_trip(spec)


# --- a crontab line imported, then exported -------------------------------------------------------

LINES = [
    ("redirection", "30 2 * * * /usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1"),
    ("quarter_hours", "*/15 * * * * /usr/bin/poll"),
    ("escaped_percent", "0 9 * * 1-5 date +\\%Y-\\%m-\\%d"),
    ("standard_input", "0 8 1 * * mail -s hi ops%Dear ops,%all done"),
    ("percent_in_both", "0 8 1 * * printf '\\%s' x%50\\% done"),
]


@pytest.mark.parametrize("line", [line for _, line in LINES], ids=[i for i, _ in LINES])
def test_an_imported_line_exports_as_itself(line: str) -> None:
    (job,) = import_crontab(f"CRON_TZ=Europe/Berlin\n{line}\n", zone=None, now=NOW).jobs
    assert _job_line(export_crontab(job.specs[0].spec, NOW).text) == line


def _croniter_instants(expression: str, start: datetime, end: datetime) -> list[datetime]:
    it = croniter(expression, start - timedelta(seconds=1))
    runs: list[datetime] = []
    while len(runs) < MOST:
        try:
            at = it.get_next(datetime)
        except CroniterBadDateError:  # no such date within croniter's search
            break
        if at >= end:
            break
        runs.append(at)
    return runs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(_simple_spec(zones=("UTC",)))
def test_croniter_reads_the_exported_line_as_the_spec_runs(spec: ScheduleSpec) -> None:
    """An independent reader of cron expressions: in UTC, where no clock changes, it expands the
    exported fields to the spec's own instants for a year."""
    fields = export_crontab(spec, NOW).fields
    start, end = datetime(2026, 1, 2, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)
    assert _croniter_instants(fields.expression, start, end) == _instants([spec], start, end)
