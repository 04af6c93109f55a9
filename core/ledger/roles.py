"""Database roles for a team's PostgreSQL ledger: what a viewer, a publisher and an engine may do.

:data:`PRIVILEGES` is the whole policy, a table of kind -> table -> rights
(docs/ledger.md, "Teams", shows it under "Database roles"). :func:`grant_role` creates
a role, or takes an existing one, and gives it exactly its kind's rights on
the ledger's tables: everything else it had on them is revoked first, in the
same transaction, so granting another kind never leaves a union of both.

No kind gets DDL: only the ledger's owner migrates it (``schedctl db upgrade``).
A kind that inserts into a table with a serial id may use that id's sequence.
SQLite has no roles: a SQLite ledger is a file, and its mode says who may use it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from sqlalchemy import make_url

from core.errors import LedgerError, first_line
from core.ledger.models import VERSION_TABLE
from core.ledger.role_kinds import RoleKind


@dataclass(frozen=True)
class Rights:
    """The rights of one kind on one table: table-wide privileges, and UPDATE of some columns only."""

    privileges: tuple[str, ...] = ("SELECT",)
    update_columns: tuple[str, ...] = ()

    def __str__(self) -> str:
        said = list(self.privileges)
        if self.update_columns:
            said.append(f"UPDATE ({', '.join(self.update_columns)})")
        return ", ".join(said)


#: Every table of the ledger a role is given rights on (the version table: read only, by every kind).
TABLES = (
    "schedules",
    "revisions",
    "occurrences",
    "attempts",
    "events",
    "expired_ranges",
    "engines",
    "ledger_meta",
    "alert_outbox",
    "alert_routes",
    "alert_smtp",
    VERSION_TABLE,
)
_READ = Rights()
_APPEND = Rights(("SELECT", "INSERT"))
_WRITE = Rights(("SELECT", "INSERT", "UPDATE"))
_OWN = Rights(("SELECT", "INSERT", "UPDATE", "DELETE"))
_VIEWER = dict.fromkeys(TABLES, _READ)

#: kind -> table -> rights. A table a kind does not name here, it may only read.
PRIVILEGES: dict[RoleKind, dict[str, Rights]] = {
    RoleKind.VIEWER: _VIEWER,
    RoleKind.PUBLISHER: _VIEWER
    | {
        # publish (a schedule and its revision, superseded occurrences cancelled), pause, resume, disable
        "schedules": _WRITE,
        "revisions": _APPEND,
        # run now, backfill (which materializes its range first), reconcile, fence (leases expire)
        "occurrences": _WRITE,
        "events": _APPEND,
        "expired_ranges": _APPEND,
        # fence: the execution epoch
        "ledger_meta": Rights(update_columns=("execution_epoch",)),
        # a reconciliation that fails an occurrence tells its alert routes; the ledger's default routes
        "alert_outbox": _WRITE,
        "alert_routes": _OWN,
        "alert_smtp": _OWN,
    },
    RoleKind.ENGINE: _VIEWER
    | {
        # materializing moves a schedule's cursor, its place in a COUNT and its periods' state, nothing else of it:
        # an engine cannot publish, pause, resume or disable
        "schedules": Rights(
            update_columns=(
                "cursor_utc",
                "count_revision",
                "count_nominal",
                "count_index",
                "materialize_at",
                "period_revision",
                "period_state",
                "updated_at",
            )
        ),
        "occurrences": _WRITE,
        "attempts": _WRITE,
        "events": _APPEND,
        "expired_ranges": _APPEND,
        # presence: announce, beat, retire, forget long-gone engines
        "engines": Rights(("SELECT", "INSERT", "UPDATE", "DELETE")),
        # the newest Tidemark version that has run an engine here (its first start of a new version)
        "ledger_meta": Rights(update_columns=("engine_version",)),
        # alerts: written with the state change, claimed, sent and recorded
        "alert_outbox": _WRITE,
    },
}


def privileges_markdown() -> str:
    """:data:`PRIVILEGES` as the Markdown table docs/ledger.md shows."""
    kinds = list(RoleKind)
    lines = ["| table | " + " | ".join(kinds) + " |", "|---" * (len(kinds) + 1) + "|"]
    for table in TABLES:
        lines.append(f"| `{table}` | " + " | ".join(str(PRIVILEGES[kind][table]) for kind in kinds) + " |")
    return "\n".join(lines)


#: PostgreSQL keeps the first 63 bytes of a longer name: a longer one could name another role.
MAX_NAME_BYTES = 63


def check_role_name(name: str) -> str:
    """``name`` when a role may be called so; else a :class:`LedgerError` saying why.

    Any other name is used as written (quoted: quotes, spaces and capitals are kept)."""
    if not name:
        raise LedgerError("a role needs a name")
    if "\x00" in name:
        raise LedgerError(f"{name!r}: a role name cannot hold a NUL byte")
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        raise LedgerError(f"{name!r}: a role name cannot hold control characters")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise LedgerError(f"{name!r}: a role name has at most {MAX_NAME_BYTES} bytes; PostgreSQL would cut it short")
    if name.lower().startswith("pg_") or name.lower() in ("public", "none"):
        raise LedgerError(f"{name!r}: PostgreSQL keeps that name for itself; choose another")
    return name


def is_postgresql(url: str | None) -> bool:
    """Whether ``url`` (a checked ledger URL or path; None: the default) names a PostgreSQL database."""
    if url is None or "://" not in url:
        return False
    return make_url(url.strip()).get_backend_name() in ("postgresql", "postgres")


@dataclass(frozen=True)
class Granted:
    """What :func:`grant_role` did."""

    role: str
    kind: RoleKind
    #: The role did not exist: it was created, able to log in, without a password.
    created: bool
    #: Rights it still holds beyond its kind's, through a role it belongs to or PUBLIC
    #: (``INSERT on revisions``, ``UPDATE (state) on schedules``): not its own, so not revoked.
    beyond: tuple[str, ...] = ()


_SEQUENCES = """
SELECT t.relname, s.relname FROM pg_class s
JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = s.oid
    AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
