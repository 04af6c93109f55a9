"""Where each revision came from: the spec file's path and host.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-07

``revisions.source_path`` (the absolute path of the file published) and
``revisions.source_host`` (the machine it is on) let the app tell the file a
schedule was published from from another file that happens to carry the same
id. Both are nullable: revisions published before this migration, or from
standard input, do not know their file.

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("revisions") as batch:
        batch.add_column(sa.Column("source_path", sa.Text(), nullable=True))
        batch.add_column(sa.Column("source_host", sa.String(255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("revisions") as batch:
        batch.drop_column("source_host")
        batch.drop_column("source_path")
