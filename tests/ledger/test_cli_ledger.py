"""``schedctl`` against a ledger (docs/contract.md §5): apply, schedules, gates, the engine,
run-now, backfill, ledger, attempts, reconcile, db upgrade and drift, in process
with a frozen ``--now``, on SQLite and on PostgreSQL."""

from __future__ import annotations

import io
import json
import os
import platform
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import create_engine, select, text, update

from core import cli
from core.cli import engine_commands
from core.ledger import open_ledger
from core.ledger.models import Occurrence, Revision, Schedule
from core.ledger.publish import publish
from core.ledger.queries import list_schedules
from core.ledger.states import ScheduleState
from core.render import ledger_table
from core.time.zones import tzdb_version
from core.version import tidemark_version

from . import spec, utc

PY = sys.executable
SECRET = "tok-s3cret-9f2c"
SID = "daily-ops-summary"
ROW_KEYS = [
    "occurrenceId",
    "logicalSlotId",
    "scheduleId",
    "revision",
    "nominalLocal",
    "foldOrdinal",
    "resolvedUtc",
    "state",
    "reason",
    "attempts",
]
ATTEMPT_KEYS = [
    "attemptId",
    "attemptNumber",
    "claimGeneration",
    "workerHost",
    "workerPid",
    "executionEpoch",
    "startedUtc",
    "finishedUtc",
    "exitStatus",
    "errorClass",
    "inputDigest",
    "outcome",
    "stdoutTail",
    "stderrTail",
]
PRINT_ID = "import os; print('sent', os.environ['SCHED_OCCURRENCE_ID'])"
KILL_SELF = "import os, signal; print('about to die', flush=True); os.kill(os.getpid(), signal.SIGKILL)"


