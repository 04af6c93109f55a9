"""The database records who wrote each revision and event (PostgreSQL).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07

Until now the publisher of a revision and the actor of an event were written by
the client: any role that may INSERT could name another one. On PostgreSQL the
role is now the database's own record (docs/ledger.md, "Who can do what to
whom"):

* ``revisions.publisher_role`` and ``events.actor_role`` are set by a BEFORE
  INSERT trigger to ``session_user``, whatever the client sent. ``session_user``
  is the role that logged in; ``SET ROLE`` changes ``current_user``, not it, so
  a role that belongs to another cannot write as that one. A BEFORE UPDATE
  trigger refuses any change to them (events are append-only anyway).
* The trigger functions are plain (not SECURITY DEFINER) and need no right of
  their own: a publisher's INSERT fires them with the rights it has.
* ``publisher_role`` of every revision stored before this migration is cleared:
  the client wrote it, and an engine decides trust on it, so an unverifiable
  value is treated as no value. Such a revision runs only on an engine started
  with ``--trust '*'`` until it is published again. (Its ``schedule.published``
  event keeps the role its client reported.) Events keep the role their client
  wrote: it is shown, not acted upon.

SQLite has no roles: everyone who may write the file is one principal, and
nothing changes there.

Values are written out here rather than imported from the models: a migration
must keep building the same schema when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: table -> the column the database records, its trigger and its function.
_RECORDED = {
    "revisions": ("publisher_role", "revisions_record_role", "tidemark_revisions_record_role"),
    "events": ("actor_role", "events_record_role", "tidemark_events_record_role"),
}


def _function(table: str, column: str, function: str) -> str:
    return (
        f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF TG_OP = 'INSERT' THEN "
        f"NEW.{column} := session_user; "
        f"ELSIF NEW.{column} IS DISTINCT FROM OLD.{column} THEN "
        f"RAISE EXCEPTION '{table}.{column} is recorded by the database: it cannot be changed'; "
        "END IF; RETURN NEW; END $$"
    )


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("UPDATE revisions SET publisher_role = NULL")
    for table, (column, trigger, function) in _RECORDED.items():
        op.execute(_function(table, column, function))
        op.execute(
            f"CREATE TRIGGER {trigger} BEFORE INSERT OR UPDATE OF {column} ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}()"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, (_column, trigger, function) in reversed(_RECORDED.items()):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
        op.execute(f"DROP FUNCTION IF EXISTS {function}()")
