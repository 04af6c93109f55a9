"""``schedctl import crontab`` end to end: the files it writes, the report it prints, and bad input
refused in one line naming the line, exit 2, nothing written."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.spec.files import load_spec, load_text
from core.spec.validation import parse_spec
from tests.core.conftest import Run

NOW = ["--now", "2026-03-01T12:00:00Z"]
CRONTAB = """\
# backups
MAILTO=ops@example.com
CRON_TZ=America/New_York
30 2 * * * /usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1
*/15 * * * * /usr/bin/poll
0 9 1,15 * mon /usr/bin/report
@reboot /usr/bin/warm-cache
"""
_NY_SPRING = "  next gap: Sun 2026-03-08 02:00 EST → 03:00 EDT, forward 1 hour; runs 01:00 EST-04:00 EDT:"
_NY_FALL = "  next fold: Sun 2026-11-01 02:00 EDT → 01:00 EST, back 1 hour; runs 01:00 EDT-02:00 EST:"
_FIXED = "  America/New_York (CRON_TZ, line 3); fixed-time job: gap SHIFT_FORWARD, fold FIRST_ONLY, misfire SKIP"
_QUARTERS = "01:00 EST, 01:15 EST, 01:30 EST, 01:45 EST, 03:00 EDT, 03:15 EDT, 03:30 EDT, 03:45 EDT"
# The repeated hour, both readings: a */15 job's fold is its point, so every run is named.
_TWICE = "01:00 EDT, 01:15 EDT, 01:30 EDT, 01:45 EDT, 01:00 EST, 01:15 EST, 01:30 EST, 01:45 EST"
_OTHER_DAYS = ",".join(str(d) for d in range(2, 32) if d != 15)
_NO_RUN = """\
    cron ran:       no run
    this spec runs: no run"""
REPORT = f"""\
line 2: MAILTO=ops@example.com: not imported: cron mails output; Tidemark keeps it with the run (schedctl attempts)
line 4: 30 2 * * * /usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1
  wrote backup-sh-full.yaml: FREQ=DAILY;BYHOUR=2;BYMINUTE=30
{_FIXED}
  runs through /bin/sh -c: it has a redirection (>), & or &&
{_NY_SPRING}
    cron ran:       03:00 EDT (for a skipped time)
    this spec runs: 03:00 EDT (for a skipped time)
{_NY_FALL}
{_NO_RUN}
line 5: */15 * * * * /usr/bin/poll
  wrote poll.yaml: FREQ=HOURLY;BYMINUTE=0,15,30,45
  America/New_York (CRON_TZ, line 3); wildcard job (minute or hour *): gap SKIP, fold BOTH, misfire SKIP
{_NY_SPRING}
    cron ran:       {_QUARTERS}
    this spec runs: {_QUARTERS}
{_NY_FALL}
    cron ran:       {_TWICE}
    this spec runs: {_TWICE}
