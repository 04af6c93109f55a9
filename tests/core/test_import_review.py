"""The import as data for the window (``core.importing.sources``, ``core.importing.review``): the jobs
with their specs, words, next runs and side-by-side line, the lines not imported, the file type's
reader, and the specs saved into a folder without replacing a file."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.errors import UserError
from core.importing import sources
from core.importing.review import Review, save_into
from core.importing.sources import ImportFileError, review_files
from core.spec.files import load_spec

#: Before the 2027 spring change in New York (Sun 2027-03-14).
NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
CRONTAB = """\
PATH=/usr/local/bin:/usr/bin
30 2 * * * /usr/local/bin/backup --full
0 9 1,15 * mon /usr/bin/report
@reboot /usr/bin/warm-cache
"""


def review(tmp_path: Path, text: str | bytes = CRONTAB, name: str = "crontab", **kwargs: object) -> Review:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return review_files([path], zone=str(kwargs.pop("zone", "America/New_York")), now=NOW, **kwargs)  # type: ignore[arg-type]


def test_jobs_specs_words_rows_and_the_side_by_side(tmp_path: Path) -> None:
    found = review(tmp_path)
    assert found.source == "cron" and found.needs_zone and found.zone == "America/New_York"
    backup, report = found.jobs
    assert (backup.where, backup.title, backup.zone, backup.zone_given) == (
        "line 2",
        "/usr/local/bin/backup --full",
        "America/New_York",
        True,
    )
    (spec,) = backup.specs
    assert spec.file_name == "backup-full.yaml"
    assert spec.words == "Every day at 02:30"
    assert [r.resolved_utc for r in spec.rows] == [
        "2027-03-02T07:30:00Z",
        "2027-03-03T07:30:00Z",
        "2027-03-04T07:30:00Z",
    ]
    assert spec.text.startswith("# Imported from crontab line 2")
    assert backup.change is not None
    assert backup.change.heading == (
        "Next clock change, Sun 2027-03-14: clocks jump from 02:00 EST to 03:00 EDT (1 h); "
        "runs from 01:00 EST to 04:00 EDT"
    )
    assert backup.change.line == (
        "cron: runs at 03:00 EDT right after the change · Tidemark: runs at 03:00 EDT right after the change · the same"
    )
    assert [s.file_name for s in report.specs] == ["report-monthdays.yaml", "report-weekdays.yaml"]
    assert report.title == "/usr/bin/report" and "two schedules" in report.notes[0]
    assert [(p.where, p.reason) for p in found.problems] == [
        ("line 4", "runs at boot; Tidemark schedules by the clock")
    ]
    assert found.notes == ("line 1: PATH is set in the task env of every job below it",)


def test_a_cron_tz_line_is_the_zone_and_no_zone_is_needed(tmp_path: Path) -> None:
    found = review(tmp_path, "CRON_TZ=Europe/Berlin\n0 9 * * * /usr/bin/hello\n")
    assert not found.needs_zone and found.jobs[0].zone == "Europe/Berlin"


def test_ids_avoid_those_taken(tmp_path: Path) -> None:
    found = review(tmp_path, "CRON_TZ=UTC\n0 9 * * * /usr/bin/hello\n", taken={"hello"})
    assert found.jobs[0].specs[0].file_name == "hello-2.yaml"
    assert "scheduleId: hello-2" in found.jobs[0].specs[0].text


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x7fELF\x00\x01", "crontab: line 1: a NUL byte; this is binary data, not a crontab"),
    ],
    ids=["binary"],
)
def test_a_bad_file_is_one_line_naming_it(tmp_path: Path, data: bytes, message: str) -> None:
    with pytest.raises(ImportFileError) as raised:
        review(tmp_path, data)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_a_timer_is_reviewed_with_its_service_and_what_it_cannot_bring(tmp_path: Path) -> None:
    (tmp_path / "backup.timer").write_text(
        "[Unit]\nDescription=Nightly backup\n[Timer]\nOnCalendar=Mon..Fri 09:00 Europe/Paris\n"
        "Persistent=true\nOnBootSec=5min\n"
    )
    (tmp_path / "backup.service").write_text("[Service]\nExecStart=/usr/local/bin/backup --quiet\n")
    found = review_files([tmp_path / "backup.timer"], zone="UTC", now=NOW)
    assert (found.source, found.files) == ("systemd", ("backup.timer",))
    [job] = found.jobs
    assert (job.source, job.title, job.zone, job.zone_given) == (
        "backup.timer → backup.service",
        "Nightly backup",
        "Europe/Paris",
        False,
    )
    assert [s.imported.file_name for s in job.specs] == ["backup.yaml"]
    assert job.specs[0].imported.spec.task is not None
    assert job.specs[0].imported.spec.task.argv == ["/usr/local/bin/backup", "--quiet"]
    assert job.change is not None and job.change.line.startswith("systemd: ")
    [problem] = found.problems
    assert (problem.where, problem.source) == ("backup.timer line 6", "OnBootSec=5min")
    assert "boot" in problem.reason


def test_the_file_type_chooses_the_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    timer = tmp_path / "backup.timer"
    timer.write_text("[Timer]\nOnCalendar=daily\n")
    crontab = tmp_path / "crontab"
    crontab.write_text(CRONTAB)
    with pytest.raises(ImportFileError, match="one kind of file at a time"):
        review_files([crontab, timer], zone="UTC", now=NOW)
    seen: list[list[str]] = []

    def timers(paths: object, zone: str, now: datetime, taken: object) -> Review:
        seen.append([p.name for p in paths])  # type: ignore[attr-defined]
        return Review("systemd", (), zone, ())

    monkeypatch.setitem(sources.READERS, ".timer", timers)
    assert review_files([timer], zone="UTC", now=NOW).source == "systemd"
    assert seen == [["backup.timer"]]


def test_missing_and_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="gone: no such file"):
        review_files([tmp_path / "gone"], zone="UTC", now=NOW)
    with pytest.raises(UserError, match="is a folder"):
        review_files([tmp_path], zone="UTC", now=NOW)


def test_save_into_never_replaces_a_file(tmp_path: Path) -> None:
    found = review(tmp_path)
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "backup-full.yaml").write_text("mine\n")
    written = save_into(folder, [s for job in found.jobs for s in job.specs])
    assert [p.name for p in written] == ["backup-full-2.yaml", *(s.file_name for s in found.jobs[1].specs)]
    assert (folder / "backup-full.yaml").read_text() == "mine\n"
    assert load_spec(written[0]).schedule_id == "backup-full"
    assert sorted(p.name for p in folder.iterdir()) == sorted(["backup-full.yaml", *(p.name for p in written)])


def test_the_next_gap_and_fold_are_both_shown_with_every_run(tmp_path: Path) -> None:
    found = review(tmp_path, "*/15 * * * * /usr/bin/poll\n")
    (poll,) = found.jobs
    gap, fold = poll.changes
    assert poll.change == gap
    assert gap.heading.startswith("Next clock change, Sun 2027-03-14: clocks jump")
    assert fold.heading.startswith("Next clock change, Sun 2027-11-07: clocks fall back")
    # A */15 job's fold is its point: every run of the repeated hour, both readings, none hidden.
    runs = "runs at 01:00 EDT, 01:15 EDT, 01:30 EDT, 01:45 EDT, 01:00 EST, 01:15 EST, 01:30 EST, 01:45 EST"
    assert fold.line == f"cron: {runs} · Tidemark: {runs} · the same"
    # 03:00 is the job's own time: neither side runs it "right after the change".
    assert "right after" not in gap.line and "more" not in gap.line


def test_a_crontab_with_bad_lines_is_reviewed_with_them_as_problems(tmp_path: Path) -> None:
    found = review(tmp_path, "61 * * * * /usr/bin/a\n0 4 * * * /usr/bin/good\n@reboot /usr/bin/b\n* * * *\n")
    assert [job.where for job in found.jobs] == ["line 2"]
    assert [(p.where, p.source, p.reason) for p in found.problems] == [
        ("line 1", "61 * * * * /usr/bin/a", "minute 61 is out of range 0-59"),
        ("line 3", "@reboot /usr/bin/b", "runs at boot; Tidemark schedules by the clock"),
        (
            "line 4",
            "* * * *",
            "4 fields; a job is five time fields (minute hour day-of-month month day-of-week) and a command",
        ),
    ]
