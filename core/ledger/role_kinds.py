"""The kinds of database role a ledger knows, and what opening a ledger says to a role
without the rights it needs. Apart from core.ledger.roles so that core.ledger.db can
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
