"""Which Tidemark computed what, and a revision's pinned zone.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

Time data has a life cycle: the rules of a zone change with the tz database,
and the code that resolves them changes with each Tidemark version. These
columns record both (docs/ledger.md, "Pin or follow the tz database"):

* ``revisions.tzif``: with ``tzdbPolicy: PIN``, the zone's compiled TZif bytes
  as the installed tzdata shipped them when the revision was published; every
  resolution of that revision builds its zone from them. None under FOLLOW.
* ``revisions.engine_version`` and ``occurrences.engine_version``: the Tidemark
  version that published the revision or wrote the occurrence, next to
  ``tzdb_version``.
* ``ledger_meta.engine_version``: the newest Tidemark version that has run an
  engine on this ledger.

All nullable: rows written before this migration do not know these facts.

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_VERSION = 32
_COLUMNS: dict[str, tuple[tuple[str, sa.types.TypeEngine[Any]], ...]] = {
    "revisions": (
        ("tzif", sa.LargeBinary()),
        ("engine_version", sa.String(_VERSION)),
    ),
    "occurrences": (("engine_version", sa.String(_VERSION)),),
    "ledger_meta": (("engine_version", sa.String(_VERSION)),),
}


# Plain ADD/DROP COLUMN, not a batch copy: SQLite cannot recreate tables that others refer to.
def upgrade() -> None:
    for table, columns in _COLUMNS.items():
        for name, type_ in columns:
            op.add_column(table, sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    for table, columns in reversed(_COLUMNS.items()):
        for name, _ in reversed(columns):
            op.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
