"""The kinds of database role a ledger knows, and what opening a ledger, or a write the
database refused, says to a role without the rights it needs (the command line and the
window say it in the same words). Apart from core.ledger.roles so that core.ledger.db can
word the refusal without importing the grants (which open ledgers themselves)."""

from __future__ import annotations

from enum import StrEnum


class RoleKind(StrEnum):
    """What a database role may do on the ledger."""

    VIEWER = "viewer"
    """Reads everything: the monitor, ``schedules``, ``ledger``, ``attempts``, ``drift``."""
    PUBLISHER = "publisher"
    """Also decides: publishes, pauses, resumes, disables, runs now, backfills, reconciles,
    acknowledges and fences. Runs no engine."""
    ENGINE = "engine"
    """Also runs schedules: announces itself, materializes, claims, records attempts and
    outcomes. Never publishes a revision nor moves a schedule's gate."""


def unopened_line(role: str | None, said: str) -> str:
    """What opening the ledger says when the database refused for want of a right (SQLSTATE 42501):
    a role that may not read it, or one that is not the owner when the schema needs migrating."""
    who = f"the database role {role!r}" if role else "this database role"
    if "must be owner" in said:
        return (
            f"{who} may not migrate the ledger to this Tidemark's schema ({said}); "
            "only the ledger's owner migrates it: ask them to run schedctl db upgrade"
        )
    kinds = "|".join(RoleKind)
    return (
        f"{who} may not read the ledger ({said}); "
        f"the ledger's owner can give it the rights: schedctl db grant {role or 'ROLE'} --as {kinds}"
    )


#: Which kind each command that changes the ledger needs (what a refusal suggests).
COMMAND_KINDS: dict[str, RoleKind] = {"engine run": RoleKind.ENGINE}


def kind_for(command: str) -> RoleKind:
    """The kind of role ``command`` (``apply``, ``engine run``) needs to change the ledger."""
    return COMMAND_KINDS.get(command, RoleKind.PUBLISHER)


def refused_line(role: str | None, said: str, command: str) -> str:
    """What a command says when the database refused its write for want of a right (SQLSTATE 42501)."""
    kind = kind_for(command)
    who = f"the database role {role!r}" if role else "this database role"
    grant = f"schedctl db grant {role or 'ROLE'} --as {kind.value}"
    return (
        f"{who} may not change the ledger ({said}); nothing was changed; "
        f"the ledger's owner can give it the rights: {grant}"
    )
