"""``schedctl apply`` with several files or a folder (a team's workspace): every file is
validated, and everything the ledger would refuse asked, before any is published; then
they are published in short batches, and a spec already published as it is stays
unchanged, so that applying again completes a run cut short (both databases)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import event, func, select
from sqlalchemy.engine import Engine

from core.clock import FixedClock
from core.ledger import open_ledger, publish_many
from core.ledger.db import Ledger
from core.ledger.models import Revision, Schedule
from core.ledger.publish import publish
from core.spec.validation import parse_spec

from . import NOW
from .test_cli_ledger import PY, Session, run

__all__ = ["run"]  # the fixture, shared with the ledger commands' tests

TASK = {"argv": [PY, "-c", "pass"]}


def write_spec(folder: Path, sid: str, revision: int = 1, name: str | None = None, **keys: Any) -> str:
    """A daily spec of ``sid`` in ``folder`` (made if missing), as ``name`` or ``<sid>.yaml``."""
    data: dict[str, Any] = {
        "schema": "scheduleSpec.v1",
        "scheduleId": sid,
        "revision": revision,
        "timeZone": "UTC",
        "rule": "FREQ=DAILY;BYHOUR=2",
        "start": "2026-01-01T00:00:00",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "task": TASK,
        **keys,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{sid}.yaml")
    path.write_text(yaml.safe_dump({k: v for k, v in data.items() if v is not None}, sort_keys=False))
    return str(path)


def published(url: str) -> dict[str, list[int]]:
    """Each schedule's published revision numbers."""
    ledger = open_ledger(url)
    try:
        with ledger.read() as session:
            found: dict[str, list[int]] = {}
            for sid, number in session.execute(select(Revision.schedule_id, Revision.revision).order_by("revision")):
                found.setdefault(sid, []).append(number)
            return found
    finally:
        ledger.close()


def failed(run: Session, *argv: str) -> list[str]:
    """The lines on stderr of a command that exits 2 and prints nothing on stdout."""
    status, out, err = run(*argv)
    assert (status, out) == (2, ""), err
    assert "Traceback" not in err
    return err.splitlines()


def test_several_files_are_published_together(run: Session, tmp_path: Path) -> None:
    first = write_spec(tmp_path, "alpha")
    second = write_spec(tmp_path, "beta", timeZone="Europe/Paris")
    assert run.ok("apply", first, second) == (
        "applied alpha revision 1 (cutover 2026-03-01T12:00:00Z, tzdb 2026f); a new schedule\n"
        "applied beta revision 1 (cutover 2026-03-01T12:00:00Z, tzdb 2026f); a new schedule\n"
        "applied 2 of 2 specs; 0 unchanged\n"
    )
    assert published(run.url) == {"alpha": [1], "beta": [1]}


def test_a_folder_is_read_below_and_hidden_files_are_left_out(run: Session, tmp_path: Path) -> None:
    team = tmp_path / "team"
    write_spec(team, "alpha")
    write_spec(team / "ops", "beta", name="beta.yml")
    write_spec(team / ".drafts", "hidden-folder")
    write_spec(team, "hidden-file", name=".hidden.yaml")
    write_spec(team, "not-yaml", name="notes.txt")
    assert run.ok("apply", str(team)) == (
        f"read 2 spec files from {team}\n"
        "applied alpha revision 1 (cutover 2026-03-01T12:00:00Z, tzdb 2026f); a new schedule\n"
        "applied beta revision 1 (cutover 2026-03-01T12:00:00Z, tzdb 2026f); a new schedule\n"
        "applied 2 of 2 specs; 0 unchanged\n"
    )
    assert published(run.url) == {"alpha": [1], "beta": [1]}


