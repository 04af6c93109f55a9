"""Who did what, and where work may run: actors, publishers and engine labels.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01

A ledger shared by a team must say who published, paused or reconciled what,
and which engine may run which schedule. These columns hold the facts; the
rules that use them live in the engine and the docs (docs/ledger.md, "Teams"):

* ``revisions.publisher_user``, ``publisher_host``, ``publisher_role``: the OS
  user and host that published the revision, and the database role it used
  (PostgreSQL; None on SQLite). An engine runs a revision only when it trusts
  its publisher, and a revision without ``runsOn`` runs only on the host it
  was published from.
* ``events.actor_user``, ``actor_host``, ``actor_role``: the same for every
  event; None for events written before this migration.
* ``engines.os_user``, ``labels`` (a JSON object of label to value),
  ``trusts`` (a JSON list of OS users, ``*`` for any) and ``version`` (the
  Tidemark version the engine runs).

All nullable: rows written before this migration do not know these facts, and
readers say so rather than guess.

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_NAME = 255
_COLUMNS: dict[str, tuple[tuple[str, sa.types.TypeEngine[Any]], ...]] = {
    "revisions": (
        ("publisher_user", sa.String(_NAME)),
        ("publisher_host", sa.String(_NAME)),
        ("publisher_role", sa.String(_NAME)),
    ),
    "events": (
        ("actor_user", sa.String(_NAME)),
        ("actor_host", sa.String(_NAME)),
        ("actor_role", sa.String(_NAME)),
    ),
    "engines": (
        ("os_user", sa.String(_NAME)),
        ("labels", sa.JSON()),
        ("trusts", sa.JSON()),
        ("version", sa.String(32)),
    ),
}


# Plain ADD/DROP COLUMN, not a batch copy: SQLite cannot recreate tables that
# others refer to, and ``events`` keeps its append-only triggers.
def upgrade() -> None:
    for table, columns in _COLUMNS.items():
        for name, type_ in columns:
            op.add_column(table, sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    for table, columns in reversed(_COLUMNS.items()):
        for name, _ in reversed(columns):
            op.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
