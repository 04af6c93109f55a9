"""Workers' writes joined into one commit (SQLite, :mod:`core.engine.group_commit`): units that
arrive while a transaction is open share its commit; one that fails is rolled back alone; a
commit that fails fails every unit in it, and nothing of them is written. Counted, not timed:
the leader's block waits until the others have joined."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import event, text
from sqlalchemy.orm import Session

from core.clock import FixedClock
from core.engine.group_commit import GroupCommit, GroupCommitFailed
from core.ledger.access import disk_full
from core.ledger.db import DRIVER, Ledger, open_ledger
from core.ledger.models import Event

from . import NOW

TIMEOUT = 30.0


@pytest.fixture
def sqlite_ledger(tmp_path: Path) -> Iterator[Ledger]:
    with open_ledger(str(tmp_path / "ledger.db"), FixedClock(NOW)) as ledger:
        with ledger.write() as session:
            session.execute(text("CREATE TABLE units (name TEXT)"))
        yield ledger


def _rows(ledger: Ledger) -> list[str]:
    with ledger.read() as session:
        return sorted(session.scalars(text("SELECT name FROM units")))


def _commits(ledger: Ledger) -> list[int]:
    count = [0]

    def committed(_connection: object) -> None:
        count[0] += 1

    event.listen(ledger.engine, "commit", committed)
    return count


def _insert(session: Session, name: str) -> None:
    """On the driver's connection, past the session, as the engine's hot path writes."""
    held = session.info.get(DRIVER)
    driver = held if held is not None else session.connection().connection.driver_connection
    driver.execute("INSERT INTO units (name) VALUES (?)", (name,))


def _run_joined(
    ledger: Ledger,
    group: GroupCommit,
    names: list[str],
    fail: str | None = None,
    flush_fails: str | None = None,
    fills: str | None = None,
) -> dict[str, BaseException | None]:
    """The first name leads; the others join its open transaction before it ends its block. Each
    thread has its own held connection (an engine worker's ``Ledger.writer``); the leader's is used."""
    outcome: dict[str, BaseException | None] = {}

    def unit(name: str, hold: threading.Event | None = None) -> None:
        try:
            with ledger.writer(serialize=False) as own, group.transaction(own) as session:
                _insert(session, name)
                if hold is not None:
                    assert group.wait_for_members(len(names), TIMEOUT)
                if name == fail:
                    raise ValueError(f"{name} fails")
                if name == flush_fails:  # an event without its kind: the database refuses it
                    session.add(Event(at=NOW, kind=None, data={}))
                    session.flush()
                if name == fills:
                    _fill_the_disk(session)
            outcome[name] = None
        except BaseException as exc:
            outcome[name] = exc

    lead = threading.Thread(target=unit, args=(names[0], threading.Event()))
    lead.start()
    assert group.wait_for_members(1, TIMEOUT)
    others = [threading.Thread(target=unit, args=(name,)) for name in names[1:]]
    for thread in others:
        thread.start()
    for thread in [lead, *others]:
        thread.join(TIMEOUT)
    return outcome


def test_units_that_arrive_while_one_is_open_share_its_commit(sqlite_ledger: Ledger) -> None:
    group = GroupCommit(limit=16)
    commits = _commits(sqlite_ledger)
    outcome = _run_joined(sqlite_ledger, group, ["a", "b", "c", "d"])
    assert outcome == {"a": None, "b": None, "c": None, "d": None}
    assert (commits[0], group.commits) == (1, 1)
    assert _rows(sqlite_ledger) == ["a", "b", "c", "d"]


def test_a_member_that_fails_is_rolled_back_alone(sqlite_ledger: Ledger) -> None:
    group = GroupCommit(limit=16)
    outcome = _run_joined(sqlite_ledger, group, ["a", "b", "c"], fail="c")
    assert isinstance(outcome.pop("c"), ValueError)
    assert outcome == {"a": None, "b": None}
    assert _rows(sqlite_ledger) == ["a", "b"]
    assert group.commits == 1


def test_a_member_whose_orm_flush_fails_takes_no_other_unit_with_it_unnoticed(sqlite_ledger: Ledger) -> None:
    """A joined unit's savepoint is the driver's, which SQLAlchemy does not know: a flush that
    fails in it may end the whole transaction. Then no unit of it reports a commit it did not
    get, and none that reports a failure was written; the units that came later write in a
    transaction of their own."""
    group = GroupCommit(limit=16)
    outcome = _run_joined(sqlite_ledger, group, ["a", "b", "c", "d"], flush_fails="b")
    assert isinstance(outcome["b"], Exception)
    written = _rows(sqlite_ledger)
    assert "b" not in written
    assert sorted(name for name, error in outcome.items() if error is None) == written
    for name in set(outcome) - set(written) - {"b"}:
        assert isinstance(outcome[name], GroupCommitFailed)
    # The ledger takes the next write as usual.
    _write_one(sqlite_ledger, "e")


def _write_one(ledger: Ledger, name: str) -> None:
    """The ledger takes the next write as usual."""
    with ledger.writer(serialize=False) as own, GroupCommit(limit=16).transaction(own) as session:
        _insert(session, name)
    assert name in _rows(ledger)


def _fill_the_disk(session: Session) -> None:
    """A write that finds the database full (its size limit reached: SQLite's SQLITE_FULL)."""
    driver = session.info[DRIVER]
    (pages,) = driver.execute("PRAGMA page_count").fetchone()
    driver.execute(f"PRAGMA max_page_count = {pages}")
    try:
        driver.execute("INSERT INTO units (name) VALUES (?)", ("x" * 200_000,))
    finally:
        driver.execute("PRAGMA max_page_count = 1073741823")


def test_a_member_that_finds_the_disk_full_leaves_no_unit_reported_durable_that_is_not(
    sqlite_ledger: Ledger,
) -> None:
    """A full SQLite database may roll the whole transaction back, the other units' work with
    it. The transaction is then not committed as if it held them: each unit reports a commit
    only if its row is there, and a unit that failed for it says why (the full disk, beneath)."""
    group = GroupCommit(limit=16)
    outcome = _run_joined(sqlite_ledger, group, ["a", "b", "c", "d"], fills="b")
    assert disk_full(outcome["b"] or Exception()) is not None
    written = _rows(sqlite_ledger)
    assert "b" not in written
    assert sorted(name for name, error in outcome.items() if error is None) == written
    for name in set(outcome) - set(written) - {"b"}:
        failed = outcome[name]
        assert isinstance(failed, GroupCommitFailed) and disk_full(failed) is not None
    _write_one(sqlite_ledger, "e")


def test_when_the_leader_fails_the_others_go_on_in_another_transaction(sqlite_ledger: Ledger) -> None:
    """The leader writes first, without a savepoint: its failure rolls its transaction back before
    the others have written, and they write and commit in one of their own."""
    group = GroupCommit(limit=16)
    outcome = _run_joined(sqlite_ledger, group, ["a", "b", "c"], fail="a")
    assert isinstance(outcome.pop("a"), ValueError)
    assert outcome == {"b": None, "c": None}
    assert _rows(sqlite_ledger) == ["b", "c"]
    assert group.commits in (1, 2)


def test_a_unit_returns_only_after_its_commit_and_fails_with_it(sqlite_ledger: Ledger) -> None:
    """The commit itself fails (the leader's transaction): every unit in it raises, none is written."""
    group = GroupCommit(limit=16)

    @contextmanager
    def broken() -> Iterator[Session]:
        with sqlite_ledger.write(serialize=False) as session:
            yield session
            raise OSError("disk full")

    outcome: dict[str, BaseException | None] = {}

    def unit(name: str) -> None:
        try:
            with group.transaction(broken) as session:
                _insert(session, name)
                if name == "a":
                    assert group.wait_for_members(2, TIMEOUT)
            outcome[name] = None
        except BaseException as exc:
            outcome[name] = exc

    lead = threading.Thread(target=unit, args=("a",))
    lead.start()
    assert group.wait_for_members(1, TIMEOUT)
    member = threading.Thread(target=unit, args=("b",))
    member.start()
    lead.join(TIMEOUT)
    member.join(TIMEOUT)
    assert isinstance(outcome["a"], OSError)
    assert isinstance(outcome["b"], GroupCommitFailed) and isinstance(outcome["b"].__cause__, OSError)
    assert _rows(sqlite_ledger) == []
    assert group.commits == 0
