"""Alerts: the outbox of alerts to send, and the ledger's default routes and SMTP settings.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07

* ``alert_outbox``: one row per (occurrence, kind, route), written in the
  transaction of the state change it tells of (FAILED, UNKNOWN_EFFECT,
  MISFIRE_EXPIRED); engines claim, send and record it (core/engine/alerts.py).
* ``alert_routes``: the routes of schedules whose spec has no ``alerts``.
* ``alert_smtp``: one row, how ``mailto:`` routes are sent; the password is a
  secret's name, never the password.

On PostgreSQL, roles granted before get the rights their kind has on the new
tables (core/ledger/roles.py): an engine writes the outbox, a publisher adds to
it (a reconciliation that fails an occurrence) and sets the routes, everyone reads.

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Roles holding a right on ``occurrences``: (role, privilege).
_GRANTEES = sa.text(
    "SELECT DISTINCT grantee, privilege_type FROM information_schema.table_privileges "
    "WHERE table_name = 'occurrences' AND grantee <> current_user"
)
#: occurrences privilege held -> what it gives on the new tables.
_GIVES = {
    "SELECT": [("SELECT", "alert_outbox"), ("SELECT", "alert_routes"), ("SELECT", "alert_smtp")],
    "INSERT": [("INSERT", "alert_outbox")],
    "UPDATE": [("UPDATE", "alert_outbox")],
}
#: Only a publisher moves a schedule's gate (UPDATE of schedules.state): it sets the routes too.
_PUBLISHERS = sa.text(
    "SELECT DISTINCT grantee FROM information_schema.column_privileges "
    "WHERE table_name = 'schedules' AND column_name = 'state' AND privilege_type = 'UPDATE' "
    "AND grantee <> current_user"
)


def _instant(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "alert_outbox",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("occurrence_id", sa.String(36), nullable=False),
        sa.Column("schedule_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("route", sa.String(2000), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        _instant("created_at"),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        _instant("next_try_at", nullable=True),
        sa.Column("claimed_by", sa.String(255), nullable=True),
        _instant("claimed_until", nullable=True),
        _instant("delivered_at", nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_outbox")),
        sa.UniqueConstraint("occurrence_id", "kind", "route", name=op.f("uq_alert_outbox_occurrence_id_kind_route")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_alert_outbox_next_try_at", "alert_outbox", ["next_try_at"])
    op.create_index("ix_alert_outbox_route_delivered_at", "alert_outbox", ["route", "delivered_at"])
    op.create_table(
        "alert_routes",
        sa.Column("route", sa.String(2000), nullable=False),
        sa.Column("kinds", sa.String(64), nullable=False),
        _instant("created_at"),
        sa.PrimaryKeyConstraint("route", name=op.f("pk_alert_routes")),
    )
    op.create_table(
        "alert_smtp",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("port", sa.Integer(), nullable=False),
        sa.Column("security", sa.String(16), nullable=False),
        sa.Column("username", sa.String(255), nullable=True),
        sa.Column("password_secret", sa.String(64), nullable=True),
        sa.Column("sender", sa.String(255), nullable=False),
        _instant("updated_at"),
        sa.CheckConstraint("id = 1", name=op.f("ck_alert_smtp_single_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_smtp")),
    )
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        _grant(bind)


def _grant(bind: sa.Connection) -> None:
    quote = bind.dialect.identifier_preparer.quote
    for grantee, privilege in bind.execute(_GRANTEES).all():
        for right, table in _GIVES.get(privilege, []):
            op.execute(f"GRANT {right} ON TABLE {table} TO {quote(grantee)}")
        if privilege == "INSERT":
            op.execute(f"GRANT USAGE ON SEQUENCE alert_outbox_id_seq TO {quote(grantee)}")
    for (grantee,) in bind.execute(_PUBLISHERS).all():
        for table in ("alert_routes", "alert_smtp"):
            op.execute(f"GRANT INSERT, UPDATE, DELETE ON TABLE {table} TO {quote(grantee)}")


def downgrade() -> None:
    op.drop_table("alert_smtp")
    op.drop_table("alert_routes")
    op.drop_index("ix_alert_outbox_route_delivered_at", table_name="alert_outbox")
    op.drop_index("ix_alert_outbox_next_try_at", table_name="alert_outbox")
    op.drop_table("alert_outbox")