@pytest.mark.parametrize(
    ("bad", "lines"),
    [
        pytest.param(
            {"timeZone": "EST"},
            [
                "{bad}: timeZone: 'EST' is an abbreviation, not a place, and abbreviations are ambiguous; use an "
                "IANA name such as America/New_York",
                "nothing was published: 1 spec of 3 refused",
            ],
            id="invalid_spec",
        ),
        pytest.param(
            {"task": {"argv": ["/no/such/program"]}},
            [
                "{bad}: gamma revision 1: task.argv[0]: '/no/such/program' does not exist",
                "nothing was published: 1 spec of 3 refused",
            ],
            id="refused_by_the_ledger",
        ),
    ],
)
def test_one_bad_file_and_nothing_is_published(
    run: Session, tmp_path: Path, bad: dict[str, Any], lines: list[str]
) -> None:
    team = tmp_path / "team"
    write_spec(team, "alpha")
    write_spec(team, "beta")
    path = write_spec(team, "gamma", **bad)
    said = failed(run, "apply", str(team))
    assert said[0].startswith(f"{path}: ")
    assert said == [line.format(bad=path) for line in lines]
    assert published(run.url) == {}


def test_every_problem_of_every_file_is_listed(run: Session, tmp_path: Path) -> None:
    first = write_spec(tmp_path, "alpha", timeZone="EST", rule="FREQ=DAILY;BYHOUR=25")
    second = write_spec(tmp_path, "beta", revision=0)
    said = failed(run, "apply", first, second)
    assert [line.split(": ")[0] for line in said] == [first, first, second, "nothing was published"]
    assert published(run.url) == {}


def test_two_files_of_one_schedule_are_refused(run: Session, tmp_path: Path) -> None:
    first = write_spec(tmp_path, "alpha")
    second = write_spec(tmp_path, "alpha", revision=2, name="alpha-r2.yaml")
    assert failed(run, "apply", first, second) == [
        f"{second}: scheduleId: alpha is also the id in {first}; one file per schedule",
        "nothing was published: 1 spec of 2 refused",
    ]
    assert published(run.url) == {}