line 6: 0 9 1,15 * mon /usr/bin/report
  cron runs it on its days of the month OR its days of the week; one rule cannot say that:
  two schedules, together exactly cron's days, no day twice
  wrote report-monthdays.yaml: FREQ=MONTHLY;BYMONTHDAY=1,15;BYHOUR=9;BYMINUTE=0
  wrote report-weekdays.yaml: FREQ=DAILY;BYMONTHDAY={_OTHER_DAYS};BYDAY=MO;BYHOUR=9;BYMINUTE=0
{_FIXED}
{_NY_SPRING}
{_NO_RUN}
{_NY_FALL}
{_NO_RUN}
line 7: @reboot /usr/bin/warm-cache: not imported: runs at boot; Tidemark schedules by the clock
3 jobs imported into 4 files; 2 lines not imported
"""


@pytest.fixture
def crontab(tmp_path: Path) -> Path:
    path = tmp_path / "crontab.txt"
    path.write_text(CRONTAB, encoding="utf-8")
    return path


def test_writes_one_file_per_job_and_prints_the_report(run: Run, crontab: Path, tmp_path: Path) -> None:
    out = tmp_path / "specs"
    status, stdout, stderr = run("import", "crontab", str(crontab), "--out", str(out), *NOW)
    assert (status, stderr) == (0, "")
    assert stdout == REPORT + f"written to {out}\n"
    names = sorted(p.name for p in out.iterdir())
    assert names == ["backup-sh-full.yaml", "poll.yaml", "report-monthdays.yaml", "report-weekdays.yaml"]
    backup = load_spec(out / "backup-sh-full.yaml")
    assert backup.time_zone == "America/New_York"
    assert backup.start is not None and backup.start.isoformat() == "2026-03-01T00:00:00"
    assert backup.task is not None
    assert backup.task.argv == ["/bin/sh", "-c", "/usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1"]
    # Every file written is a valid spec, and the schedctl that reads it agrees.
    assert run("validate", *(str(out / n) for n in names)) == (0, "ok\n" * 4, "")


def test_reads_standard_input_and_writes_here_by_default(
    run: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"0 6 * * * /usr/bin/wake\n")))
    status, stdout, _ = run("import", "crontab", "--zone", "Europe/Berlin", *NOW)
    assert status == 0
    assert "Europe/Berlin (from --zone)" in stdout
    spec = parse_spec(load_text((tmp_path / "wake.yaml").read_text(encoding="utf-8")))
    assert (spec.rule, spec.time_zone) == ("FREQ=DAILY;BYHOUR=6;BYMINUTE=0", "Europe/Berlin")


def test_an_existing_file_is_never_replaced_without_overwrite(run: Run, crontab: Path, tmp_path: Path) -> None:
    out = tmp_path / "specs"
    out.mkdir()
    (out / "poll.yaml").write_text("mine\n", encoding="utf-8")
    status, stdout, stderr = run("import", "crontab", str(crontab), "--out", str(out), *NOW)
    assert (status, stdout) == (2, "")
    assert stderr == f"{out / 'poll.yaml'}: already exists; give --overwrite, or another --out\n"
    assert [p.name for p in out.iterdir()] == ["poll.yaml"]  # nothing written
    assert (out / "poll.yaml").read_text(encoding="utf-8") == "mine\n"
    status, _, _ = run("import", "crontab", str(crontab), "--out", str(out), "--overwrite", *NOW)
    assert status == 0
    assert load_spec(out / "poll.yaml").rule == "FREQ=HOURLY;BYMINUTE=0,15,30,45"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left


BAD = [
    ("four_fields", b"0 * * *\n", "crontab.txt: line 1: 4 fields; a job is five time fields"),
    ("minute_61", b"# first\n61 * * * * x\n", "crontab.txt: line 2: minute 61 is out of range 0-59"),
    ("binary", b"0 0 * * * x\n\x7fELF\x00\x00", "crontab.txt: line 2: a NUL byte; this is binary data, not a crontab"),
    ("huge", b"#" * 1_000_001, "crontab.txt: more than 1,000,000 bytes; a crontab is at most 1,000,000"),
]


@pytest.mark.parametrize(("data", "message"), [(d, m) for _, d, m in BAD], ids=[i for i, _, _ in BAD])
def test_bad_input_is_one_line_and_writes_nothing(run: Run, tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "crontab.txt"
    path.write_bytes(data)
    out = tmp_path / "specs"
    status, stdout, stderr = run("import", "crontab", str(path), "--out", str(out), *NOW)
    assert (status, stdout) == (2, "")
    assert stderr.count("\n") == 1 and stderr.replace(str(tmp_path) + "/", "").startswith(message), stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--zone", "EST"], "schedctl import crontab: --zone: "),
        (["--out", "crontab.txt"], "schedctl import crontab: --out: "),
        (["--now", "soon"], "schedctl import crontab: --now: "),
    ],
    ids=["zone", "out_is_a_file", "now"],
)
def test_bad_options(run: Run, crontab: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str) -> None:
    monkeypatch.chdir(crontab.parent)
    status, stdout, stderr = run("import", "crontab", str(crontab), *argv)
    assert (status, stdout) == (2, "")
    assert stderr.startswith(message) and stderr.count("\n") == 1, stderr


def test_a_missing_file(run: Run, tmp_path: Path) -> None:
    assert run("import", "crontab", str(tmp_path / "nope"), "--zone", "UTC") == (
        2,
        "",
        f"{tmp_path / 'nope'}: no such file\n",
    )


def _schedctl(home: Path, *argv: str, machine_zone: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """schedctl as a person runs it, from a fresh HOME, on a machine set to ``machine_zone``."""
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "TZ": machine_zone}
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("argv", "zone", "said", "gap"),
    [
        (
            [],
            "America/Chicago",
            "America/Chicago (the machine's zone; --zone chooses another)",
            "next gap: Sun 2026-03-08 02:00 CST → 03:00 CDT",
        ),
        (
            ["--zone", "Europe/Berlin"],
            "Europe/Berlin",
            "Europe/Berlin (from --zone)",
            "next gap: Sun 2026-03-29 02:00 CET → 03:00 CEST",
        ),
    ],
    ids=["machine_zone", "another_chosen"],
)
def test_jobs_without_cron_tz_run_in_the_machine_s_zone_unless_another_is_chosen(
    tmp_path: Path, argv: list[str], zone: str, said: str, gap: str
) -> None:
    done = _schedctl(
        tmp_path,
        "import",
        "crontab",
        "--out",
        "specs",
        *NOW,
        *argv,
        machine_zone="America/Chicago",  # the machine this runs on, whatever the test host's zone
        stdin="30 2 * * * /usr/bin/nightly\n",
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert f"  {said}; fixed-time job" in done.stdout
    assert f"  {gap}" in done.stdout  # the side-by-side is the chosen zone's
    assert load_spec(tmp_path / "specs" / "nightly.yaml").time_zone == zone


def test_a_crontab_with_bad_lines_imports_the_good_ones_and_names_every_bad_one(tmp_path: Path) -> None:
    crontab = tmp_path / "crontab.txt"
    crontab.write_text(
        "CRON_TZ=UTC\n61 * * * * /usr/bin/a\n0 4 * * * /usr/bin/good\n@fortnightly /usr/bin/b\n* * * *\n",
        encoding="utf-8",
    )
    done = _schedctl(tmp_path, "import", "crontab", str(crontab), "--out", "specs", *NOW, machine_zone="UTC")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"{crontab}: line 2: minute 61 is out of range 0-59",
        f"{crontab}: line 4: @fortnightly is not a nickname; use one of @yearly, @annually, @monthly, @weekly, "
        "@daily, @midnight, @hourly",
        f"{crontab}: line 5: 4 fields; a job is five time fields (minute hour day-of-month month day-of-week) "
        "and a command",
    ]
    assert "1 job imported into 1 file; 0 lines not imported; 3 lines refused" in done.stdout
    assert [p.name for p in (tmp_path / "specs").iterdir()] == ["good.yaml"]