JOIN pg_class t ON t.oid = d.refobjid
WHERE s.relkind = 'S' AND t.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
"""
_ROLE = """
SELECT r.rolsuper, o.rolname = r.rolname OR pg_has_role(r.oid, o.oid, 'MEMBER'), o.rolname
FROM pg_roles r, pg_class t JOIN pg_roles o ON o.oid = t.relowner
WHERE r.rolname = %s AND t.relname = 'schedules'
    AND t.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
"""


def grant_role(url: str, role: str, kind: RoleKind) -> Granted:
    """Give ``role`` exactly the rights of ``kind`` on the ledger at ``url`` (created if it is not there yet).

    Run as the ledger's owner (or a role that may create roles and grant on its tables).
    A missing role is created with LOGIN and no password. The ledger's owner, a
    superuser and a member of the owner's role are refused: they have every right anyway.
    """
    from core.ledger.db import check_url, open_ledger

    role = check_role_name(role)
    where = check_url(url)
    if not is_postgresql(url):
        raise LedgerError(
            f"{where}: database roles are PostgreSQL's; a SQLite ledger is a file, and its mode says who may use it"
        )
    with open_ledger(url) as ledger:
        try:
            with ledger.engine.begin() as connection:
                driver = connection.connection.driver_connection
                assert driver is not None
                created = _grant(driver, role, RoleKind(kind))
                beyond = _beyond(driver, role, RoleKind(kind))
        except LedgerError:
            raise
        except Exception as exc:
            original = getattr(exc, "orig", None) or exc
            if not _is_database_error(original):
                raise
            raise LedgerError(
                f"{where}: role {role!r} was not changed: the database refused ({first_line(original)}); "
                "run db grant as the ledger's owner"
            ) from None
    return Granted(role, RoleKind(kind), created, beyond)


def _is_database_error(exc: BaseException) -> bool:
    import psycopg
    from sqlalchemy.exc import DBAPIError

    return isinstance(exc, psycopg.Error | DBAPIError)


def _may_create_roles(driver: Any, role: str) -> None:
    """Refuse, saying exactly what to run, when the role running ``db grant`` may not create ``role``:
    a ledger's owner made as in docs/ledger.md's first step needs CREATEROLE for that."""
    from psycopg import sql

    me, able = driver.execute(
        "SELECT rolname, rolcreaterole OR rolsuper FROM pg_roles WHERE rolname = current_user"
    ).fetchone() or ("", False)
    if able:
        return
    raise LedgerError(
        f"role {role!r} does not exist and {me!r} may not create roles; as a superuser, run "
        f"{sql.SQL('ALTER ROLE {} CREATEROLE').format(sql.Identifier(me)).as_string(driver)} "
        f"(or create it: {sql.SQL('CREATE ROLE {} LOGIN').format(sql.Identifier(role)).as_string(driver)}), "
        "then db grant again; nothing was changed"
    )


def _grant(driver: object, role: str, kind: RoleKind) -> bool:
    """Revoke everything ``role`` holds on the ledger's tables and sequences, then grant ``kind``'s rights."""
    import psycopg
    from psycopg import sql

    assert isinstance(driver, psycopg.Connection)
    who = sql.Identifier(role)
    found = driver.execute(_ROLE, (role,)).fetchone()
    exists = driver.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is not None
    if found is not None:
        superuser, owner, owner_name = found
        if superuser:
            raise LedgerError(f"{role!r} is a superuser: it has every right on the ledger; grant another role")
        if owner:
            raise LedgerError(
                f"{role!r} owns the ledger (or is a member of its owner {owner_name!r}): "
                "it has every right on it; grant another role"
            )
    if not exists:
        _may_create_roles(driver, role)
        driver.execute(sql.SQL("CREATE ROLE {} LOGIN").format(who))
    schema, database = driver.execute("SELECT current_schema(), current_database()").fetchone() or ("", "")
    driver.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(database), who))
    driver.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), who))
    rights = PRIVILEGES[kind]
    for table in TABLES:
        name = sql.Identifier(schema, table)
        # Revoking a table's privileges revokes its columns' too.
        driver.execute(sql.SQL("REVOKE ALL ON TABLE {} FROM {}").format(name, who))
        granted = rights[table]
        driver.execute(
            sql.SQL("GRANT {} ON TABLE {} TO {}").format(
                sql.SQL(", ").join(map(sql.SQL, granted.privileges)), name, who
            )
        )
        if granted.update_columns:
            columns = sql.SQL(", ").join(map(sql.Identifier, granted.update_columns))
            driver.execute(sql.SQL("GRANT UPDATE ({}) ON TABLE {} TO {}").format(columns, name, who))
    for table, sequence in driver.execute(_SEQUENCES).fetchall():
        name = sql.Identifier(schema, sequence)
        driver.execute(sql.SQL("REVOKE ALL ON SEQUENCE {} FROM {}").format(name, who))
        if table in rights and "INSERT" in rights[table].privileges:
            driver.execute(sql.SQL("GRANT USAGE ON SEQUENCE {} TO {}").format(name, who))
    return not exists


#: The table privileges a role can hold.
_TABLE_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")
_HELD = """
SELECT t.relname, p.privilege, NULL FROM pg_class t, unnest(%(privileges)s::text[]) AS p(privilege)
WHERE t.relname = ANY(%(tables)s) AND t.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
    AND has_table_privilege(%(role)s, t.oid, p.privilege)