def test_an_empty_folder_is_said(run: Session, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    write_spec(empty / ".drafts", "hidden")
    assert run.refused("apply", str(empty)) == (
        f"schedctl apply: {empty}: no spec files in this folder (*.yaml, *.yml; hidden ones are left out)"
    )


def test_a_workspace_applied_again_publishes_only_what_moved_on(run: Session, tmp_path: Path) -> None:
    team = tmp_path / "team"
    write_spec(team, "alpha")
    write_spec(team, "beta")
    run.ok("apply", str(team))
    # A day later, with another tz database cutover time: the same files are unchanged.
    assert run.ok("apply", str(team), now="2026-03-02T12:00:00Z").splitlines()[1:] == [
        "unchanged alpha revision 1 (already published as it is)",
        "unchanged beta revision 1 (already published as it is)",
        "applied 0 of 2 specs; 2 unchanged",
    ]
    write_spec(team, "beta", revision=2, rule="FREQ=DAILY;BYHOUR=3")
    assert run.ok("apply", str(team), now="2026-03-02T12:00:00Z").splitlines()[1:] == [
        "unchanged alpha revision 1 (already published as it is)",
        "applied beta revision 2 (cutover 2026-03-02T12:00:00Z, tzdb 2026f); cancelled 0 occurrences of earlier "
        "revisions",
        "applied 1 of 2 specs; 1 unchanged",
    ]
    assert published(run.url) == {"alpha": [1], "beta": [1, 2]}


@pytest.fixture
def statements() -> Iterator[dict[str, int]]:
    """Statements and commits sent to any database while the test runs."""
    seen = {"statements": 0, "commits": 0}

    def executed(*_args: Any) -> None:
        seen["statements"] += 1

    def committed(*_args: Any) -> None:
        seen["commits"] += 1

    event.listen(Engine, "before_cursor_execute", executed)
    event.listen(Engine, "commit", committed)
    yield seen
    event.remove(Engine, "before_cursor_execute", executed)
    event.remove(Engine, "commit", committed)


def test_a_folder_of_500_specs_is_published_in_short_batches(
    run: Session, tmp_path: Path, statements: dict[str, int]
) -> None:
    """Counted against one spec applied the same way, in the same run: one write
    transaction per 25 specs, and a handful of statements per spec."""
    one = write_spec(tmp_path / "one", "first")
    team = tmp_path / "team"
    for i in range(500):
        write_spec(team / f"group-{i % 10}", f"s-{i:03d}")
    run.ok("apply", one)  # the ledger is made and migrated before counting
    statements.update(statements=0, commits=0)
    run.ok("apply", write_spec(tmp_path / "one", "second"))
    single = dict(statements)
    statements.update(statements=0, commits=0)
    out = run.ok("apply", str(team))
    assert out.splitlines()[-1] == "applied 500 of 500 specs; 0 unchanged"
    batches = 500 // publish_many.BATCH
    assert statements["commits"] - single["commits"] == batches - 1
    # its schedule, revision, cancellations and event, and a few per batch: none that grows with the folder
    assert statements["statements"] - single["statements"] <= 8 * 500 + 5 * batches, (statements, single)
    statements.update(statements=0, commits=0)
    again = run.ok("apply", str(team))
    assert again.splitlines()[-1] == "applied 0 of 500 specs; 500 unchanged"
    assert statements["statements"] <= single["statements"] + 2, (statements, single)
    ledger = open_ledger(run.url)
    try:
        with ledger.read() as session:
            assert session.scalar(select(func.count()).select_from(Schedule)) == 502
            assert session.scalar(select(func.count()).select_from(Revision)) == 502
    finally:
        ledger.close()


def test_a_crash_part_way_is_completed_by_applying_again(
    run: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of two; the process dies while publishing the fourth spec: the first batch
    stays, the second is rolled back, and the same command publishes the rest."""
    team = tmp_path / "team"
    for i in range(6):
        write_spec(team, f"s-{i}")
    monkeypatch.setattr(publish_many, "BATCH", 2)
    real = publish_many.publish
    calls = [0]

    def dies_at_the_fourth(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 4:
            raise SystemExit(137)  # as if killed: no line, no clean-up of ours
        return real(*args, **kwargs)

    monkeypatch.setattr(publish_many, "publish", dies_at_the_fourth)
    with pytest.raises(SystemExit):
        run("apply", str(team))
    assert published(run.url) == {"s-0": [1], "s-1": [1]}
    assert run.ok("apply", str(team)).splitlines()[1:] == [
        "unchanged s-0 revision 1 (already published as it is)",
        "unchanged s-1 revision 1 (already published as it is)",
        *(f"applied s-{i} revision 1 (cutover 2026-03-01T12:00:00Z, tzdb 2026f); a new schedule" for i in range(2, 6)),
        "applied 4 of 6 specs; 2 unchanged",
    ]


def test_another_publisher_in_between_stops_the_run_and_says_so(
    run: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Revision 1 of s-3 is published by someone else after the check: the batch holding it
    rolls back, what was published stays, and the refusal names the file."""
    team = tmp_path / "team"
    paths = [write_spec(team, f"s-{i}") for i in range(4)]
    monkeypatch.setattr(publish_many, "BATCH", 2)
    real = Ledger.write
    batches = [0]

    @contextmanager
    def someone_else_first(ledger: Ledger, actor: Any = None) -> Iterator[Any]:
        batches[0] += 1
        if batches[0] == 2:
            with real(ledger) as session:
                publish(session, parse_spec(yaml.safe_load(Path(paths[3]).read_text())), FixedClock(NOW))
        with real(ledger, actor) as session:
            yield session

    monkeypatch.setattr(Ledger, "write", someone_else_first)
    status, out, err = run("apply", str(team))
    assert status == 2
    assert out.splitlines()[1:] == [
        f"applied s-{i} revision 1 (cutover 2026-03-01T12:00:00Z, tzdb 2026f); a new schedule" for i in (0, 1)
    ]
    assert err.splitlines() == [
        f"{paths[3]}: s-3 revision 1: revision 1 is already published; publish revision 2 or higher",
        "published 2 of 4 specs, then stopped; apply them again once that is fixed (those published are then "
        "unchanged)",
    ]
    assert published(run.url) == {"s-0": [1], "s-1": [1], "s-3": [1]}
