"""Expired ranges: a long run of missed occurrences recorded as one row.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

After a long outage, the occurrences that the misfire policy could never run
(every one older than the newest ``maxCatchUp``, or older than
``catchUpWindow``, or all late ones under SKIP) are recorded as one range per
schedule and revision instead of one MISFIRE_EXPIRED row each (see
docs/ledger.md, "Long outages").

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _instant(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "expired_ranges",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("schedule_id", sa.String(64), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        _instant("from_utc"),
        _instant("to_utc"),
        sa.Column("policy", sa.String(32), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("occurrences", sa.Integer(), nullable=True),
        sa.Column("tzdb_version", sa.String(16), nullable=False),
        _instant("created_at"),
        sa.ForeignKeyConstraint(
            ["schedule_id", "revision"],
            ["revisions.schedule_id", "revisions.revision"],
            name=op.f("fk_expired_ranges_schedule_id_revision_revisions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_expired_ranges")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_expired_ranges_schedule_id_from_utc", "expired_ranges", ["schedule_id", "from_utc"])


def downgrade() -> None:
    op.drop_index("ix_expired_ranges_schedule_id_from_utc", table_name="expired_ranges")
    op.drop_table("expired_ranges")
