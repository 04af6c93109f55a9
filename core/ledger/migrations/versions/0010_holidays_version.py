"""Which release of the holidays data decided a business calendar's days.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01

A business calendar's closed days come from the ``holidays`` package, whose
releases add, move and rename holidays like tz releases change clocks
(docs/ledger.md, "Business calendars and the holidays data"):

* ``revisions.holidays_version``: the holidays release installed when a revision
  with a ``businessCalendar`` was published; None without a calendar.
* ``occurrences.holidays_version``: the release that decided the row's date
  (skipped, moved or left alone); None for a schedule without a calendar and
  for rows written before this migration.

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_VERSION = 32
_TABLES = ("revisions", "occurrences")


# Plain ADD/DROP COLUMN, not a batch copy: SQLite cannot recreate tables that others refer to.
def upgrade() -> None:
    for table in _TABLES:
        op.add_column(table, sa.Column("holidays_version", sa.String(_VERSION), nullable=True))


def downgrade() -> None:
    for table in reversed(_TABLES):
        op.execute(f"ALTER TABLE {table} DROP COLUMN holidays_version")
