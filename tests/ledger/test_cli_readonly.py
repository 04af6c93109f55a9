"""Small things a person meets at the command line: a ledger that may only be read
refuses a change in one line, and a command that only reads never creates a ledger;
on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import Engine, create_engine, event, inspect, make_url, text

from core import cli
from core.ledger import db as ledger_db

from . import DAILY

SID = DAILY["scheduleId"]
SPEC: dict[str, Any] = DAILY | {"horizon": "P2D"}
NOW = ["--now", "2026-03-01T12:00:00Z"]
#: Every command that changes the ledger, with what it needs besides --db.
CHANGES = {
    "apply": ["apply", "SPEC"],
    "pause": ["pause", SID],
    "resume": ["resume", SID],
    "disable": ["disable", SID],
    "run-now": ["run-now", SID],
    "backfill": ["backfill", SID, "--from", "2026-02-01", "--to", "2026-02-03"],
    "engine run": ["engine", "run", "--once"],
    "engine fence": ["engine", "fence"],
}


def schedctl(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _select_only_role(url: str) -> Iterator[str]:
    """The URL as a role that may only SELECT the ledger's tables."""
    role = f"tidemark_reader_{uuid.uuid4().hex[:8]}"
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f'CREATE ROLE "{role}" LOGIN'))
            conn.execute(text(f'GRANT USAGE ON SCHEMA public TO "{role}"'))
            conn.execute(text(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"'))
        yield make_url(url).set(username=role, password=None).render_as_string(hide_password=False)
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'DROP OWNED BY "{role}"'))
            conn.execute(text(f'DROP ROLE "{role}"'))
        engine.dispose()


@pytest.fixture(params=["read_only", "select_only"])
def reader_url(
    request: pytest.FixtureRequest,
    ledger_url: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> Iterator[tuple[str, str]]:
    """(the ledger with one schedule, a URL of it that may only read; QUERY_ONLY: SQLite refusing writes)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    assert schedctl(capsys, "apply", str(spec), "--db", ledger_url, *NOW)[0] == 0
    if ledger_url.startswith("sqlite"):
        if request.param == "select_only":
            pytest.skip("SQLite has no users")
        yield ledger_url, "QUERY_ONLY"
    elif request.param == "read_only":
        yield ledger_url, ledger_url + "?options=-c%20default_transaction_read_only%3Don"
    else:
        yield from ((ledger_url, url) for url in _select_only_role(ledger_url))


def _query_only(plain: Callable[[Any, float], Engine]) -> Callable[[Any, float], Engine]:
    """SQLite engines that refuse every write (as root, a file's mode does not stop SQLite)."""

    def make(url: Any, busy_timeout: float) -> Engine:
        engine = plain(url, busy_timeout)
        event.listen(engine, "connect", lambda con, _record: con.execute("PRAGMA query_only = ON"))
        return engine

    return make


def _state(url: str, capsys: pytest.CaptureFixture[str]) -> Any:
    status, out, err = schedctl(capsys, "ledger", "--format", "json", "--db", url, *NOW)
    assert status == 0, err
    return json.loads(out), json.loads(schedctl(capsys, "schedules", "--format", "json", "--db", url, *NOW)[1])


@pytest.mark.parametrize("command", list(CHANGES))
def test_a_ledger_that_may_only_be_read_refuses_a_change_in_one_line(
    reader_url: tuple[str, str], command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url, reader = reader_url
    before = _state(url, capsys)
    revised = tmp_path / "spec-r2.yaml"  # a new revision: the published one is unchanged, and writes nothing
    revised.write_text(yaml.safe_dump(SPEC | {"revision": 2}))
    argv = [str(revised) if a == "SPEC" else a for a in CHANGES[command]]
    with pytest.MonkeyPatch.context() as patch:
        if reader == "QUERY_ONLY":
            reader = url
            patch.setattr(ledger_db, "_sqlite_engine", _query_only(ledger_db._sqlite_engine))
        status, out, err = schedctl(capsys, *argv, "--db", reader, *NOW)
    assert (status, out) == (2, ""), err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "read-only" in err or "may not change the ledger" in err, err
    assert _state(url, capsys) == before


# --- a command that needs a ledger never creates one ------------------------------------

#: Commands that read, or change what must already be there: none creates a ledger.
NEEDS_A_LEDGER = {
    "schedules": ["schedules"],
    "ledger": ["ledger"],
    "attempts": ["attempts", "occ-x"],
    "drift": ["drift"],
    "shadow": ["shadow"],
    "pause": ["pause", SID],
    "resume": ["resume", SID],
    "disable": ["disable", SID],
    "run-now": ["run-now", SID],
    "backfill": ["backfill", SID, "--from", "2026-02-01", "--to", "2026-02-03"],
    "reconcile": ["reconcile", "occ-x", "--happened"],
    "engine fence": ["engine", "fence"],
}


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


@pytest.mark.parametrize("command", list(NEEDS_A_LEDGER))
def test_where_there_is_no_ledger_none_is_created(
    ledger_url: str, command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = schedctl(capsys, *NEEDS_A_LEDGER[command], "--db", ledger_url, *NOW)
    assert (status, out) == (2, "")
    where = str(tmp_path / "ledger.db") if ledger_url.startswith("sqlite") else ledger_url
    assert err == (
        f"schedctl {command}: {where}: there is no ledger here; publish a schedule with schedctl apply to create one\n"
    )
    if ledger_url.startswith("sqlite"):
        assert list(tmp_path.iterdir()) == []
    else:
        assert _tables(ledger_url) == set()


@pytest.mark.parametrize("command", list(NEEDS_A_LEDGER))
def test_a_mistyped_path_creates_no_folder(command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    typo = tmp_path / "typo" / "deeper" / "x.db"
    status, out, err = schedctl(capsys, *NEEDS_A_LEDGER[command], "--db", str(typo), *NOW)
    assert (status, out) == (2, "")
    assert err.endswith(f"{typo}: there is no ledger here; publish a schedule with schedctl apply to create one\n")
    assert not (tmp_path / "typo").exists()


def test_an_empty_file_is_no_ledger_and_stays_empty(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    status, _out, err = schedctl(capsys, "schedules", "--db", str(empty))
    assert status == 2 and "there is no ledger here" in err
    assert [p.name for p in tmp_path.iterdir()] == ["empty.db"] and empty.stat().st_size == 0


def test_a_write_refused_by_sqlite_itself_is_one_line(tmp_path: Path) -> None:
    """A read-only file refuses a write that a command makes through the driver directly (a
    sqlite3 error, not SQLAlchemy's): one line too, never a traceback."""
    import argparse
    import sqlite3

    from core.cli.ledger_access import command_clock, open_command_ledger
    from core.errors import LedgerError

    path = tmp_path / "ledger.db"
    args = argparse.Namespace(db=str(path), now=None, command="pause")
    with pytest.raises(LedgerError) as raised, open_command_ledger(args, command_clock(args)):
        raise sqlite3.OperationalError("attempt to write a readonly database")
    assert str(raised.value) == (
        f"{path}: the ledger is read-only here (attempt to write a readonly database); nothing was changed"
    )
