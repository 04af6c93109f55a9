"""The console examples of README.md and docs/cli.md are what schedctl prints: each chosen block is
run command by command, as a person would type it, from a fresh HOME and folder (with the files the
page shows, ``cat FILE`` blocks among them), and its output compared with the page's."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.core.test_cli_import_systemd import BACKUP_TIMER

ROOT = Path(__file__).resolve().parents[1]
_BLOCK = re.compile(r"^```console\n(.*?)^```", re.M | re.S)
#: ``host:pid`` of the engine that ran an attempt: another on every machine and run.
_WORKER = re.compile(r"\b[\w.-]+:\d+(?=\s+\d+\s+\d{4}-)")


@dataclass(frozen=True)
class Example:
    """A console block of ``page`` (the one whose first command starts with ``first``), the files it
    needs (name: text, or the name of a fenced yaml block of the page to take it from)."""

    page: str
    first: str
    files: dict[str, str] = field(default_factory=dict)


def _blocks(page: str) -> list[list[tuple[str, str]]]:
    """Each console block of ``page`` as ``(command, output)`` pairs."""
    blocks = []
    for body in _BLOCK.findall((ROOT / page).read_text(encoding="utf-8")):
        steps: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
        blocks.append([(command, "".join(f"{line}\n" for line in output)) for command, output in steps])
    return blocks


def _yaml_block(page: str, starts: str) -> str:
    """The first fenced yaml block of ``page`` whose text starts with ``starts``."""
    text = (ROOT / page).read_text(encoding="utf-8")
    return next(b for b in re.findall(r"^```yaml\n(.*?)^```", text, re.M | re.S) if starts in b)


#: The installed tz database's release: a tzdata update changes it, not what the example shows.
_TZDB = re.compile(r"\btzdb \d{4}[a-z]\b")


def _same(text: str) -> str:
    """The text with what differs from machine to machine, run to run, or tzdata to tzdata left out."""
    return re.sub(r" +", " ", _TZDB.sub("tzdb TZDB", _WORKER.sub("HOST:PID", text)))


BACKUP_CRON = """\
# backups
MAILTO=ops@example.com
CRON_TZ=America/New_York
30 2 * * * /usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1
*/15 * * * * /usr/bin/poll
# the report moved to a systemd timer
@reboot /usr/bin/warm-cache
"""
BACKUP_SERVICE = '[Service]\nType=oneshot\nEnvironment="MODE=full"\nExecStart=/usr/bin/backup --mode ${MODE}\n'
_SPEC_HEAD = "schema: scheduleSpec.v1\nrevision: 1\nstart: 2026-01-05T00:00:00\nfoldPolicy: FIRST_ONLY\n"
WEEKLY_REPORT = (
    _SPEC_HEAD
    + """\
scheduleId: weekly-report
timeZone: Europe/Berlin
rule: FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0
gapPolicy: SHIFT_FORWARD
misfirePolicy: CATCH_UP_BOUNDED
maxCatchUp: 1
retry: {maxAttempts: 3}
task: {argv: [/usr/bin/report]}
"""
)
MONTHLY_FIRST_MONDAY = (
    _SPEC_HEAD
    + """\
scheduleId: monthly-first-monday
timeZone: Europe/Berlin
rule: FREQ=MONTHLY;BYDAY=1MO;BYHOUR=9;BYMINUTE=0
gapPolicy: SKIP
task: {argv: [/usr/bin/report]}
"""
)
BACKUP = (
    _SPEC_HEAD
    + """\
scheduleId: backup
timeZone: America/New_York
rule: FREQ=DAILY;BYHOUR=2;BYMINUTE=30
gapPolicy: SHIFT_FORWARD
task: {argv: [/usr/local/bin/backup]}
"""
)
EXAMPLES = [
    Example("README.md", "schedctl preview resources/demo/daily-ops-summary.yaml"),
    Example("README.md", "schedctl preview resources/demo/hourly-fallback.yaml"),
    Example("README.md", "schedctl preview resources/demo/invoice-month-end.yaml"),
    Example("README.md", "schedctl explain resources/demo/mel-sync.yaml"),
    Example("README.md", "schedctl apply send-summary.yaml", {"send-summary.yaml": "scheduleId: send-summary"}),
    Example("README.md", "cat my.crontab"),
    Example("docs/cli.md", "schedctl import crontab backups.cron", {"backups.cron": BACKUP_CRON}),
    Example(
        "docs/cli.md",
        "schedctl import systemd backup.timer poll.timer",
        {
            "backup.timer": BACKUP_TIMER,
            "backup.service": BACKUP_SERVICE,
            "poll.timer": "[Timer]\nOnCalendar=*:0/15\n",
            "poll.service": "[Service]\nExecStart=/usr/bin/poll\n",
            "broken.timer": "[Timer]\nPersistent=true\n",
            "broken.service": "[Service]\nExecStart=/bin/true\n",
        },
    ),
    Example("docs/cli.md", "schedctl db upgrade"),
    Example(
        "docs/cli.md",
        "schedctl export systemd weekly-report.yaml",
        {"weekly-report.yaml": WEEKLY_REPORT, "monthly-first-monday.yaml": MONTHLY_FIRST_MONDAY},
    ),
    Example(
        "docs/cli.md",
        "schedctl export crontab backup.yaml",
        {
            "backup.yaml": BACKUP,
            "last-day.yaml": BACKUP.replace("backup", "last-day").replace("DAILY;", "MONTHLY;BYMONTHDAY=-1;"),
        },
    ),
]


def _example(example: Example) -> list[tuple[str, str]]:
    found = [b for b in _blocks(example.page) if b and b[0][0].startswith(example.first)]
    assert len(found) == 1, f"{example.page}: no one console block starts with {example.first!r}"
    return found[0]


@pytest.mark.parametrize(
    "example", EXAMPLES, ids=[f"{e.page}:{'-'.join(e.first.split()[1:3]).replace('/', '-')}" for e in EXAMPLES]
)
def test_the_example_prints_what_the_page_says(example: Example, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    schedctl = bin_dir / "schedctl"
    schedctl.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m core.cli "$@"\n', encoding="utf-8")
    schedctl.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "resources").symlink_to(ROOT / "resources")
    for name, text in example.files.items():
        (work / name).write_text(_yaml_block(example.page, text) if text.startswith("scheduleId:") else text)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "SCHEDULER_DB_URL": str(work / "ledger.db"),
        "TZ": "UTC",
        "LANG": "C.UTF-8",
    }
    for command, expected in _example(example):
        shown = work / command.split()[-1]
        if command.startswith("cat ") and not shown.exists():  # the page shows a file it then uses
            shown.write_text(expected, encoding="utf-8")
            continue
        done = subprocess.run(
            ["/bin/sh", "-c", f"{command} 2>&1"],
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            timeout=60,
            check=False,
        )
        assert _same(done.stdout) == _same(expected), command
