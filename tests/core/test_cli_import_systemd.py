"""``schedctl import systemd`` end to end: the files it writes from timers and their services,
the report (systemd's runs and the spec's at the next clock change, side by side), what is not
imported and why, and bad input refused in one line naming the file and line, exit 2, nothing
written."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from core.enums import Kind, MisfirePolicy
from core.spec.files import load_spec
from tests.core.conftest import Run

NOW = ["--now", "2026-03-01T12:00:00Z"]
BACKUP_TIMER = """\
[Unit]
Description=Nightly backup

[Timer]
OnCalendar=*-*-* 02:30
Persistent=true
RandomizedDelaySec=5min
OnBootSec=10min

[Install]
WantedBy=timers.target
"""
BACKUP_SERVICE = """\
[Service]
Type=oneshot
Environment="MODE=full" LEVEL=3
WorkingDirectory=/srv
ExecStart=/usr/bin/backup --mode ${MODE} $LEVEL
"""
_SPRING = "  next gap: Sun 2026-03-29 02:00 CET → 03:00 CEST, forward 1 hour; runs 01:00 CET-04:00 CEST:"
_FALL = "  next fold: Sun 2026-10-25 03:00 CEST → 02:00 CET, back 1 hour; runs 02:00 CEST-03:00 CET:"
REPORT = f"""\
backup.timer (runs backup.service):
  OnCalendar=*-*-* 02:30: systemd reads *-*-* 02:30:00
  wrote backup.yaml: FREQ=DAILY;BYHOUR=2;BYMINUTE=30
  Europe/Berlin (from --zone): gap SKIP, fold FIRST_ONLY, misfire CATCH_UP_BOUNDED
{_SPRING}
    systemd ran:    no run
    this spec runs: no run
{_FALL}
    systemd ran:    02:30 CEST
    this spec runs: 02:30 CEST
  backup.timer line 6: Persistent=true: misfirePolicy CATCH_UP_BOUNDED, maxCatchUp 1: a run missed while the \
machine was off runs once
  backup.timer line 7: RandomizedDelaySec=5min: jitter PT5M
  backup.timer line 8: OnBootSec=10min: not imported: counts from boot; Tidemark schedules by the clock
  backup.timer line 11: WantedBy=timers.target: not imported: how systemd enables the timer; publishing the spec \
does that
  backup.service line 3: Environment="MODE=full" LEVEL=3: in the task env: MODE, LEVEL
  backup.service line 4: WorkingDirectory=/srv: the task's cwd
  backup.service line 5: ExecStart=/usr/bin/backup --mode ${{MODE}} $LEVEL: argv: /usr/bin/backup --mode full 3
