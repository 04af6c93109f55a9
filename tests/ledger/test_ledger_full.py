"""A full SQLite ledger (SQLITE_FULL: "database or disk is full") is said as such, in one line,
with the exit status of any ledger that cannot be used, and nothing half-written.

A full disk is staged with SQLite's own size limit: every connection's ``PRAGMA max_page_count``
is set to the pages the file has, plus ``room``. SQLite gives the same error for both, and
rolls the whole transaction back; the error that surfaces in a nested transaction is then the
rollback of a savepoint that went with it (``no such savepoint: sa_savepoint_1``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import create_engine, event, inspect, select, table, text
from sqlalchemy.engine import Engine

from core.errors import LedgerUnavailable
from core.ledger.access import unavailable, writing
from core.ledger.db import open_ledger
from tests.secret_stores import schedctl

from . import DAILY

FULL = (
    "the ledger is full: no room is left on its disk, or the database reached its size limit (database or disk is full)"
)
#: A month of a minutely schedule: 44,640 rows to materialize, far more than a few pages hold.
DENSE: dict[str, Any] = DAILY | {"scheduleId": "dense", "timeZone": "UTC", "rule": "FREQ=MINUTELY", "horizon": "P31D"}


@contextmanager
def full(room: int) -> Iterator[None]:
    """Every SQLite connection opened meanwhile may grow its database by ``room`` pages only."""

    def limit(connection: Any, _record: Any) -> None:
        if connection.__class__.__module__ == "sqlite3":
            pages = connection.execute("PRAGMA page_count").fetchone()[0]
            connection.execute(f"PRAGMA max_page_count = {pages + room}")

    event.listen(Engine, "connect", limit)
    try:
        yield
    finally:
        event.remove(Engine, "connect", limit)


#: What an engine writes of itself, whole, as it starts and stops (its row, its version, its events).
ENGINE_OWN = {"engines", "ledger_meta"}


def rows(db: Path) -> dict[str, list[str]]:
    """Every row of every table, but what an engine writes of itself as it starts and stops."""
    engine = create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            said = {}
            for name in set(inspect(conn).get_table_names()) - ENGINE_OWN:
                query = select(text("*")).select_from(table(name))
                if name == "events":
                    query = query.where(text("kind NOT LIKE 'engine.%'"))
                said[name] = sorted(map(str, conn.execute(query)))
            return said
    finally:
        engine.dispose()


def spec_file(folder: Path, data: dict[str, Any]) -> str:
    path = folder / f"{data['scheduleId']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


ENGINE_PASS = ["engine", "run", "--once", "--no-notify", "--now", "2026-03-01T00:00:05Z"]


@pytest.mark.parametrize(
    ("command", "room", "who"),
    [
        # Materializing a month of minutes in the engine's pass: a savepoint's rollback is what surfaces.
        pytest.param(ENGINE_PASS, 0, "schedctl engine run", id="engine_pass_no_room"),
        pytest.param(ENGINE_PASS, 5, "schedctl engine run", id="engine_pass_5_pages"),
        # Publishing a schedule whose title takes pages of its own.
        pytest.param(["apply", "{big}", "--now", "2026-03-01T00:00:00Z"], 0, "schedctl apply", id="apply"),
    ],
)
def test_a_full_ledger_is_said_in_one_line_and_nothing_is_half_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], room: int, who: str
) -> None:
    db = tmp_path / "ledger.db"
    dense = spec_file(tmp_path, DENSE)
    big = spec_file(tmp_path, DAILY | {"scheduleId": "big", "title": "a long title " * 2000})
    status, _out, err = schedctl(capsys, "apply", dense, "--db", str(db), "--now", "2026-03-01T00:00:00Z")
    assert (status, err) == (0, "")
    before = rows(db)
    with full(room):
        status, out, err = schedctl(capsys, *[big if a == "{big}" else a for a in command], "--db", str(db))
    assert (status, err) == (2, f"{who}: {db}: {FULL}\n")
    assert "savepoint" not in out
    assert rows(db) == before


def test_the_window_and_every_core_call_get_the_same_words(tmp_path: Path) -> None:
    """What :func:`core.ledger.access.writing` raises for a full ledger: :class:`LedgerUnavailable`,
    ``full``, the database's own words for it, whatever surfaced above them."""
    ledger = open_ledger(str(tmp_path / "ledger.db"))
    try:
        with writing(ledger) as session:
            session.execute(text("CREATE TABLE filler (x TEXT)"))
        ledger.engine.dispose()  # connections made from here on are limited
        with (
            full(0),
            pytest.raises(LedgerUnavailable) as caught,
            writing(ledger) as session,
            session.begin_nested(),
        ):
            session.execute(text("INSERT INTO filler VALUES (:x)"), [{"x": "x" * 4000}] * 50)
    finally:
        ledger.close()
    said = caught.value
    assert (said.full, said.busy, said.detail, str(said)) == (True, False, "database or disk is full", FULL)
    assert "savepoint" in str(said.__cause__)  # what surfaced: the savepoint SQLite rolled back with the rest
    assert unavailable(said.__cause__).full
