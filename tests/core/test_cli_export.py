"""``schedctl export crontab`` end to end: the text to standard output or written whole into a
file, never over one without --overwrite, read back by ``schedctl import crontab`` to the same
rule; a spec cron cannot hold refused in one line, exit 2, nothing written."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from core.spec.files import load_spec
from tests.core.conftest import Run

NOW = ["--now", "2026-03-01T12:00:00Z"]
SPEC = """\
schema: scheduleSpec.v1
scheduleId: backup
revision: 1
title: Nightly backup
timeZone: America/New_York
rule: FREQ=DAILY;BYHOUR=2;BYMINUTE=30
start: 2026-01-01T00:00:00
gapPolicy: SHIFT_FORWARD
foldPolicy: FIRST_ONLY
misfirePolicy: SKIP
overlapPolicy: ALLOW
retry: {maxAttempts: 1}
task:
  argv: [/usr/local/bin/backup.sh, --full]
  env: {PATH: "/usr/local/bin:/usr/bin:/bin"}
"""
CRONTAB = """\
# Exported from schedule backup (revision 1): Nightly backup
# The nearest crontab equivalent; each comment below names what cron does not keep.
# CRON_TZ is read by cronie; Debian's cron ignores it and runs every job on the machine's zone (TZ= only sets \
the job's environment): there, install this on a machine whose zone is America/New_York
CRON_TZ=America/New_York
# not kept: task.timeout PT10M: cron never stops a job (timeout(1) in the command does)
PATH=/usr/local/bin:/usr/bin:/bin
30 2 * * * /usr/local/bin/backup.sh --full
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "backup.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return path


def test_writes_the_crontab_to_standard_output(run: Run, spec: Path) -> None:
    assert run("export", "crontab", str(spec), *NOW) == (0, CRONTAB, "")
    assert run("export", "crontab", str(spec), "--out", "-", *NOW) == (0, CRONTAB, "")


def test_reads_the_spec_from_standard_input(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(SPEC.encode())))
    assert run("export", "crontab", "-", *NOW) == (0, CRONTAB, "")


