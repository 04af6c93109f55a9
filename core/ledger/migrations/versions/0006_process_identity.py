"""Process identity: the start time and boot of each engine and of each attempt's task.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01

A pid alone names a process only until it is reused. With the process's start
time and the machine's boot id beside it, an engine on the same host can tell
for certain whether a recorded process still runs:

* ``engines.process_started`` / ``engines.boot_id``: the engine's own process,
  so a dead engine's presence row and claims need not wait out their lease;
* ``attempts.worker_started`` / ``attempts.boot_id``: the engine process that
  opened the attempt (``worker_host`` / ``worker_pid`` already exist);
* ``attempts.task_pid`` / ``attempts.task_started``: the task's own process
  (its process-group leader), so a lost attempt whose task still runs is seen
  as running rather than retried beside itself.

All nullable: rows written before this migration do not know them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("engines") as batch:
        batch.add_column(sa.Column("process_started", sa.Float(), nullable=True))
        batch.add_column(sa.Column("boot_id", sa.String(64), nullable=True))
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(sa.Column("worker_started", sa.Float(), nullable=True))
        batch.add_column(sa.Column("boot_id", sa.String(64), nullable=True))
        batch.add_column(sa.Column("task_pid", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("task_started", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("task_started")
        batch.drop_column("task_pid")
        batch.drop_column("boot_id")
        batch.drop_column("worker_started")
    with op.batch_alter_table("engines") as batch:
        batch.drop_column("boot_id")
        batch.drop_column("process_started")
