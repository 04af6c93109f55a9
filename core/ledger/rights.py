"""What the connected role may do on a ledger, asked of the ledger itself.

A front end asks once when it opens a ledger (and again when it reconnects),
so that it can offer only what will be allowed and say why the rest is not:
:func:`ledger_rights` answers with a :class:`LedgerRights`, the kind the
rights amount to and a sentence for each thing that is refused.

On PostgreSQL the server says: the role is checked against each kind's
rights in :data:`core.ledger.roles.PRIVILEGES` (``has_table_privilege``,
``has_column_privilege``); holding a publisher's and an engine's rights
(the ledger's owner, a superuser) is full. On SQLite a ledger is a file: it
may be changed when the file is writable, and so is its folder (SQLite writes
its journal beside it). A file with no write permission for anyone is read-only
even for a user that could write it anyway (root): its owner meant it so.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from sqlalchemy import text

from core.ledger.access import reading, role_of
from core.ledger.db import Ledger
from core.ledger.role_kinds import RoleKind
from core.ledger.roles import PRIVILEGES, TABLES


class Standing(StrEnum):
    """What the connected role's rights amount to."""

    VIEWER = "viewer"
    """Reads everything, changes nothing."""
    PUBLISHER = "publisher"
    """Also decides (publish, pause, resume, disable, run now, backfill, reconcile, fence); runs no engine."""
    ENGINE = "engine"
    """Also runs schedules; may not publish a revision, nor move a schedule's gate, nor fence."""
    FULL = "full"
    """May do everything: the ledger's owner, or a SQLite file this process may write."""


class Act(StrEnum):
    """The things a person may ask the ledger for, as far as rights go."""

    PUBLISH = "publish"
    GATE = "gate"
    """Pause, resume or disable a schedule."""
    RUN_NOW = "run now"
    BACKFILL = "backfill"
    DECIDE = "decide"
    """Reconcile, acknowledge or retry an occurrence in the attention queue."""
    FENCE = "fence"
    ENGINE = "engine"
    """Run an engine on the ledger."""


#: What each standing may do. An engine creates and moves occurrences, so the decisions
#: that only do that are within its rights (docs/ledger.md "Teams: database roles").
ALLOWED: dict[Standing, frozenset[Act]] = {
    Standing.VIEWER: frozenset(),
    Standing.PUBLISHER: frozenset(Act) - {Act.ENGINE},
    Standing.ENGINE: frozenset({Act.RUN_NOW, Act.BACKFILL, Act.DECIDE, Act.ENGINE}),
    Standing.FULL: frozenset(Act),
}


@dataclass(frozen=True)
class LedgerRights:
    """The connected role's standing on one ledger, and why it may not do what it may not."""

    standing: Standing
    #: The database role (PostgreSQL), else None.
    role: str | None = None
    #: Why this role may not change the ledger at all (a viewer, a read-only file), else None.
    read_only: str | None = None

    def may(self, act: Act) -> bool:
        return act in ALLOWED[self.standing]

    def refusal(self, act: Act) -> str | None:
        """None when ``act`` is allowed; else one sentence: the role (or file), what it is, the way out."""
        if self.may(act):
            return None
        if self.read_only is not None:
            return self.read_only
        role = self.role or "ROLE"
        if act is Act.ENGINE:
            return (
                f"the database role {role!r} is {_a(self.standing)}: it cannot run an engine; "
                f"ask the ledger's owner: schedctl db grant {role} --as engine"
            )
        return (
            f"the database role {role!r} is {_a(self.standing)}: it may not publish, pause, resume, disable "
            f"or fence; ask the ledger's owner: schedctl db grant {role} --as publisher"
        )

    @property
    def summary(self) -> str | None:
        """The line a window shows while something is refused (None: everything is allowed)."""
        if self.read_only is not None:
            return self.read_only[:1].upper() + self.read_only[1:]
        if self.standing is Standing.FULL:
            return None
        refused = self.refusal(Act.ENGINE) or self.refusal(Act.PUBLISH)
        return refused[:1].upper() + refused[1:] if refused else None


FULL = LedgerRights(Standing.FULL)


def _a(standing: Standing) -> str:
    return f"an {standing.value}" if standing.value[0] in "aeiou" else f"a {standing.value}"


def ledger_rights(ledger: Ledger) -> LedgerRights:
    """The rights of the role ``ledger`` is connected as (PostgreSQL), or of this process on its file (SQLite)."""
    if ledger.dialect == "postgresql":
        return _server_rights(ledger)
    return _file_rights(Path(str(ledger.engine.url.database)))


def _checks(kind: RoleKind) -> list[str]:
    """SQL expressions, each true when the current role holds one of ``kind``'s rights."""
    said = []
    for table in TABLES:
        rights = PRIVILEGES[kind][table]
        said += [f"has_table_privilege(current_user, '{table}', '{privilege}')" for privilege in rights.privileges]
        said += [
            f"has_column_privilege(current_user, '{table}', '{column}', 'UPDATE')" for column in rights.update_columns
        ]
    return said


def _server_rights(ledger: Ledger) -> LedgerRights:
    # The table and column names come from PRIVILEGES, never from a person: written into the query as they are.
    holds = {kind: " AND ".join(_checks(kind)) for kind in (RoleKind.PUBLISHER, RoleKind.ENGINE)}
    query = text(f"SELECT current_user, {holds[RoleKind.PUBLISHER]}, {holds[RoleKind.ENGINE]}")
    with reading(ledger) as session:
        row = session.execute(query).one()
    role, publisher, engine = str(row[0]), bool(row[1]), bool(row[2])
    standing = {
        (True, True): Standing.FULL,
        (True, False): Standing.PUBLISHER,
        (False, True): Standing.ENGINE,
        (False, False): Standing.VIEWER,
    }[(publisher, engine)]
    read_only = None
    if standing is Standing.VIEWER:
        read_only = (
            f"read-only: the database role {role!r} is a viewer; "
            f"ask the ledger's owner: schedctl db grant {role} --as publisher"
        )
    return LedgerRights(standing, role or role_of(ledger), read_only)


def _file_rights(path: Path) -> LedgerRights:
    folder = path.parent
    if not _writable(path):
        why = f"read-only: the ledger file {path} is read-only for you; its owner can make it writable (chmod u+w)"
    elif not _writable(folder):
        why = (
            f"read-only: the ledger's folder {folder} is read-only for you, and SQLite writes its journal there; "
            "its owner can make it writable"
        )
    else:
        return FULL
    return LedgerRights(Standing.VIEWER, None, why)


def _writable(path: Path) -> bool:
    """Whether this process may write ``path``, and its mode lets someone write it at all."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    if stat.S_IMODE(mode) & 0o222 == 0:
        return False
    immutable = getattr(stat, "UF_IMMUTABLE", 0) | getattr(stat, "SF_IMMUTABLE", 0)
    if immutable and getattr(path.stat(), "st_flags", 0) & immutable:  # BSD and macOS: chflags uchg
        return False
    return os.access(path, os.W_OK)
