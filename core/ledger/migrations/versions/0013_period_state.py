"""Period state: what a schedule's business periods hold at its cursor.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07

A schedule with ``businessPeriod`` keeps one run per period, and a period that
comes back keeps its first winner, so every expansion walked the schedule from
its start to settle them: each new engine process did so for each such
schedule. These columns keep, with the cursor, the state of its periods at the
latest period start at or before it (core/ledger/period_resume.py):

* ``schedules.period_revision``: the revision whose expansion it is of;
* ``schedules.period_state``: JSON text, the position of that period start,
  the tz database and holidays releases it was settled with, and the winner
  of each earlier period that can still come back.

Both nullable: None means no state is known (a schedule without businessPeriod,
and every schedule materialized before this migration), and the expansion
walks from the beginning as before.

On PostgreSQL a role that may move a schedule's cursor (an engine's) may set
these columns too: each such grant is extended here, so roles granted before
keep working.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_GRANTEES = sa.text(
    "SELECT DISTINCT grantee FROM information_schema.column_privileges "
    "WHERE table_name = 'schedules' AND column_name = 'cursor_utc' AND privilege_type = 'UPDATE' "
    "AND grantee <> current_user"
)
_COLUMNS = ("period_revision", "period_state")


def upgrade() -> None:
    # Plain ADD COLUMN, not a batch copy: occurrences, revisions and claims refer to ``schedules``.
    op.add_column("schedules", sa.Column("period_revision", sa.Integer(), nullable=True))
    op.add_column("schedules", sa.Column("period_state", sa.Text(), nullable=True))
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        for (grantee,) in bind.execute(_GRANTEES).all():
            quoted = bind.dialect.identifier_preparer.quote(grantee)
            op.execute(f"GRANT UPDATE (period_revision, period_state) ON TABLE schedules TO {quoted}")


def downgrade() -> None:
    for name in reversed(_COLUMNS):
        op.execute(f"ALTER TABLE schedules DROP COLUMN {name}")
