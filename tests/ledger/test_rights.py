"""What the connected role may do, asked of the ledger (``core.ledger.rights``): on PostgreSQL the
server's answer for roles made by ``schedctl db grant``, on SQLite the file's and its folder's mode;
and a write the database refuses anyway is one line naming the role and the grant to ask for."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from core.clock import FixedClock
from core.engine.admin import run_now
from core.errors import LedgerUnavailable
from core.ledger.access import database_failures
from core.ledger.db import Ledger, open_ledger
from core.ledger.publish import Gate, change_gate, publish
from core.ledger.rights import FULL, Act, LedgerRights, Standing, ledger_rights
from core.spec.validation import parse_spec

from . import DAILY
from .test_roles import ON_POSTGRESQL, SID, as_role, grant, names, pg_url

ALL = set(Act)
__all__ = ["names", "pg_url"]  # fixtures of the roles' suite, used here too


def _rights_of(url: str, clock: FixedClock) -> LedgerRights:
    with open_ledger(url, clock) as ledger:
        return ledger_rights(ledger)


def _allowed(rights: LedgerRights) -> set[Act]:
    return {act for act in Act if rights.may(act)}


def test_a_ledger_this_process_may_write_is_full(ledger: Ledger) -> None:
    rights = ledger_rights(ledger)
    assert rights == FULL or (rights.standing is Standing.FULL and rights.role is not None)
    assert _allowed(rights) == ALL
    assert rights.summary is None
    assert all(rights.refusal(act) is None for act in Act)


@ON_POSTGRESQL
def test_each_kind_of_role_is_told_apart(
    pg_url: str, names: dict[str, str], clock: FixedClock, capsys: pytest.CaptureFixture[str]
) -> None:
    open_ledger(pg_url, clock).close()
    for kind in ("viewer", "publisher", "engine"):
        grant(capsys, pg_url, names[kind], kind)
    viewer = _rights_of(as_role(pg_url, names["viewer"]), clock)
    carol = names["viewer"]
    assert (viewer.standing, viewer.role, _allowed(viewer)) == (Standing.VIEWER, carol, set())
    said = (
        f"read-only: the database role {carol!r} is a viewer; "
        f"ask the ledger's owner: schedctl db grant {carol} --as publisher"
    )
    assert viewer.read_only == said and viewer.summary == "R" + said[1:]
    assert {viewer.refusal(act) for act in Act} == {said}

    publisher = _rights_of(as_role(pg_url, names["publisher"]), clock)
    assert (publisher.standing, _allowed(publisher)) == (Standing.PUBLISHER, ALL - {Act.ENGINE})
    assert publisher.refusal(Act.ENGINE) == (
        f"the database role {names['publisher']!r} is a publisher: it cannot run an engine; "
        f"ask the ledger's owner: schedctl db grant {names['publisher']} --as engine"
    )
    assert publisher.summary is not None and publisher.summary.startswith("The database role")

    engine = _rights_of(as_role(pg_url, names["engine"]), clock)
    assert (engine.standing, _allowed(engine)) == (
        Standing.ENGINE,
        {Act.ENGINE, Act.RUN_NOW, Act.BACKFILL, Act.DECIDE},
    )
    refusal = engine.refusal(Act.PUBLISH)
    assert refusal is not None and refusal.endswith(f"schedctl db grant {names['engine']} --as publisher")


@ON_POSTGRESQL
def test_a_refused_write_names_the_role_what_it_lacks_and_the_grant(
    pg_url: str, names: dict[str, str], clock: FixedClock, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rights taken away after the window opened: the write still reaches the database, and is one line."""
    with open_ledger(pg_url, clock) as owner, owner.write() as session:
        publish(session, parse_spec(DAILY), clock)
    carol = names["viewer"]
    grant(capsys, pg_url, carol, "viewer")
    with open_ledger(as_role(pg_url, carol), clock) as ledger:
        with pytest.raises(LedgerUnavailable) as gate:
            change_gate(ledger, SID, Gate.PAUSE, clock)
        with pytest.raises(LedgerUnavailable) as manual, database_failures(ledger):
            run_now(ledger, SID, clock)
    for raised in (gate.value, manual.value):
        assert raised.refused == str(raised)
        assert str(raised).startswith(
            f"the database role {carol!r} may not change the ledger (permission denied for table "
        )
        assert str(raised).endswith(
            f"nothing was changed; the ledger's owner can give it the rights: schedctl db grant {carol} --as publisher"
        )


def _sqlite(ledger_url: str) -> Path:
    if not ledger_url.startswith("sqlite"):
        pytest.skip("a SQLite file's mode")
    return Path(ledger_url.removeprefix("sqlite:///"))


@pytest.mark.parametrize("ledger_url", ["sqlite"], indirect=True)
def test_a_read_only_file_is_a_viewer(ledger_url: str, clock: FixedClock) -> None:
    path = _sqlite(ledger_url)
    with open_ledger(ledger_url, clock) as ledger:
        path.chmod(0o444)
        try:
            rights = ledger_rights(ledger)
        finally:
            path.chmod(0o600)
    assert (rights.standing, _allowed(rights)) == (Standing.VIEWER, set())
    assert rights.read_only == (
        f"read-only: the ledger file {path} is read-only for you; its owner can make it writable (chmod u+w)"
    )
    assert rights.refusal(Act.ENGINE) == rights.read_only and rights.summary == "R" + rights.read_only[1:]


@pytest.mark.parametrize("ledger_url", ["sqlite"], indirect=True)
def test_a_read_only_folder_is_a_viewer_too(ledger_url: str, clock: FixedClock) -> None:
    path = _sqlite(ledger_url)
    with open_ledger(ledger_url, clock) as ledger:
        path.parent.chmod(0o555)
        try:
            rights = ledger_rights(ledger)
        finally:
            path.parent.chmod(0o755)
    assert rights.standing is Standing.VIEWER
    assert rights.summary is not None
    assert (
        f"the ledger's folder {path.parent} is read-only for you, and SQLite writes its journal there" in rights.summary
    )


@pytest.mark.parametrize("ledger_url", ["sqlite"], indirect=True)
def test_a_file_this_user_may_not_write_is_a_viewer(ledger_url: str, clock: FixedClock) -> None:
    """What the operating system says for this user (root may write any file: then only the mode counts)."""
    path = _sqlite(ledger_url)
    with open_ledger(ledger_url, clock) as ledger:
        path.chmod(0o644)
        writable = os.access(path, os.W_OK)
        assert ledger_rights(ledger).standing is (Standing.FULL if writable else Standing.VIEWER)
        path.chmod(stat.S_IRUSR)
        assert ledger_rights(ledger).standing is Standing.VIEWER
        path.chmod(0o600)
