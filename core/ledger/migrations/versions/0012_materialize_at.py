"""Materialize at: when a schedule next needs materializing, so a pass reads only those.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07

An engine pass used to expand every schedule that is not disabled, however far
ahead it already was. ``schedules.materialize_at`` is the instant from which
now + the active revision's horizon passes the schedule's cursor (the cursor
minus the horizon); a pass selects the schedules whose instant has come by
``ix_schedules_materialize_at`` and touches no other. None means "now": a
schedule just published (its horizon may have changed), or one materialized
before this migration.

On PostgreSQL a role that may move a schedule's cursor (an engine's) may set
this column too: each such grant is extended here, so roles granted before
keep working.

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_GRANTEES = sa.text(
    "SELECT DISTINCT grantee FROM information_schema.column_privileges "
    "WHERE table_name = 'schedules' AND column_name = 'cursor_utc' AND privilege_type = 'UPDATE' "
    "AND grantee <> current_user"
)


def upgrade() -> None:
    # Plain ADD COLUMN, not a batch copy: occurrences, revisions and claims refer to ``schedules``.
    op.add_column("schedules", sa.Column("materialize_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_schedules_materialize_at", "schedules", ["materialize_at"])
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        for (grantee,) in bind.execute(_GRANTEES).all():
            quoted = bind.dialect.identifier_preparer.quote(grantee)
            op.execute(f"GRANT UPDATE (materialize_at) ON TABLE schedules TO {quoted}")


def downgrade() -> None:
    op.drop_index("ix_schedules_materialize_at", table_name="schedules")
    op.execute("ALTER TABLE schedules DROP COLUMN materialize_at")