1 timer imported into 1 file; 2 settings not imported
"""


def _units(folder: Path, **files: str) -> None:
    for name, text in files.items():
        (folder / name.replace("_", ".")).write_text(text, encoding="utf-8")


@pytest.fixture
def backup(tmp_path: Path) -> Path:
    _units(tmp_path, backup_timer=BACKUP_TIMER, backup_service=BACKUP_SERVICE)
    return tmp_path / "backup.timer"


def test_writes_the_spec_and_prints_the_report(run: Run, backup: Path, tmp_path: Path) -> None:
    out = tmp_path / "specs"
    status, stdout, stderr = run("import", "systemd", str(backup), "--zone", "Europe/Berlin", "--out", str(out), *NOW)
    assert (status, stderr) == (0, "")
    assert stdout == REPORT.replace("backup.timer", str(backup)) + f"written to {out}\n"
    spec = load_spec(out / "backup.yaml")
    assert (spec.title, spec.time_zone, spec.rule) == (
        "Nightly backup",
        "Europe/Berlin",
        "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    )
    assert (spec.misfire_policy, spec.effective_max_catch_up) == (MisfirePolicy.CATCH_UP_BOUNDED, 1)
    assert spec.jitter == timedelta(minutes=5)
    assert spec.task is not None
    assert spec.task.argv == ["/usr/bin/backup", "--mode", "full", "3"]
    assert (spec.task.env, spec.task.cwd) == ({"MODE": "full", "LEVEL": "3"}, "/srv")
    text = (out / "backup.yaml").read_text(encoding="utf-8")
    assert "# systemd reads OnCalendar= on the wall clock: a time the clocks jump over is not run" in text
    assert run("validate", str(out / "backup.yaml")) == (0, "ok\n", "")


def test_the_issue_cases_and_the_zone_an_expression_names(run: Run, tmp_path: Path) -> None:
    _units(
        tmp_path,
        work_timer="[Timer]\nOnCalendar=Mon..Fri 09:00\nOnCalendar=Sat,Sun 10:00 Europe/Paris\n",
        work_service="[Service]\nExecStart=/usr/bin/work\n",
        poll_timer="[Timer]\nOnCalendar=*:0/15\nOnCalendar=hourly\n",
        poll_service="[Service]\nExecStart=/usr/bin/poll\n",
        first_timer="[Timer]\nOnCalendar=*-*-01 00:00:00\nOnCalendar=*-*-15 00:00:00\n",
        first_service="[Service]\nExecStart=/usr/bin/first\n",
    )
    out = tmp_path / "specs"
    timers = [str(tmp_path / f"{n}.timer") for n in ("work", "poll", "first")]
    status, stdout, _ = run("import", "systemd", *timers, "--zone", "America/New_York", "--out", str(out), *NOW)
    assert status == 0
    weekdays, weekend = load_spec(out / "work-1.yaml"), load_spec(out / "work-2.yaml")
    assert (weekdays.time_zone, weekdays.rule) == (
        "America/New_York",
        "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0",
    )
    assert (weekend.time_zone, weekend.rule) == ("Europe/Paris", "FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=10;BYMINUTE=0")
    assert "Europe/Paris (from OnCalendar=)" in stdout
    assert "its OnCalendar= lines are several schedules" in stdout
    # Two expressions that differ in one component are one rule, exactly their union.
    assert load_spec(out / "poll.yaml").rule == "FREQ=HOURLY;BYMINUTE=0,15,30,45"
    assert load_spec(out / "first.yaml").rule == "FREQ=MONTHLY;BYMONTHDAY=1,15;BYHOUR=0;BYMINUTE=0"
    quarters = "01:00 EST, 01:15 EST, 01:30 EST, 01:45 EST, 03:00 EDT, 03:15 EDT, 03:30 EDT, 03:45 EDT"
    assert f"    systemd ran:    {quarters}\n    this spec runs: {quarters}\n" in stdout


def test_an_empty_on_calendar_resets_the_list_and_says_so(run: Run, tmp_path: Path) -> None:
    _units(
        tmp_path,
        h_timer="[Timer]\nOnCalendar=daily\nOnCalendar=\nOnCalendar=weekly\n",
        h_service="[Service]\nExecStart=/bin/old\nExecStart=\nExecStart=/bin/h\n",
    )
    status, stdout, _ = run("import", "systemd", str(tmp_path / "h.timer"), "--zone", "UTC", "--out", str(tmp_path))
    assert status == 0
    spec = load_spec(tmp_path / "h.yaml")
    assert spec.rule == "FREQ=WEEKLY;BYDAY=MO;BYHOUR=0;BYMINUTE=0"
    assert spec.task is not None and spec.task.argv == ["/bin/h"]
    assert "h.timer line 2: OnCalendar=daily: not imported: the empty OnCalendar= on line 3 resets it" in stdout
    assert "h.service line 2: ExecStart=/bin/old: not imported: the empty ExecStart= on line 3 resets it" in stdout


def test_elapsed_time_triggers_and_persistent_false(run: Run, tmp_path: Path) -> None:
    _units(
        tmp_path,
        sync_timer="[Timer]\nOnUnitActiveSec=1h\nOnUnitInactiveSec=30min\nPersistent=no\n",
        sync_service="[Service]\nExecStart=/usr/bin/sync-it\n",
    )
    out = tmp_path / "specs"
    status, stdout, _ = run("import", "systemd", str(tmp_path / "sync.timer"), "--out", str(out), *NOW)
    assert status == 0
    every = load_spec(out / "sync-interval.yaml")
    after = load_spec(out / "sync-after-completion.yaml")
    assert (every.kind, every.every, every.misfire_policy) == (Kind.INTERVAL, timedelta(hours=1), MisfirePolicy.SKIP)
    assert (after.kind, after.delay) == (Kind.AFTER_COMPLETION, timedelta(minutes=30))
    assert "Persistent=no: misfirePolicy SKIP: nothing missed runs" in stdout


def test_what_no_spec_holds_is_reported_and_nothing_is_written_for_it(run: Run, tmp_path: Path) -> None:
    _units(
        tmp_path,
        boot_timer="[Timer]\nOnBootSec=5min\n",
        boot_service="[Service]\nExecStart=/usr/bin/warm\n",
        home_timer="[Timer]\nOnCalendar=daily\n",
        home_service="[Service]\nExecStart=%h/bin/tidy\n",
        named_timer="[Timer]\nOnCalendar=daily\n",
        named_service="[Service]\nExecStart=@/usr/bin/tidy tidy-daemon\n",
    )
    out = tmp_path / "specs"
    timers = [str(tmp_path / f"{n}.timer") for n in ("boot", "home", "named")]
    status, stdout, _ = run("import", "systemd", *timers, "--zone", "UTC", "--out", str(out), *NOW)
    assert status == 0
    assert f"{timers[0]} line 2: OnBootSec=5min: not imported: counts from boot" in stdout
    assert "uses the specifier %h, which systemd fills in from the unit's context; write its value in" in stdout
    assert "ExecStart=@ gives the process another name than its program; a task cannot" in stdout
    assert stdout.endswith("0 timers imported into 0 files; 3 settings not imported\n")
    assert not out.exists()


@pytest.mark.parametrize(
    ("timer", "service", "error"),
    [
        ("[Timer]\nPersistent=true\n", "[Service]\nExecStart=/bin/x\n", "line 2: no OnCalendar= (nor OnUnitActiveSec="),
        ("[Timer]\nOnCalendar=Mon 25:00\n", "[Service]\nExecStart=/bin/x\n", "line 2: OnCalendar=Mon 25:00: hour 25"),
        ("[Timer]\nOnCalendar=Mon 09:00 Mars/Base\n", "[Service]\nExecStart=/bin/x\n", "line 2: OnCalendar="),
        ("[Timer]\nOnCal\x00endar=daily\n", "[Service]\nExecStart=/bin/x\n", "line 2: a NUL byte"),
        ("[Timer]\nOnCalendar daily\n", "[Service]\nExecStart=/bin/x\n", "line 2: 'OnCalendar daily' is neither"),
        ("OnCalendar=daily\n", "[Service]\nExecStart=/bin/x\n", "line 1: OnCalendar= comes before any [Section]"),
        ("[Timer]\nOnCalendar=daily\nPersistent=maybe\n", "[Service]\nExecStart=/bin/x\n", "line 3: Persistent=maybe"),
        ("[Timer]\nOnCalendar=daily\nRandomizedDelaySec=soon\n", "[Service]\nExecStart=/bin/x\n", "line 3:"),
        ("[Timer]\nOnCalendar=daily\n", "[Service]\nType=oneshot\n", "x.service: no ExecStart="),
        ("[Timer]\nOnCalendar=daily\n", None, "no x.service beside it"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(
    run: Run, tmp_path: Path, timer: str, service: str | None, error: str
) -> None:
    (tmp_path / "x.timer").write_bytes(timer.encode())
    if service is not None:
        (tmp_path / "x.service").write_text(service, encoding="utf-8")
    out = tmp_path / "specs"
    status, stdout, stderr = run("import", "systemd", str(tmp_path / "x.timer"), "--zone", "UTC", "--out", str(out))
    assert (status, stdout) == (2, "")
    assert error in stderr and stderr.count("\n") == 1, stderr
    assert not out.exists()


def test_an_expression_with_no_zone_runs_in_the_machine_s_zone(
    run: Run, backup: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "America/Chicago")
    status, stdout, stderr = run("import", "systemd", str(backup), "--out", str(tmp_path / "specs"), *NOW)
    assert (status, stderr) == (0, "")
    assert "  America/Chicago (the machine's zone; --zone chooses another): gap SKIP" in stdout
    assert "  next gap: Sun 2026-03-08 02:00 CST → 03:00 CDT" in stdout
    assert load_spec(tmp_path / "specs" / "backup.yaml").time_zone == "America/Chicago"


def _report_of(run: Run, folder: Path, calendar: str) -> tuple[int, str, str]:
    _units(folder, t_timer=f"[Timer]\nOnCalendar={calendar}\n", t_service="[Service]\nExecStart=/bin/true\n")
    return run("import", "systemd", str(folder / "t.timer"), "--zone", "UTC", "--out", str(folder / "specs"), *NOW)


@pytest.mark.parametrize(
    ("calendar", "why"),
    [
        ("*:*:*", "runs every second; Tidemark runs a schedule at most once a minute"),
        ("*:0:1.5", "runs at fractions of a second (01.500000); Tidemark runs on whole seconds"),
        ("*-*-* 00:00:00.25", "runs at fractions of a second (00.250000); Tidemark runs on whole seconds"),
    ],
    ids=["every_second", "fraction", "fraction_with_date"],
)
def test_what_no_rule_holds_is_not_imported_the_same_way(run: Run, tmp_path: Path, calendar: str, why: str) -> None:
    status, stdout, stderr = _report_of(run, tmp_path, calendar)
    assert (status, stderr) == (0, "")
    assert f"  {tmp_path / 't.timer'} line 2: OnCalendar={calendar}: not imported: {why}\n" in stdout
    assert not (tmp_path / "specs").exists()


def test_systemd_s_runs_are_never_said_to_stand_for_a_skipped_time(run: Run, tmp_path: Path) -> None:
    """systemd skips a wall time the clocks jump over: its run at 03:00 is 03:00's own, never a moved one."""
    _units(tmp_path, t_timer="[Timer]\nOnCalendar=*:0/15\n", t_service="[Service]\nExecStart=/bin/true\n")
    status, stdout, _ = run(
        "import", "systemd", str(tmp_path / "t.timer"), "--zone", "America/New_York", "--out", str(tmp_path / "s"), *NOW
    )
    assert status == 0
    assert "skipped" not in stdout
    assert "    systemd ran:    01:00 EST, 01:15 EST, 01:30 EST, 01:45 EST, 03:00 EDT, 03:15 EDT" in stdout


