"""Engine presence: one row per engine that runs on this ledger (app or headless).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _instant(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "engines",
        sa.Column("engine_id", sa.String(36), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        _instant("started_at"),
        _instant("last_heartbeat"),
        _instant("retired_at", nullable=True),
        sa.PrimaryKeyConstraint("engine_id", name=op.f("pk_engines")),
    )
    op.create_index("ix_engines_state_last_heartbeat", "engines", ["state", "last_heartbeat"])


def downgrade() -> None:
    op.drop_index("ix_engines_state_last_heartbeat", table_name="engines")
    op.drop_table("engines")