class Session:
    """Runs schedctl in process against one ledger and keeps everything it printed."""

    def __init__(self, url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        self.url = url
        self.capsys = capsys
        self.tmp_path = tmp_path
        self.printed: list[str] = []

    def __call__(self, *argv: str, now: str | None = "2026-03-01T12:00:00Z", db: bool = True) -> tuple[int, str, str]:
        args = list(argv)
        if db:
            args += ["--db", self.url]
        if now is not None:
            args += ["--now", now]
        status = cli.main(args)
        out, err = self.capsys.readouterr()
        self.printed += [out, err]
        return status, out, err

    def ok(self, *argv: str, now: str | None = "2026-03-01T12:00:00Z") -> str:
        status, out, err = self(*argv, now=now)
        assert (status, err) == (0, ""), err
        return out

    def refused(self, *argv: str, now: str | None = "2026-03-01T12:00:00Z") -> str:
        """The one line on stderr of a command that exits 2 and prints nothing on stdout."""
        status, out, err = self(*argv, now=now)
        assert (status, out) == (2, "")
        assert len(err.splitlines()) == 1, err
        assert "Traceback" not in err
        return err.rstrip("\n")

    def spec(self, revision: int = 1, script: str = PRINT_ID, name: str | None = None, **keys: Any) -> str:
        """A YAML spec file: the daily 02:30 New York schedule with a Python task."""
        data: dict[str, Any] = {
            "schema": "scheduleSpec.v1",
            "scheduleId": SID,
            "revision": revision,
            "timeZone": "America/New_York",
            "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
            "start": "2026-01-01T00:00:00",
            "gapPolicy": "SKIP",
            "foldPolicy": "FIRST_ONLY",
            "horizon": "P3D",
            "task": {"argv": [PY, "-c", script], "env": {"DOOR_PIN": SECRET}, "effect": "non_idempotent"},
        }
        for key, value in keys.items():
            if value is None:
                data.pop(key, None)
            else:
                data[key] = value
        path = self.tmp_path / (name or f"{SID}-r{revision}.yaml")
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return str(path)

    def rows(self, *filters: str, now: str | None = "2026-03-01T12:00:00Z") -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = json.loads(self.ok("ledger", "--format", "json", *filters, now=now))[
            "occurrences"
        ]
        return found


@pytest.fixture
def run(ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Iterator[Session]:
    session = Session(ledger_url, capsys, tmp_path)
    yield session
    # Whatever a command printed, it never printed a task's environment.
    assert not any(SECRET in text for text in session.printed)


def by_nominal(rows: list[dict[str, Any]]) -> dict[str, str]:
    return {r["nominalLocal"]: r["state"] for r in rows if r["state"] != "CANCELLED"}


# --- a whole session ------------------------------------------------------------------


def test_a_whole_session(run: Session) -> None:
    assert run.ok("apply", run.spec()) == (
        "applied daily-ops-summary revision 1 (cutover 2026-03-01T12:00:00Z, tzdb 2026f); a new schedule\n"
    )
    assert run.ok("engine", "run", "--once", now="2026-03-02T07:30:10Z") == (
        "pass at 2026-03-02T07:30:10Z: materialized 5, promoted 1, expired 0, recovered 0, "
        "started 1 (daily-ops-summary), skipped for overlap 0; outcomes: SUCCEEDED 1 (daily-ops-summary)\n"
    )

    rows = run.rows()
    assert [list(r)[: len(ROW_KEYS)] for r in rows] == [ROW_KEYS] * 5  # the horizon, 3 days, and a chunk of 1
    first = rows[0]
    assert {k: first[k] for k in ROW_KEYS if k not in ("occurrenceId", "logicalSlotId")} == {
        "scheduleId": SID,
        "revision": 1,
        "nominalLocal": "2026-03-02T02:30:00",
        "foldOrdinal": 0,
        "resolvedUtc": "2026-03-02T07:30:00Z",
        "state": "SUCCEEDED",
        "reason": "exited with status 0",
        "attempts": 1,
    }
    assert first["occurrenceId"].startswith("occ-") and first["logicalSlotId"].startswith("slot-")
    assert [r["state"] for r in rows[1:]] == ["PLANNED"] * 4

    attempts = json.loads(run.ok("attempts", first["occurrenceId"], "--format", "json"))
    assert (attempts["occurrenceId"], attempts["state"]) == (first["occurrenceId"], "SUCCEEDED")
    (attempt,) = attempts["attempts"]
    assert list(attempt) == ATTEMPT_KEYS
    assert {k: attempt[k] for k in ("attemptNumber", "claimGeneration", "executionEpoch", "exitStatus")} == {
        "attemptNumber": 1,
        "claimGeneration": 1,
        "executionEpoch": 1,
        "exitStatus": 0,
    }
    assert (attempt["errorClass"], attempt["outcome"]) == (None, "SUCCEEDED")
    assert attempt["startedUtc"] == attempt["finishedUtc"] == "2026-03-02T07:30:10Z"
    assert attempt["workerPid"] == os.getpid() and len(attempt["inputDigest"]) == 64
    assert attempt["stdoutTail"] == f"sent {first['occurrenceId']}\n"

    schedules = json.loads(run.ok("schedules", "--format", "json", now="2026-03-02T08:00:00Z"))
    assert schedules == {
        "schedules": [
            {
                "scheduleId": SID,
                "title": None,
                "state": "active",
                "revision": 1,
                "timeZone": "America/New_York",
                "kind": "calendar",
                "nextDueLocal": "2026-03-03T02:30:00-05:00",
                "nextDueUtc": "2026-03-03T07:30:00Z",
                "counts": {"PLANNED": 4, "SUCCEEDED": 1},
                "uncountedRanges": 0,
                "note": None,
                "waiting": None,
                "held": None,
                "tzdbVersion": tzdb_version(),
                "engineVersion": tidemark_version(),
            }
        ]
    }
    assert run.ok("schedules").splitlines() == [
        "Schedule           State   Rev  Zone              Next due (local)         Next due (UTC)        Occurrences",
        "daily-ops-summary  active  1    America/New_York  2026-03-03 02:30:00 EST  2026-03-03 07:30:00Z  "
        "PLANNED 4 · SUCCEEDED 1",
    ]

    # Revision 2 kills itself: a non-idempotent task whose outcome is lost.
    assert run.ok("apply", run.spec(2, KILL_SELF), now="2026-03-02T12:00:00Z") == (
        "applied daily-ops-summary revision 2 (cutover 2026-03-02T12:00:00Z, tzdb 2026f); "
        "cancelled 4 occurrences of earlier revisions\n"
    )
    assert run.ok("engine", "run", "--once", now="2026-03-03T07:30:05Z") == (
        "pass at 2026-03-03T07:30:05Z: materialized 5, promoted 1, expired 0, recovered 0, "
        "started 1 (daily-ops-summary), skipped for overlap 0; outcomes: UNKNOWN_EFFECT 1 (daily-ops-summary)\n"
    )
    (unknown,) = run.rows("--state", "UNKNOWN_EFFECT")
    assert (unknown["revision"], unknown["nominalLocal"], unknown["attempts"]) == (2, "2026-03-03T02:30:00", 1)
    assert unknown["reason"] == (
        "the attempt was killed by a signal; the task is non_idempotent and has no verify probe: a person must decide"
    )
    assert len(run.rows("--state", "cancelled")) == 4

    table = run.ok("attempts", unknown["occurrenceId"]).splitlines()
    assert table[0] == f"{unknown['occurrenceId']} · {SID} revision 2 · 2026-03-03T02:30:00 · UNKNOWN_EFFECT"
    assert table[1].split() == list(ledger_table.ATTEMPT_HEADERS)
    assert table[2].split()[:4] == ["1", "1", f"{os.uname().nodename}:{os.getpid()}", "1"]
    assert table[2].split()[-4:-1] == ["—", "signal", table[2].split()[-2]]
    assert table[2].endswith("UNKNOWN_EFFECT")
    assert table[3:] == ["    stdout: about to die"]

    assert run.ok(
        "reconcile", unknown["occurrenceId"], "--happened", "--note", "the mail went out", now="2026-03-03T09:00:00Z"
    ) == (f"{unknown['occurrenceId']}: UNKNOWN_EFFECT → SUCCEEDED (a person said it happened)\n")
    (done,) = [r for r in run.rows() if r["occurrenceId"] == unknown["occurrenceId"]]
    assert (done["state"], done["reason"]) == ("SUCCEEDED", "reconciled by a person: happened (the mail went out)")
    assert run.refused("reconcile", unknown["occurrenceId"], "--abandon") == (
        f"schedctl reconcile: {unknown['occurrenceId']} is SUCCEEDED, not UNKNOWN_EFFECT; "
        "only an unknown effect needs reconciling"
    )


def test_the_engine_command_keeps_few_malloc_arenas(run: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    """`engine run` limits glibc's malloc arenas before its first pass (each worker thread
    would keep its own); where there is no glibc, the limit does nothing and says so."""
    asked: list[int] = []
    monkeypatch.setattr(engine_commands, "fewer_malloc_arenas", lambda arenas=2: bool(asked.append(arenas)))
    run.ok("apply", run.spec())
    run.ok("engine", "run", "--once", now="2026-03-02T07:30:10Z")
    assert asked == [2] == [engine_commands.ENGINE_MALLOC_ARENAS]
    monkeypatch.undo()
    assert engine_commands.fewer_malloc_arenas() is (platform.libc_ver()[0] == "glibc")


def test_ledger_table_in_position_order_with_a_limit(run: Session) -> None:
    run.ok("apply", run.spec())
    run.ok("engine", "run", "--once", now="2026-03-02T07:30:10Z")
    lines = run.ok("ledger", "--limit", "2", "--schedule", SID).splitlines()
    assert lines[0].split() == ["Occurrence", "Schedule", "Rev", "Nominal", "local", "UTC", "State", "Att", "Why"]
    assert [line.split()[3:8] for line in lines[1:3]] == [
        ["2026-03-02", "02:30:00", "2026-03-02", "07:30:00Z", "SUCCEEDED"],
        ["2026-03-03", "02:30:00", "2026-03-03", "07:30:00Z", "PLANNED"],
    ]
    assert lines[3:] == ["… the first 2 of 5 in position order; raise --limit to see more"]
    assert [r["nominalLocal"] for r in run.rows("--state", "planned,succeeded")] == [
        "2026-03-02T02:30:00",
        "2026-03-03T02:30:00",
        "2026-03-04T02:30:00",
        "2026-03-05T02:30:00",
        "2026-03-06T02:30:00",
    ]
    assert run.rows("--state", "FAILED") == []
    assert run.ok("ledger", "--state", "FAILED") == "No occurrences match.\n"


def test_db_url_from_the_environment(run: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cli.DB_ENV, run.url)
    status, out, err = run("apply", run.spec(), db=False)
    assert (status, err) == (0, "")
    assert out.startswith("applied daily-ops-summary revision 1")
    assert run("schedules", "--format", "json", db=False)[1].count(SID) == 1


# --- apply ----------------------------------------------------------------------------


def test_the_revision_must_grow(run: Session) -> None:
    run.ok("apply", run.spec(2))
    same = run.spec(2, name="same.yaml")
    assert run.ok("apply", same, now="2026-03-02T12:00:00Z") == (
        "unchanged daily-ops-summary revision 2 (already published as it is)\n"
    )
    path = run.spec(2, name="again.yaml", horizon="P4D")
    assert run.refused("apply", path) == (
        f"{path}: daily-ops-summary revision 2: revision 2 is already published; publish revision 3 or higher"
    )
    older = run.spec(1)
    assert run.refused("apply", older) == (
        f"{older}: daily-ops-summary revision 1: revision 1 is older than the published revision 2; "
        "publish revision 3 or higher"
    )


def test_apply_needs_a_task_and_its_program(run: Session, tmp_path: Path) -> None:
    no_task = run.spec(task=None)
    assert run.refused("apply", no_task) == (
        f"{no_task}: daily-ops-summary revision 1: task: required to publish to a ledger "
        "(validate and preview work without it)"
    )
    missing = tmp_path / "no-such-program"
    no_program = run.spec(task={"argv": [str(missing)]}, name="missing.yaml")
    assert run.refused("apply", no_program) == (
        f"{no_program}: daily-ops-summary revision 1: task.argv[0]: '{missing}' does not exist"
    )
    invalid = run.spec(timeZone="EST", name="invalid.yaml")
    assert run.refused("apply", invalid).startswith(f"{invalid}: timeZone: 'EST' is an abbreviation")
    assert json.loads(run.ok("schedules", "--format", "json")) == {"schedules": []}


def test_apply_records_the_file_it_published(run: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    """The revision remembers its spec file (absolute, on this host); standard input has none to remember."""
    path = Path(run.spec())
    monkeypatch.chdir(path.parent)
    run.ok("apply", path.name)  # a relative name is recorded as the absolute path
    monkeypatch.setattr("sys.stdin", io.StringIO(Path(run.spec(2)).read_text()))
    run.ok("apply", "-")
    with open_ledger(run.url) as ledger, ledger.read() as session:
        [summary] = list_schedules(session)
        sources = {r.revision: (r.source_path, r.source_host) for r in session.scalars(select(Revision))}
    assert sources == {1: (str(path.resolve()), socket.gethostname()), 2: (None, None)}
    assert summary.source_path is None  # the active revision came from standard input


def test_schedules_shows_the_next_run_before_any_engine_pass(run: Session) -> None:
    """Just published, nothing materialized: the next run comes from the revision itself."""
    run.ok("apply", run.spec(), now="2026-03-02T08:00:00Z")
    [row] = json.loads(run.ok("schedules", "--format", "json", now="2026-03-02T08:00:00Z"))["schedules"]
    assert (row["nextDueUtc"], row["counts"]) == ("2026-03-03T07:30:00Z", {})


def test_json_names_the_tidemark_that_computed_each_row_beside_its_tzdb(run: Session) -> None:
    run.ok("apply", run.spec(), now="2026-03-01T12:00:00Z")
    run.ok("engine", "run", "--once", now="2026-03-01T12:00:00Z")
    [schedule] = json.loads(run.ok("schedules", "--format", "json", now="2026-03-01T12:00:00Z"))["schedules"]
    rows = run.rows()
    assert rows and {(r["tzdbVersion"], r["engineVersion"]) for r in rows} == {(tzdb_version(), tidemark_version())}
    assert (schedule["tzdbVersion"], schedule["engineVersion"]) == (tzdb_version(), tidemark_version())
    assert list(rows[0])[-2:] == ["tzdbVersion", "engineVersion"]


# --- gates ----------------------------------------------------------------------------


def test_pause_resume_disable(run: Session) -> None:
    run.ok("apply", run.spec())
    assert run.ok("pause", SID, "--note", "mail server upgrade") == (
        "paused daily-ops-summary (was active): mail server upgrade\n"
    )
    assert run.ok("pause", SID) == "daily-ops-summary is already paused\n"
    assert json.loads(run.ok("schedules", "--format", "json"))["schedules"][0]["note"] == "mail server upgrade"
    assert run.ok("resume", SID) == "resumed daily-ops-summary (was paused)\n"
    assert run.ok("disable", SID) == "disabled daily-ops-summary (was active)\n"
    assert run.refused("pause", SID) == (
        "schedctl pause: daily-ops-summary: the schedule is disabled; resume it before pausing it"
    )
    assert run.refused("run-now", SID) == "schedctl run-now: daily-ops-summary is disabled; resume it first"
    assert run.ok("resume", SID, "--note", "done") == "resumed daily-ops-summary (was disabled): done\n"
    assert run.refused("pause", "no-such") == (
        "schedctl pause: no-such: no such schedule in this ledger; publish it with schedctl apply"
    )


# --- run-now, backfill, fence ---------------------------------------------------------


def test_run_now(run: Session) -> None:
    run.ok("apply", run.spec(script="import sys; print('\\x1b[31mred'); sys.exit(0)"))
    occurrence_id = run.ok("run-now", SID, "--note", "asked by ops", now="2026-03-01T15:00:00Z").strip()
    assert occurrence_id.startswith("occ-") and len(occurrence_id) == 36
    (row,) = run.rows("--state", "DUE")
    assert {k: row[k] for k in ("occurrenceId", "nominalLocal", "resolvedUtc", "reason", "kind")} == {
        "occurrenceId": occurrence_id,
        "nominalLocal": "2026-03-01T10:00:00",
        "resolvedUtc": "2026-03-01T15:00:00Z",
        "reason": "run now by a person (asked by ops)",
        "kind": "manual",
    }
    run.ok("engine", "run", "--once", now="2026-03-01T15:00:01Z")
    assert [r["state"] for r in run.rows() if r["occurrenceId"] == occurrence_id] == ["SUCCEEDED"]
    # A task's output cannot drive the terminal: control characters are shown escaped.
    assert "    stdout: \\x1b[31mred" in run.ok("attempts", occurrence_id).splitlines()
    assert run.refused("run-now", "no-such") == (
        "schedctl run-now: no-such: no such schedule in this ledger; publish it with schedctl apply"
    )


def test_backfill_runs_what_never_ran(run: Session) -> None:
    run.ok("apply", run.spec(misfirePolicy="SKIP", maxCatchUp=None))
    run.ok("engine", "run", "--once", now="2026-03-02T07:30:10Z")
    out = run.ok("engine", "run", "--once", now="2026-03-05T12:00:00Z")
    assert "expired 3" in out
    assert by_nominal(run.rows()) == {
        "2026-03-02T02:30:00": "SUCCEEDED",
        "2026-03-03T02:30:00": "MISFIRE_EXPIRED",
        "2026-03-04T02:30:00": "MISFIRE_EXPIRED",
        "2026-03-05T02:30:00": "MISFIRE_EXPIRED",
        "2026-03-06T02:30:00": "PLANNED",
        "2026-03-07T02:30:00": "PLANNED",
        "2026-03-08T02:30:00": "SKIPPED_GAP",
        "2026-03-09T02:30:00": "PLANNED",  # the horizon (3 days) and a chunk beyond it (1 day)
    }
    by_id = {r["nominalLocal"]: r["occurrenceId"] for r in run.rows() if r["kind"] == "scheduled"}
    out = run.ok(
        "backfill",
        SID,
        "--from",
        "2026-03-02",
        "--to",
        "2026-03-05",
        "--note",
        "mail outage",
        now="2026-03-05T12:00:00Z",
    )
    assert out.splitlines() == [
        "backfill of daily-ops-summary from 2026-03-02T05:00:00Z to 2026-03-05T05:00:00Z: created 2 occurrences "
        "(due now; the engine runs them oldest first); left 1 alone:",
        f"  {by_id['2026-03-02T02:30:00']}: SUCCEEDED: not run again",
    ]
    backfills = [r for r in run.rows() if r["kind"] == "backfill"]
    assert [(r["nominalLocal"], r["state"], r["reason"]) for r in backfills] == [
        (
            "2026-03-03T02:30:00",
            "DUE",
            f"backfill of {by_id['2026-03-03T02:30:00']} (2026-03-03T02:30:00): mail outage",
        ),
        (
            "2026-03-04T02:30:00",
            "DUE",
            f"backfill of {by_id['2026-03-04T02:30:00']} (2026-03-04T02:30:00): mail outage",
        ),
    ]
    assert run.ok("engine", "run", "--once", now="2026-03-05T12:00:05Z").endswith(
        "outcomes: SUCCEEDED 2 (daily-ops-summary 2)\n"
    )
    assert run.refused("backfill", SID, "--from", "2026-03-05", "--to", "2026-03-09", now="2026-03-05T12:00:00Z") == (
        "schedctl backfill: --to 2026-03-09T04:00:00Z is in the future; a backfill runs a past range"
    )
    assert run.refused("backfill", SID, "--from", "2026-03-02") == (
        "schedctl backfill: the following arguments are required: --to (see schedctl backfill --help)"
    )


def test_fence_bumps_the_epoch(run: Session) -> None:
    run.ok("apply", run.spec())  # fencing needs a ledger: it creates none
    assert run.ok("engine", "fence", "--note", "old box died") == (
        "fenced the ledger: execution epoch is now 2; claims of earlier epochs are void\n"
    )
    assert run.ok("engine", "fence") == (
        "fenced the ledger: execution epoch is now 3; claims of earlier epochs are void\n"
    )


# --- db upgrade and drift -------------------------------------------------------------


def test_db_upgrade(run: Session) -> None:
    expected = "ledger schema at revision 0014 (the newest this Tidemark knows)\n"
    assert run.ok("db", "upgrade") == expected
    assert run.ok("db", "upgrade") == expected


def test_drift(run: Session) -> None:
    run.ok("apply", run.spec())
    run.ok("engine", "run", "--once", now="2026-03-01T12:00:00Z")
    assert run.ok("drift") == ("no drift: every future occurrence keeps its instant under the installed tzdb 2026f\n")
    # Pretend an older tz database had put 03-03 an hour later.
    rows = {r["nominalLocal"]: r["occurrenceId"] for r in run.rows()}
    moved = rows["2026-03-03T02:30:00"]
    engine = create_engine(run.url)
    try:
        with engine.begin() as conn:
            conn.execute(update(Occurrence).values(tzdb_version="2025a"))
            conn.execute(
                update(Occurrence)
                .where(Occurrence.occurrence_id == moved)
                .values(resolved_utc=utc("2026-03-03T08:30:00Z"))
            )
    finally:
        engine.dispose()
    assert run.ok("drift", "--schedule", SID).splitlines() == [
        "1 future occurrence would move under the installed tzdb 2026f:",
        f"  {moved} daily-ops-summary revision 1 2026-03-03T02:30:00#0: "
        "2026-03-03T08:30:00Z (tzdb 2025a) → 2026-03-03T07:30:00Z (SCHEDULED)",
        "publish a new revision to adopt them; materialized instants are never rewritten",
    ]
    assert run.refused("drift", "--schedule", "no-such") == (
        "schedctl drift: no-such: no such schedule in this ledger; publish it with schedctl apply"
    )


# --- bad input: exit 2, one line ------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(
            ["reconcile", "occ-x"],
            "schedctl reconcile: one of the arguments --happened --not-happened --abandon is required "
            "(see schedctl reconcile --help)",
            id="reconcile_without_a_decision",
        ),
        pytest.param(
            ["reconcile", "occ-x", "--happened", "--abandon"],
            "schedctl reconcile: argument --abandon: not allowed with argument --happened "
            "(see schedctl reconcile --help)",
            id="reconcile_with_two_decisions",
        ),
        pytest.param(
            ["reconcile", "occ-x", "--happened"],
            "schedctl reconcile: occ-x: no such occurrence in this ledger",
            id="reconcile_unknown_occurrence",
        ),
        pytest.param(
            ["engine", "run"],
            "schedctl engine run: --now: only with --once (a running engine follows the real clock)",
            id="now_without_once",
        ),
        pytest.param(
            ["engine", "run", "--once", "--metrics-port", "9100"],
            "schedctl engine run: --metrics-port: only for a running engine (without --once)",
            id="metrics_with_once",
        ),
        pytest.param(
            ["ledger", "--state", "SUCCEEDED,DONE"],
            "schedctl ledger: --state: unknown state 'DONE'; the states are PLANNED, DUE, DISPATCHING, RUNNING, "
            "SUCCEEDED, RETRY_WAIT, FAILED, UNKNOWN_EFFECT, SKIPPED_GAP, SKIPPED_FOLD, SKIPPED_DUPLICATE, "
            "SKIPPED_OVERLAP, EXCLUDED, MISFIRE_EXPIRED, CANCELLED",
            id="unknown_state",
        ),
        pytest.param(
            ["ledger", "--limit", "0"],
            "schedctl ledger: argument --limit: must be at least 1, got 0 (see schedctl ledger --help)",
            id="limit_zero",
        ),
        pytest.param(
            ["ledger", "--schedule", "no-such"],
            "schedctl ledger: no-such: no such schedule in this ledger; publish it with schedctl apply",
            id="ledger_unknown_schedule",
        ),
        pytest.param(
            ["attempts", "occ-x"],
            "schedctl attempts: occ-x: no such occurrence in this ledger",
            id="attempts_unknown_occurrence",
        ),
        pytest.param(
            ["schedules", "--format", "csv"],
            "schedctl schedules: argument --format: invalid choice: 'csv' (choose from 'table', 'json') "
            "(see schedctl schedules --help)",
            id="schedules_csv",
        ),
    ],
)
def test_bad_input_is_one_line(run: Session, argv: list[str], expected: str) -> None:
    run.ok("db", "upgrade")  # a ledger, empty: commands that need one create none
    assert run.refused(*argv) == expected


def test_a_bad_now_is_one_line(run: Session) -> None:
    assert run.refused("engine", "fence", now="yesterday") == (
        "schedctl engine fence: --now: 'yesterday' is not a date-time; give an instant such as "
        "2026-03-08T07:00:00Z, or a local date-time or date such as 2026-03-08T02:30 or 2026-03-08"
    )


def test_a_locked_sqlite_ledger(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    path = tmp_path / "ledger.db"
    assert cli.main(["db", "upgrade", "--db", str(path)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(cli.ledger_access, "LOCK_WAIT_SECONDS", 0.1)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another program in the middle of a write
        status = cli.main(["schedules", "--db", str(path)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        f"schedctl schedules: {path}: the ledger is locked by another program (database is locked); "
        "try again when it has finished, or stop the other engine"
    ]


@pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)
def test_a_pause_behind_a_stuck_writer_on_postgresql_is_refused_not_left_hanging(
    ledger_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """Another client holds the ledger's write lock in an open transaction (a program stopped
    mid-write): the pause waits its lock wait, says so in one line and changes nothing."""
    from core.ledger.db import WRITE_LOCK_KEY

    with open_ledger(ledger_url) as ledger, ledger.write() as session:
        publish(session, spec(), ledger.clock)
    monkeypatch.setattr(cli.ledger_access, "LOCK_WAIT_SECONDS", 0.2)
    holder = create_engine(ledger_url)
    try:
        with holder.connect() as connection, connection.begin():
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": WRITE_LOCK_KEY})
            status = cli.main(["pause", "daily-ops-summary", "--db", ledger_url])
    finally:
        holder.dispose()
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    [line] = err.splitlines()
    assert line.startswith("schedctl pause: ") and "the ledger is locked by another program (" in line
    assert "lock timeout" in line
    with open_ledger(ledger_url) as ledger, ledger.read() as session:
        assert session.scalar(select(Schedule.state).where(Schedule.id == "daily-ops-summary")) is ScheduleState.ACTIVE


# --- the engine as a service ----------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_engine_run_stops_cleanly_on_a_signal(ledger_url: str, sig: signal.Signals) -> None:
    proc = subprocess.Popen(
        # --no-notify: without a session bus, that would be one line on stderr (test_service_notices.py).
        [PY, "-m", "core.cli", "engine", "run", "--db", ledger_url, "--poll", "0.1", "--no-notify"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("engine ") and first.endswith("stop it with Ctrl-C or SIGTERM\n")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, err) == (0, "")
    assert out.endswith("engine stopped\n")


def test_metrics_port_serves_while_the_engine_runs(ledger_url: str) -> None:
    import urllib.request

    proc = subprocess.Popen(
        [
            PY,
            "-m",
            "core.cli",
            "engine",
            "run",
            "--db",
            ledger_url,
            "--poll",
            "0.1",
            "--metrics-port",
            "0",
            "--no-notify",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("metrics on http://127.0.0.1:")
        with urllib.request.urlopen(first.split()[-1], timeout=10) as response:
            body = response.read().decode()
        assert "tidemark_occurrences" in body
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, err) == (0, "")
    assert out.endswith("engine stopped\n")
