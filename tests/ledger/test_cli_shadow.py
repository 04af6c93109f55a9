"""``schedctl shadow`` on SQLite and PostgreSQL: exit 0 when the installed code and tz
data compute the ledger's future as it holds it, 3 with each difference listed
when they do not, 2 with one line for bad input; nothing written either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli_ledger import SID, Session
from .tzdata_change import install_tzdata, new_york_a_week_late


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
