"""``schedctl shadow`` on SQLite and PostgreSQL: exit 0 when the installed code and tz
data compute the ledger's future as it holds it, 3 with each difference listed
when they do not, 2 with one line for bad input; nothing written either way.
And ``schedctl drift --keep`` / ``--republish``: the decisions about a drifted schedule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tzdata_change import install_tzdata, new_york_a_week_late

from .test_cli_ledger import SID, Session


@pytest.fixture
def cli(ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Session:
    return Session(ledger_url, capsys, tmp_path)


def _ledger_text(cli: Session) -> tuple[str, str]:
    return cli.ok("ledger", "--format", "json"), cli.ok("events", "--format", "json")


def test_equal_then_a_new_tz_release_lists_the_moved_runs(
    cli: Session, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    cli.ok("apply", cli.spec(horizon="P10D"))
    cli.ok("engine", "run", "--once")
    before = _ledger_text(cli)
    assert cli.ok("shadow") == (
        "equal: 1 schedule, 10 future occurrences compute as the ledger holds them "
        "(tzdb 2026f, at 2026-03-01T12:00:00Z)\n"
    )
    ids = {r["nominalLocal"][:10]: r["occurrenceId"] for r in cli.rows()}
    install_tzdata(monkeypatch, request, {"America/New_York": new_york_a_week_late()})
    status, out, err = cli("shadow", "--days", "9")
    assert (status, err) == (3, "")
    lines = out.splitlines()
    assert lines[0] == (
        "different: 7 differences in 1 schedule (1 schedule, 9 future occurrences compared; "
        "tzdb 2099a, at 2026-03-01T12:00:00Z); the ledger keeps what it holds"
    )
    assert lines[1].startswith(
        f"  {SID}  {ids['2026-03-08']}  2026-03-08T02:30:00#0  resolvedUtc: — → 2026-03-08T07:30:00Z"
    )
    assert lines[4] == (
        f"  {SID}  {ids['2026-03-09']}  2026-03-09T02:30:00#0  resolvedUtc: 2026-03-09T06:30:00Z → 2026-03-09T07:30:00Z"
    )
    assert len(lines) == 8 and all(line.startswith(f"  {SID}  ") for line in lines[1:])
    status, out, _ = cli("shadow", "--format", "json")
    document = json.loads(out)
    assert status == 3 and document["equal"] is False and document["tzdbVersion"] == "2099a"
    assert document["differences"][0] == {
        "scheduleId": SID,
        "occurrenceId": ids["2026-03-08"],
        "nominalLocal": "2026-03-08T02:30:00",
        "foldOrdinal": 0,
        "field": "resolvedUtc",
        "ledger": None,
        "recomputed": "2026-03-08T07:30:00Z",
    }
    assert _ledger_text(cli) == before  # nothing written


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--days", "0"], "schedctl shadow: argument --days: must be at least 1, got 0 (see schedctl shadow --help)"),
        (["--days", "x"], "schedctl shadow: argument --days: 'x' is not a whole number (see schedctl shadow --help)"),
        (
            ["--days", "99999"],
            "schedctl shadow: argument --days: must be at most 3660, got 99999 (see schedctl shadow --help)",
        ),
        (
            ["--format", "csv"],
            "schedctl shadow: argument --format: invalid choice: 'csv' (choose from 'table', 'json') "
            "(see schedctl shadow --help)",
        ),
        (
            ["--schedule", "no-such"],
            "schedctl shadow: no-such: no such schedule in this ledger; publish it with schedctl apply",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli: Session, argv: list[str], line: str) -> None:
    cli.ok("apply", cli.spec())
    assert cli.refused("shadow", *argv) == line


def test_a_missing_ledger_is_not_created(cli: Session, tmp_path: Path) -> None:
    status, _out, err = Session(f"sqlite:///{tmp_path / 'none.db'}", cli.capsys, tmp_path)("shadow")
    assert status == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "none.db").exists()


def test_drift_waits_for_a_decision_then_keep_or_republish(
    cli: Session, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    cli.ok("apply", cli.spec(horizon="P10D"))
    cli.ok("apply", cli.spec(name="other.yaml", scheduleId="other", horizon="P14D"))
    cli.ok("engine", "run", "--once")
    install_tzdata(monkeypatch, request, {"America/New_York": new_york_a_week_late()})
    cli.ok("engine", "run", "--once", now="2026-03-01T12:00:05Z")  # the engine's drift check records it
    listed = cli.ok("drift", now="2026-03-01T12:01:00Z").splitlines()
    assert listed[0] == "13 future occurrences would move under the installed tzdb 2099a:"
    assert listed[-3:] == [
        "publish a new revision to adopt them; materialized instants are never rewritten",
        "daily-ops-summary waits for a decision: tzdata 2099a moves 5 future runs by up to 1 h; republish to follow "
        "(schedctl drift --keep daily-ops-summary, or --republish daily-ops-summary)",
        "other waits for a decision: tzdata 2099a moves 8 future runs by up to 1 h; republish to follow "
        "(schedctl drift --keep other, or --republish other)",
    ]
    assert cli.ok("drift", "--keep", SID, "--note", "not in force yet", now="2026-03-01T12:02:00Z") == (
        "kept 5 drifted runs of daily-ops-summary as materialized (tzdb 2099a would move them)\n"
    )
    assert cli.refused("drift", "--keep", SID) == (
        "schedctl drift: daily-ops-summary: no drift waits for a decision (see schedctl drift)"
    )
    said = cli.ok("drift", "--republish", "other", now="2026-03-01T12:03:00Z")
    assert said == (
        "republished other as revision 2 under tzdb 2099a (cutover 2026-03-01T12:03:00Z): 6 runs move, 1 appear, "
        "1 vanish; cancelled 14 occurrences to be planned again\n"
    )
    events = json.loads(cli.ok("events", "--kind", "schedule.drift_found,schedule.drift_kept", "--format", "json"))
    assert [e["kind"] for e in events["events"]] == [
        "schedule.drift_found",
        "schedule.drift_found",
        "schedule.drift_kept",
    ]
    assert not any("waits for a decision" in line for line in cli.ok("drift", now="2026-03-01T12:04:00Z").splitlines())


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--keep", SID, "--republish", SID],
            "schedctl drift: argument --republish: not allowed with argument --keep (see schedctl drift --help)",
        ),
        (["--note", "x"], "schedctl drift: --note: goes with --keep (a republished revision is its own record)"),
        (
            ["--keep", "no-such"],
            "schedctl drift: no-such: no such schedule in this ledger; publish it with schedctl apply",
        ),
        (["--republish", SID], "schedctl drift: daily-ops-summary: no drift waits for a decision (see schedctl drift)"),
    ],
)
def test_a_bad_drift_decision_is_one_line_and_changes_nothing(cli: Session, argv: list[str], line: str) -> None:
    cli.ok("apply", cli.spec())
    before = _ledger_text(cli)
    assert cli.refused("drift", *argv) == line
    assert _ledger_text(cli) == before


def test_a_difference_cannot_drive_the_terminal() -> None:
    from datetime import UTC, datetime

    from core.ledger.shadow import ShadowDifference, ShadowReport
    from core.render.shadow_table import shadow_table

    report = ShadowReport(datetime(2026, 3, 1, 12, tzinfo=UTC), "2099a")
    report.differences.append(
        ShadowDifference(SID, "occ-1", "2026-03-08T02:30:00", 0, "reason", "old\x1b[2J", "new\u202eexe.png\nnext")
    )
    lines = shadow_table(report, unicode=False).splitlines()
    assert lines[1] == f"  {SID}  occ-1  2026-03-08T02:30:00#0  reason: old\\x1b[2J -> new\\u202eexe.png next"
