"""Count position: where a COUNT rule stands in its count at the schedule's cursor.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01

A rule with COUNT numbers its occurrences from DTSTART, so without a record of
how far it got, every materialization walked it from its start again. These
columns keep one occurrence of the counted rule near the cursor and its place
in the count, for the revision they belong to:

* ``schedules.count_revision``: the revision whose rule the position is of;
* ``schedules.count_nominal``: the nominal wall time of that occurrence
  (ISO 8601, no offset), at or before the cursor's wall time;
* ``schedules.count_index``: how many of the rule's times come before it
  (0 for DTSTART's own).

All nullable: None means no position is known yet (any rule without COUNT,
and every schedule materialized before this migration).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Plain ADD/DROP COLUMN, not a batch copy: SQLite cannot drop and recreate
# ``schedules`` while occurrences, revisions and claims refer to it.
_COLUMNS = ("count_revision", "count_nominal", "count_index")


def upgrade() -> None:
    op.add_column("schedules", sa.Column("count_revision", sa.Integer(), nullable=True))
    op.add_column("schedules", sa.Column("count_nominal", sa.String(32), nullable=True))
    op.add_column("schedules", sa.Column("count_index", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    for name in reversed(_COLUMNS):
        op.execute(f"ALTER TABLE schedules DROP COLUMN {name}")