UNION ALL
SELECT t.relname, 'UPDATE', a.attname FROM pg_class t JOIN pg_attribute a ON a.attrelid = t.oid
WHERE t.relname = ANY(%(tables)s) AND t.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
    AND a.attnum > 0 AND NOT a.attisdropped AND has_column_privilege(%(role)s, t.oid, a.attnum, 'UPDATE')
    AND NOT has_table_privilege(%(role)s, t.oid, 'UPDATE')
"""


def _beyond(driver: object, role: str, kind: RoleKind) -> tuple[str, ...]:
    """The rights on the ledger's tables that ``role`` holds, as the server says, beyond ``kind``'s."""
    import psycopg

    assert isinstance(driver, psycopg.Connection)
    rights = PRIVILEGES[kind]
    params = {"privileges": list(_TABLE_PRIVILEGES), "tables": list(TABLES), "role": role}
    extra: dict[str, list[str]] = {}
    for table, privilege, column in driver.execute(_HELD, params).fetchall():
        granted = rights[table]
        if column is None and privilege not in granted.privileges:
            extra.setdefault(table, []).append(privilege)
        elif column is not None and column not in granted.update_columns:
            extra.setdefault(table, []).append(f"UPDATE ({column})")
    return tuple(f"{', '.join(said)} on {table}" for table, said in sorted(extra.items()))
