"""Indexes the monitor reads by.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30

``ix_occurrences_position_order`` serves the occurrences table, which pages
through the whole ledger by position (keyset: position, nominal time, fold,
id) without sorting it. ``ix_events_occurrence_id_id`` serves an occurrence's
history in the detail panel and the attention queue's "was it acknowledged".

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_occurrences_position_order",
        "occurrences",
        ["position_utc", "nominal_local", "fold_ordinal", "occurrence_id"],
    )
    op.create_index("ix_events_occurrence_id_id", "events", ["occurrence_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_events_occurrence_id_id", table_name="events")
    op.drop_index("ix_occurrences_position_order", table_name="occurrences")