def test_not_a_timer_file(run: Run, tmp_path: Path) -> None:
    (tmp_path / "x.service").write_text("[Service]\nExecStart=/bin/x\n", encoding="utf-8")
    assert run("import", "systemd", str(tmp_path / "x.service")) == (
        2,
        "",
        f"{tmp_path / 'x.service'}: not a .timer file\n",
    )


@pytest.mark.parametrize(
    ("calendar", "runs"),
    [
        ("*:0/15", "01:00 EST, 01:15 EST, 01:30 EST, 01:45 EST, 03:00 EDT, 03:15 EDT, 03:30 EDT, 03:45 EDT"),
        ("minutely", "01:00 EST to 01:59 EST every minute, 03:00 EDT to 03:59 EDT every minute"),
        ("*:*:0/10", "01:00 EST to 01:59:50 EST every 10 seconds, 03:00 EDT to 03:59:50 EDT every 10 seconds"),
    ],
    ids=["quarters", "every_minute", "every_ten_seconds"],
)
def test_every_run_at_the_change_is_named_none_left_out(run: Run, tmp_path: Path, calendar: str, runs: str) -> None:
    _units(tmp_path, t_timer=f"[Timer]\nOnCalendar={calendar}\n", t_service="[Service]\nExecStart=/bin/true\n")
    status, stdout, _ = run(
        "import", "systemd", str(tmp_path / "t.timer"), "--zone", "America/New_York", "--out", str(tmp_path / "s"), *NOW
    )
    assert status == 0 and "more" not in stdout
    assert f"    systemd ran:    {runs}\n    this spec runs: {runs}\n" in stdout