def test_writes_a_file_whole_and_the_import_reads_it_back(run: Run, spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "backup.cron"
    status, stdout, stderr = run("export", "crontab", str(spec), "--out", str(out), *NOW)
    assert (status, stderr) == (0, "")
    assert stdout == f"wrote {out}: 30 2 * * *; runs at the spec's times\n"
    assert out.read_text(encoding="utf-8") == CRONTAB
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    specs = tmp_path / "back"
    assert run("import", "crontab", str(out), "--out", str(specs), *NOW)[0] == 0
    (written,) = specs.iterdir()
    again = load_spec(written)
    original = load_spec(spec)
    assert (again.rule, again.time_zone) == (original.rule, original.time_zone)
    assert (again.gap_policy, again.fold_policy) == (original.gap_policy, original.fold_policy)
    assert again.task is not None and original.task is not None
    assert (again.task.argv, again.task.env) == (original.task.argv, original.task.env)


def test_says_when_the_crontab_does_not_run_at_the_spec_times(run: Run, spec: Path, tmp_path: Path) -> None:
    spec.write_text(SPEC.replace("gapPolicy: SHIFT_FORWARD", "gapPolicy: SKIP"), encoding="utf-8")
    out = tmp_path / "backup.cron"
    status, stdout, _ = run("export", "crontab", str(spec), "--out", str(out), *NOW)
    assert (status, stdout) == (0, f"wrote {out}: 30 2 * * *; does NOT run at the spec's times: see the comments\n")
    assert "# not kept: gapPolicy SKIP: the spec skips a time the clocks skip;" in out.read_text(encoding="utf-8")


def test_an_existing_file_is_never_replaced_without_overwrite(run: Run, spec: Path, tmp_path: Path) -> None:
    out = tmp_path / "backup.cron"
    out.write_text("mine\n", encoding="utf-8")
    status, stdout, stderr = run("export", "crontab", str(spec), "--out", str(out), *NOW)
    assert (status, stdout, stderr) == (2, "", f"{out}: already exists; give --overwrite, or another --out\n")
    assert out.read_text(encoding="utf-8") == "mine\n"
    assert run("export", "crontab", str(spec), "--out", str(out), "--overwrite", *NOW)[0] == 0
    assert out.read_text(encoding="utf-8") == CRONTAB


REFUSED = [
    (
        "last_day",
        ("rule: FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "rule: FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=2;BYMINUTE=30"),
        "cannot be a crontab line: BYMONTHDAY counted from the month's end (-1 is the last day): cron counts "
        "from the 1st only",
    ),
    (
        "interval",
        (
            "rule: FREQ=DAILY;BYHOUR=2;BYMINUTE=30\nstart: 2026-01-01T00:00:00\ngapPolicy: SHIFT_FORWARD\n"
            "foldPolicy: FIRST_ONLY",
            "kind: interval\nevery: PT90M\nanchor: 2026-01-01T00:00:00Z",
        ),
        "cannot be a crontab line: an interval with an anchor that cron cannot express: every PT1H30M neither "
        "divides an hour nor is whole hours dividing a day, and cron's steps start again every hour and every day",
    ),
]


@pytest.mark.parametrize(("change", "message"), [(c, m) for _, c, m in REFUSED], ids=[i for i, _, _ in REFUSED])
def test_a_spec_cron_cannot_hold_is_one_line_and_writes_nothing(
    run: Run, spec: Path, tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    spec.write_text(SPEC.replace(*change), encoding="utf-8")
    out = tmp_path / "backup.cron"
    status, stdout, stderr = run("export", "crontab", str(spec), "--out", str(out), *NOW)
    assert (status, stdout, stderr) == (2, "", f"{spec}: {message}\n")
    assert not out.exists()
    assert run("export", "crontab", str(spec), *NOW) == (2, "", f"{spec}: {message}\n")


def test_a_dangling_symlink_takes_the_name_and_is_never_written_through(run: Run, spec: Path, tmp_path: Path) -> None:
    out, target = tmp_path / "backup.cron", tmp_path / "elsewhere" / "crontab"
    out.symlink_to(target)
    status, stdout, stderr = run("export", "crontab", str(spec), "--out", str(out), *NOW)
    assert (status, stdout, stderr) == (2, "", f"{out}: already exists; give --overwrite, or another --out\n")
    assert run("export", "crontab", str(spec), "--out", str(out), "--overwrite", *NOW)[0] == 0
    assert not target.exists() and not out.is_symlink() and out.read_text(encoding="utf-8") == CRONTAB


def test_bad_places_to_write_are_one_line(run: Run, spec: Path, tmp_path: Path) -> None:
    status, _, stderr = run("export", "crontab", str(spec), "--out", str(tmp_path), *NOW)
    assert (status, stderr) == (2, f"{tmp_path}: is a folder; give --out a file name\n")
    missing = tmp_path / "nowhere" / "x.cron"
    status, _, stderr = run("export", "crontab", str(spec), "--out", str(missing), *NOW)
    assert (status, stderr) == (2, f"{missing}: no folder {missing.parent} to write it into\n")


def test_an_invalid_spec_is_refused_as_validate_refuses_it(run: Run, spec: Path) -> None:
    spec.write_text(SPEC.replace("timeZone: America/New_York", "timeZone: Mars/Olympus"), encoding="utf-8")
    status, stdout, stderr = run("export", "crontab", str(spec), *NOW)
    assert (status, stdout) == (2, "")
    assert stderr.startswith(f"{spec}") and stderr.count("\n") >= 1 and "Traceback" not in stderr


POLL = """\
schema: scheduleSpec.v1
scheduleId: poll
revision: 2
title: Poll the queue
timeZone: Europe/Berlin
rule: FREQ=MINUTELY;INTERVAL=15
start: 2026-01-01T00:00:00
gapPolicy: SKIP
foldPolicy: BOTH
misfirePolicy: SKIP
exclude: [2026-12-25]
task:
  argv: [/usr/bin/poll, --queue, "jobs 50%"]
  env: {API_TOKEN: {secret: poll-token}}
"""


def test_the_example_in_docs_import_md_is_what_the_export_writes(run: Run, tmp_path: Path) -> None:
    docs = (Path(__file__).parents[2] / "docs" / "import.md").read_text(encoding="utf-8")
    shown = docs.split("$ schedctl export crontab poll.yaml\n", 1)[1].split("```", 1)[0]
    spec = tmp_path / "poll.yaml"
    spec.write_text(POLL, encoding="utf-8")
    assert run("export", "crontab", str(spec), *NOW) == (0, shown, "")
