"""The first ledger schema: schedules, revisions, occurrences, attempts, events, ledger_meta.

Revision ID: 0001
Revises:
Create Date: 2026-03-01

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LIVE_SLOT = "logical_slot_id IS NOT NULL AND state NOT IN ('CANCELLED')"
_LIVE_PERIOD = (
    "business_period IS NOT NULL AND state NOT IN "
    "('CANCELLED', 'EXCLUDED', 'FAILED', 'MISFIRE_EXPIRED', 'SKIPPED_DUPLICATE', 'SKIPPED_FOLD', "
    "'SKIPPED_GAP', 'SKIPPED_OVERLAP')"
)


def _instant(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("active_revision", sa.Integer(), nullable=False),
        sa.Column("gate_version", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("disable_generation", sa.Integer(), server_default=sa.text("0"), nullable=False),
        _instant("cursor_utc", nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        _instant("created_at"),
        _instant("updated_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedules")),
    )
    op.create_table(
        "revisions",
        sa.Column("schedule_id", sa.String(64), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("spec_json", sa.Text(), nullable=False),
        _instant("cutover_at"),
        sa.Column("tzdb_version", sa.String(16), nullable=False),
        _instant("published_at"),
        sa.ForeignKeyConstraint(["schedule_id"], ["schedules.id"], name=op.f("fk_revisions_schedule_id_schedules")),
        sa.PrimaryKeyConstraint("schedule_id", "revision", name=op.f("pk_revisions")),
    )
    op.create_table(
        "occurrences",
        sa.Column("occurrence_id", sa.String(36), nullable=False),
        sa.Column("schedule_id", sa.String(64), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("nominal_local", sa.String(19), nullable=False),
        sa.Column("fold_ordinal", sa.Integer(), nullable=False),
        _instant("resolved_utc", nullable=True),
        _instant("position_utc"),
        _instant("due_at", nullable=True),
        sa.Column("logical_slot_id", sa.String(37), nullable=True),
        sa.Column("business_period", sa.String(255), nullable=True),
        sa.Column("state", sa.String(24), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("tzdb_version", sa.String(16), nullable=False),
        sa.Column("attempt_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("claim_generation", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("lease_owner", sa.String(255), nullable=True),
        _instant("lease_expires_at", nullable=True),
        _instant("retry_at", nullable=True),
        _instant("finished_at", nullable=True),
        _instant("created_at"),
        _instant("updated_at"),
        sa.ForeignKeyConstraint(
            ["schedule_id", "revision"],
            ["revisions.schedule_id", "revisions.revision"],
            name=op.f("fk_occurrences_schedule_id_revision_revisions"),
        ),
        sa.PrimaryKeyConstraint("occurrence_id", name=op.f("pk_occurrences")),
    )
    op.create_index("ix_occurrences_schedule_id_position_utc", "occurrences", ["schedule_id", "position_utc"])
    op.create_index("ix_occurrences_state_due_at", "occurrences", ["state", "due_at"])
    # Invariants 1 and 2: one live occurrence per instant; a cancelled one releases it.
    op.create_index(
        "uq_occurrences_live_slot",
        "occurrences",
        ["schedule_id", "logical_slot_id"],
        unique=True,
        sqlite_where=sa.text(_LIVE_SLOT),
        postgresql_where=sa.text(_LIVE_SLOT),
    )
    op.create_index(
        "uq_occurrences_live_period",
        "occurrences",
        ["schedule_id", "business_period"],
        unique=True,
        sqlite_where=sa.text(_LIVE_PERIOD),
        postgresql_where=sa.text(_LIVE_PERIOD),
    )
    op.create_table(
        "attempts",
        sa.Column("attempt_id", sa.String(36), nullable=False),
        sa.Column("occurrence_id", sa.String(36), nullable=False),
        sa.Column("attempt_number", sa.Integer(), nullable=False),
        sa.Column("claim_generation", sa.Integer(), nullable=False),
        sa.Column("execution_epoch", sa.Integer(), nullable=False),
        sa.Column("worker_host", sa.String(255), nullable=False),
        sa.Column("worker_pid", sa.Integer(), nullable=False),
        _instant("started_at"),
        _instant("finished_at", nullable=True),
        sa.Column("exit_status", sa.Integer(), nullable=True),
        sa.Column("error_class", sa.String(64), nullable=True),
        sa.Column("input_digest", sa.String(64), nullable=False),
        sa.Column("stdout_tail", sa.Text(), nullable=True),
        sa.Column("stderr_tail", sa.Text(), nullable=True),
        sa.Column("outcome", sa.String(24), nullable=True),
        sa.ForeignKeyConstraint(
            ["occurrence_id"], ["occurrences.occurrence_id"], name=op.f("fk_attempts_occurrence_id_occurrences")
        ),
        sa.PrimaryKeyConstraint("attempt_id", name=op.f("pk_attempts")),
        sa.UniqueConstraint("occurrence_id", "attempt_number", name=op.f("uq_attempts_occurrence_id_attempt_number")),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        _instant("at"),
        sa.Column("schedule_id", sa.String(64), nullable=True),
        sa.Column("occurrence_id", sa.String(36), nullable=True),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_events_schedule_id_id", "events", ["schedule_id", "id"])
    op.create_table(
        "ledger_meta",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("ledger_id", sa.String(36), nullable=False),
        sa.Column("execution_epoch", sa.Integer(), server_default=sa.text("1"), nullable=False),
        _instant("created_at"),
        sa.CheckConstraint("id = 1", name=op.f("ck_ledger_meta_single_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_meta")),
    )
    _events_append_only()


def _events_append_only() -> None:
    """Triggers that refuse to change or remove an event (the outbox is history)."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION tidemark_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION 'events are append-only'; END $$"
        )
        op.execute(
            "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events "
            "FOR EACH ROW EXECUTE FUNCTION tidemark_events_append_only()"
        )
    else:
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER events_no_{action.lower()} BEFORE {action} ON events "
                "BEGIN SELECT RAISE(ABORT, 'events are append-only'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS events_append_only ON events")
        op.execute("DROP FUNCTION IF EXISTS tidemark_events_append_only()")
    op.drop_table("ledger_meta")
    op.drop_table("events")
    op.drop_table("attempts")
    op.drop_table("occurrences")
    op.drop_table("revisions")
    op.drop_table("schedules")
