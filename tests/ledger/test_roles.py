"""``schedctl db grant``: a viewer reads, a publisher decides, an engine runs, each with exactly
its kind's rights on a PostgreSQL ledger; a write refused for want of a right is one line
naming the role and the grant to ask for. Roles are server-wide: each test names its own
and drops them at its end."""

from __future__ import annotations

import argparse
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import DBAPIError

from core import cli
from core.errors import LedgerError
from core.ledger.models import VERSION_TABLE, Base
from core.ledger.roles import PRIVILEGES, TABLES, RoleKind, check_role_name, privileges_markdown

from . import DAILY
from .pg_roles import as_role
from .pg_roles import drop_role as _drop
from .pg_roles import owner_sql as _owner

SID = DAILY["scheduleId"]
NOW = "2026-03-01T12:00:00Z"
#: After the first 02:30 New York occurrence (07:30Z) came due.
DUE = "2026-03-02T07:31:00Z"
_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")


def schedctl(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


#: A test on PostgreSQL only: database roles are PostgreSQL's (the SQLite refusal has a test of its own).
ON_POSTGRESQL = pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)


@pytest.fixture
def pg_url(ledger_url: str) -> str:
    assert ledger_url.startswith("postgresql")
    return ledger_url


@pytest.fixture
def names(pg_url: str) -> Iterator[dict[str, str]]:
    """A role name per kind, unique to this test; the roles are dropped at its end."""
    tag = uuid.uuid4().hex[:8]
    made = {kind.value: f"tm_{tag}_{kind.value}" for kind in RoleKind}
    made["odd"] = f'tm {tag} "quoted" 50% :x'
    try:
        yield made
    finally:
        for role in made.values():
            _drop(pg_url, role)


@pytest.fixture
def published(pg_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Path:
    """The owner publishes the daily schedule, whose task appends to a marker file; returns the marker."""
    marker = tmp_path / "ran.txt"
    spec = DAILY | {"horizon": "P2D", "task": {"argv": ["/bin/sh", "-c", f"echo ran >> {marker}"]}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    (tmp_path / "spec2.yaml").write_text(yaml.safe_dump(spec | {"revision": 2}))
    assert schedctl(capsys, "apply", str(tmp_path / "spec.yaml"), "--db", pg_url, "--now", NOW)[0] == 0
    return marker


def grant(capsys: pytest.CaptureFixture[str], url: str, role: str, kind: str) -> str:
    status, out, err = schedctl(capsys, "db", "grant", role, "--as", kind, "--db", url)
    assert (status, err) == (0, ""), err
    return out


def _state(url: str, capsys: pytest.CaptureFixture[str]) -> Any:
    status, out, err = schedctl(capsys, "ledger", "--format", "json", "--db", url, "--now", NOW)
    assert status == 0, err
    schedules = json.loads(schedctl(capsys, "schedules", "--format", "json", "--db", url, "--now", NOW)[1])
    engines = _owner(url, "SELECT count(*) FROM engines")
    return json.loads(out), schedules, engines


def refused(capsys: pytest.CaptureFixture[str], url: str, role: str, kind: str, *argv: str) -> str:
    """Run ``argv`` as ``role``: one line, exit 2, naming the role and the grant it would need."""
    status, out, err = schedctl(capsys, *argv, "--db", as_role(url, role))
    assert (status, out) == (2, ""), err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"the database role {role!r} may not change the ledger (permission denied for " in err, err
    assert err.rstrip().endswith(f"schedctl db grant {role} --as {kind}"), err
    return err


def _unknown_effect(url: str, capsys: pytest.CaptureFixture[str]) -> str:
    """A manual run of the schedule, left UNKNOWN_EFFECT (as a lost non-idempotent attempt would be)."""
    status, out, err = schedctl(capsys, "run-now", SID, "--db", url, "--now", NOW)
    assert status == 0, err
    occurrence = out.split()[-1] if out.split()[-1].startswith("occ-") else out.split()[0]
    _owner(url, "UPDATE occurrences SET state = 'UNKNOWN_EFFECT' WHERE occurrence_id = :o", o=occurrence)
    return occurrence


# --- what each kind may do, through schedctl ------------------------------------------


@ON_POSTGRESQL
def test_a_viewer_reads_everything_and_changes_nothing(
    pg_url: str, names: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    viewer = names["viewer"]
    said = grant(capsys, pg_url, viewer, "viewer")
    assert said.startswith(f"created role {viewer!r} as a viewer: it may log in and has no password yet\n")
    occurrence = _unknown_effect(pg_url, capsys)
    url = as_role(pg_url, viewer)
    for argv in (["schedules"], ["ledger", "--format", "json"], ["attempts", occurrence], ["drift"], ["shadow"]):
        status, _out, err = schedctl(capsys, *argv, "--db", url, "--now", NOW)
        assert (status, err) == (0, ""), (argv, err)
    assert schedctl(capsys, "preview", str(tmp_path / "spec.yaml"), "--count", "2")[0] == 0
    before = _state(pg_url, capsys)
    publisher = "publisher"
    refused(capsys, pg_url, viewer, publisher, "apply", str(tmp_path / "spec2.yaml"), "--now", NOW)
    refused(capsys, pg_url, viewer, publisher, "pause", SID)
    refused(capsys, pg_url, viewer, publisher, "reconcile", occurrence, "--happened")
    refused(capsys, pg_url, viewer, publisher, "run-now", SID)
    refused(capsys, pg_url, viewer, publisher, "engine", "fence")
    refused(capsys, pg_url, viewer, "engine", "engine", "run", "--once", "--now", DUE)
    assert _state(pg_url, capsys) == before


@ON_POSTGRESQL
def test_a_publisher_decides_but_runs_no_engine(
    pg_url: str, names: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    publisher = names["publisher"]
    grant(capsys, pg_url, publisher, "publisher")
    occurrence = _unknown_effect(pg_url, capsys)
    url = as_role(pg_url, publisher)
    for argv in (
        ["apply", str(tmp_path / "spec2.yaml")],
        ["pause", SID],
        ["resume", SID],
        ["reconcile", occurrence, "--happened", "--note", "checked by hand"],
        ["run-now", SID],
        ["backfill", SID, "--from", "2026-02-26", "--to", "2026-02-28"],
        ["engine", "fence"],
        ["disable", SID],
        ["resume", SID],
    ):
        status, _out, err = schedctl(capsys, *argv, "--db", url, "--now", NOW)
        assert (status, err) == (0, ""), (argv, err)
    before = _state(pg_url, capsys)
    refused(capsys, pg_url, publisher, "engine", "engine", "run", "--once", "--now", DUE)
    assert _state(pg_url, capsys) == before
    assert not published.exists()


@ON_POSTGRESQL
def test_an_engine_runs_what_was_published_but_cannot_publish(
    pg_url: str, names: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    engine = names["engine"]
    grant(capsys, pg_url, engine, "engine")
    # The owner published: the engine runs it when it trusts the owner's role.
    owner = str(make_url(pg_url).username)
    url = as_role(pg_url, engine)
    status, _out, err = schedctl(capsys, "engine", "run", "--once", "--trust", owner, "--db", url, "--now", DUE)
    assert (status, err) == (0, ""), err
    assert published.read_text() == "ran\n"
    [(outcome, exit_status)] = _owner(pg_url, "SELECT outcome, exit_status FROM attempts")
    assert (outcome, exit_status) == ("SUCCEEDED", 0)
    before = _state(pg_url, capsys)
    refused(capsys, pg_url, engine, "publisher", "apply", str(tmp_path / "spec2.yaml"), "--now", DUE)
    refused(capsys, pg_url, engine, "publisher", "pause", SID)
    refused(capsys, pg_url, engine, "publisher", "disable", SID)
    refused(capsys, pg_url, engine, "publisher", "engine", "fence")
    assert _state(pg_url, capsys) == before


# --- exactly the rights of the kind, and no more ------------------------------------


def _columns(url: str, table: str) -> list[str]:
    return [
        c for (c,) in _owner(url, "SELECT column_name FROM information_schema.columns WHERE table_name = :t", t=table)
    ]


def _effective(url: str, role: str) -> set[tuple[str, ...]]:
    """Every right ``role`` holds on the ledger's tables, sequences and schema, as the server says."""
    held: set[tuple[str, ...]] = set()
    for table in TABLES:
        for privilege in _PRIVILEGES:
            if _owner(url, "SELECT has_table_privilege(:r, :t, :p)", r=role, t=table, p=privilege)[0][0]:
                held.add((table, privilege))
        columns = [
            c
            for (c,) in _owner(url, "SELECT column_name FROM information_schema.columns WHERE table_name = :t", t=table)
        ]
        for column in columns:
            if _owner(url, "SELECT has_column_privilege(:r, :t, :c, 'UPDATE')", r=role, t=table, c=column)[0][0]:
                held.add((table, column, "UPDATE"))
    for (sequence,) in _owner(url, "SELECT relname FROM pg_class WHERE relkind = 'S'"):
        for privilege in ("USAGE", "SELECT", "UPDATE"):
            if _owner(url, "SELECT has_sequence_privilege(:r, :s, :p)", r=role, s=sequence, p=privilege)[0][0]:
                held.add((sequence, privilege))
    if _owner(url, "SELECT has_schema_privilege(:r, 'public', 'CREATE')", r=role)[0][0]:
        held.add(("public", "CREATE"))
    return held


def _expected(url: str, kind: RoleKind) -> set[tuple[str, ...]]:
    expected: set[tuple[str, ...]] = set()
    for table, rights in PRIVILEGES[kind].items():
        expected |= {(table, privilege) for privilege in rights.privileges}
        columns = [
            c
            for (c,) in _owner(url, "SELECT column_name FROM information_schema.columns WHERE table_name = :t", t=table)
        ]
        updates = columns if "UPDATE" in rights.privileges else rights.update_columns
        expected |= {(table, column, "UPDATE") for column in updates}
        if "INSERT" in rights.privileges and table in ("events", "expired_ranges", "alert_outbox"):
            expected.add((f"{table}_id_seq", "USAGE"))
    return expected


@ON_POSTGRESQL
def test_granting_another_kind_leaves_exactly_its_rights(
    pg_url: str, names: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    role = names["viewer"]
    grant(capsys, pg_url, role, "viewer")
    assert _effective(pg_url, role) == _expected(pg_url, RoleKind.VIEWER)
    assert grant(capsys, pg_url, role, "engine") == f"role {role!r} is now an engine, with exactly that kind's rights\n"
    assert _effective(pg_url, role) == _expected(pg_url, RoleKind.ENGINE)
    status, _out, err = schedctl(capsys, "engine", "run", "--once", "--db", as_role(pg_url, role), "--now", DUE)
    assert (status, err) == (0, ""), err
    grant(capsys, pg_url, role, "viewer")
    assert _effective(pg_url, role) == _expected(pg_url, RoleKind.VIEWER)
    refused(capsys, pg_url, role, "engine", "engine", "run", "--once", "--now", DUE)
    grant(capsys, pg_url, role, "publisher")
    assert _effective(pg_url, role) == _expected(pg_url, RoleKind.PUBLISHER)


@ON_POSTGRESQL
def test_no_kind_may_change_the_schema(pg_url: str, names: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert schedctl(capsys, "db", "upgrade", "--db", pg_url)[0] == 0
    for kind in RoleKind:
        role = names[kind.value]
        grant(capsys, pg_url, role, kind.value)
        engine = create_engine(as_role(pg_url, role))
        try:
            with engine.connect() as conn:
                for ddl in (
                    "CREATE TABLE intruder (x int)",
                    f"DROP TABLE {VERSION_TABLE}",
                    "ALTER TABLE schedules ADD COLUMN x int",
                ):
                    with pytest.raises(DBAPIError, match=r"permission denied|must be owner"), conn.begin():
                        conn.execute(text(ddl))
                with pytest.raises(DBAPIError, match="permission denied"), conn.begin():
                    conn.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = 'x'"))
        finally:
            engine.dispose()


# --- names, and where roles do not apply -------------------------------------------------


@ON_POSTGRESQL
def test_a_name_with_quotes_spaces_and_percent_signs_is_quoted(
    pg_url: str, names: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = names["odd"]
    said = grant(capsys, pg_url, odd, "viewer")
    assert said.splitlines()[1].startswith('give it one as the owner in psql with \\password "tm ')
    assert _owner(pg_url, "SELECT count(*) FROM pg_roles WHERE rolname = :r", r=odd) == [(1,)]
    assert _effective(pg_url, odd) == _expected(pg_url, RoleKind.VIEWER)
    assert schedctl(capsys, "schedules", "--db", as_role(pg_url, odd))[0] == 0
    refused(capsys, pg_url, odd, "publisher", "pause", SID)


@ON_POSTGRESQL
@pytest.mark.parametrize(
    ("name", "why"),
    [
        pytest.param(
            "bad\x00name",
            "argument ROLE: contains a NUL byte, which no program argument, environment variable or ledger can hold "
            "(see schedctl db grant --help)",
            id="nul_byte",
        ),
        pytest.param("bad\nname", "a role name cannot hold control characters", id="newline"),
        pytest.param("x" * 64, "a role name has at most 63 bytes; PostgreSQL would cut it short", id="too_long"),
        pytest.param("pg_monitor", "PostgreSQL keeps that name for itself; choose another", id="reserved_pg"),
        pytest.param("public", "PostgreSQL keeps that name for itself; choose another", id="reserved_public"),
        pytest.param("", "a role needs a name", id="empty"),
    ],
)
def test_a_name_postgresql_cannot_hold_is_refused(
    pg_url: str, name: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    roles = _owner(pg_url, "SELECT count(*) FROM pg_roles")
    status, out, err = schedctl(capsys, "db", "grant", name, "--as", "viewer", "--db", pg_url)
    assert (status, out) == (2, "")
    assert len(err.splitlines()) == 1 and err.rstrip().endswith(why), err
    assert _owner(pg_url, "SELECT count(*) FROM pg_roles") == roles


def test_the_core_refuses_a_nul_byte_too() -> None:
    with pytest.raises(LedgerError, match="a role name cannot hold a NUL byte"):
        check_role_name("bad\x00name")


@ON_POSTGRESQL
def test_the_owner_and_a_superuser_are_refused(
    pg_url: str, names: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    owner = make_url(pg_url).username
    assert schedctl(capsys, "db", "upgrade", "--db", pg_url)[0] == 0
    status, out, err = schedctl(capsys, "db", "grant", str(owner), "--as", "viewer", "--db", pg_url)
    assert (status, out) == (2, "")
    assert err == f"schedctl db grant: {owner!r} is a superuser: it has every right on the ledger; grant another role\n"
    member = names["viewer"]
    _owner(pg_url, f"CREATE ROLE {member} LOGIN")
    _owner(pg_url, f"GRANT {owner} TO {member}")
    status, out, err = schedctl(capsys, "db", "grant", member, "--as", "viewer", "--db", pg_url)
    assert (status, out) == (2, "")
    assert err == (
        f"schedctl db grant: {member!r} owns the ledger (or is a member of its owner {owner!r}): "
        "it has every right on it; grant another role\n"
    )
    assert not _owner(pg_url, "SELECT 1 FROM information_schema.role_table_grants WHERE grantee = :m", m=member)


def test_sqlite_has_no_roles(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    status, out, err = schedctl(capsys, "db", "grant", "alice", "--as", "viewer", "--db", str(path))
    assert (status, out) == (2, "")
    assert err == (
        f"schedctl db grant: {path}: database roles are PostgreSQL's; "
        "a SQLite ledger is a file, and its mode says who may use it\n"
    )
    assert list(tmp_path.iterdir()) == []


# --- the policy table -------------------------------------------------------------------


def test_every_table_of_the_ledger_has_its_rights_decided() -> None:
    assert set(TABLES) == set(Base.metadata.tables) | {VERSION_TABLE}
    for kind in RoleKind:
        assert set(PRIVILEGES[kind]) == set(TABLES), kind


def test_docs_show_the_policy_table() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "ledger.md").read_text()
    assert privileges_markdown() in docs


@ON_POSTGRESQL
def test_a_core_call_that_words_the_failure_itself_is_the_same_line(
    pg_url: str, names: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A decision written through ``core.ledger.access`` (a LedgerUnavailable) reads as the command's own refusal."""
    from core.cli.ledger_access import command_clock, open_command_ledger
    from core.ledger.publish import Gate, change_gate

    viewer = names["viewer"]
    grant(capsys, pg_url, viewer, "viewer")
    args = argparse.Namespace(db=as_role(pg_url, viewer), now=NOW, command="pause")
    clock = command_clock(args)
    with pytest.raises(LedgerError) as raised, open_command_ledger(args, clock, create=False) as ledger:
        change_gate(ledger, SID, Gate.PAUSE, clock)
    assert str(raised.value).endswith(
        f"the database role {viewer!r} may not change the ledger (permission denied for table schedules); "
        f"nothing was changed; the ledger's owner can give it the rights: schedctl db grant {viewer} --as publisher"
    )


@ON_POSTGRESQL
def test_a_role_never_granted_is_told_to_ask_for_a_grant(
    pg_url: str, names: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nobody = names["publisher"]
    _owner(pg_url, f"CREATE ROLE {nobody} LOGIN")
    # What a fresh database's public schema allows everyone (the test's schema is made anew).
    _owner(pg_url, f"GRANT USAGE ON SCHEMA public TO {nobody}")
    status, out, err = schedctl(capsys, "schedules", "--db", as_role(pg_url, nobody))
    assert (status, out) == (2, "")
    assert err.endswith(
        f"the database role {nobody!r} may not read the ledger (permission denied for table {VERSION_TABLE}); "
        f"the ledger's owner can give it the rights: schedctl db grant {nobody} --as viewer|publisher|engine\n"
    ), err


@ON_POSTGRESQL
def test_only_the_owner_migrates(
    pg_url: str, names: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from alembic import command

    from core.ledger.db import alembic_config

    viewer = names["viewer"]
    grant(capsys, pg_url, viewer, "viewer")
    engine = create_engine(pg_url)
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0006")
    finally:
        engine.dispose()
    status, out, err = schedctl(capsys, "schedules", "--db", as_role(pg_url, viewer))
    assert (status, out) == (2, "")
    assert err.endswith(
        f"the database role {viewer!r} may not migrate the ledger to this Tidemark's schema "
        "(must be owner of table schedules); only the ledger's owner migrates it: ask them to run schedctl db upgrade\n"
    ), err
    [(version,)] = _owner(pg_url, f"SELECT version_num FROM {VERSION_TABLE}")
    assert version.startswith("0006")


@ON_POSTGRESQL
def test_an_engine_records_a_long_outage_as_an_expired_range(
    pg_url: str, names: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Materializing after an outage writes ``expired_ranges`` (and its id sequence) and moves the cursor."""
    spec = DAILY | {"scheduleId": "every-minute", "rule": "FREQ=MINUTELY", "horizon": "PT1H"}
    (tmp_path / "minute.yaml").write_text(yaml.safe_dump(spec))
    assert schedctl(capsys, "apply", str(tmp_path / "minute.yaml"), "--db", pg_url, "--now", NOW)[0] == 0
    engine = names["engine"]
    grant(capsys, pg_url, engine, "engine")
    url = as_role(pg_url, engine)
    owner = str(make_url(pg_url).username)  # who published
    status, out, err = schedctl(
        capsys, "engine", "run", "--once", "--trust", owner, "--db", url, "--now", "2026-03-11T12:00:00Z"
    )
    assert (status, err) == (0, ""), err
    assert "expired range" in out, out
    assert _owner(pg_url, "SELECT count(*) FROM expired_ranges") == [(1,)]
    [(succeeded,)] = _owner(pg_url, "SELECT count(*) FROM attempts WHERE outcome = 'SUCCEEDED'")
    assert succeeded > 0


@ON_POSTGRESQL
def test_a_publisher_acknowledges_and_retries_a_failure(
    pg_url: str, names: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attention queue's decisions (the window's, through the core) are within a publisher's rights."""
    from core.clock import FixedClock
    from core.engine.admin import acknowledge_failed, retry_failed
    from core.ledger.db import open_ledger

    from . import utc

    publisher = names["publisher"]
    grant(capsys, pg_url, publisher, "publisher")
    first, second = _unknown_effect(pg_url, capsys), _unknown_effect(pg_url, capsys)
    _owner(pg_url, "UPDATE occurrences SET state = 'FAILED' WHERE state = 'UNKNOWN_EFFECT'")
    clock = FixedClock(utc(NOW))
    with open_ledger(as_role(pg_url, publisher), clock, create=False) as ledger:
        acknowledge_failed(ledger, first, clock, note="seen")
        again = retry_failed(ledger, second, clock, note="once more")
    kinds = _owner(pg_url, "SELECT kind FROM events WHERE occurrence_id IN (:a, :b)", a=first, b=second)
    assert [k for (k,) in kinds].count("occurrence.acknowledged") == 2
    assert _owner(pg_url, "SELECT state FROM occurrences WHERE occurrence_id = :o", o=again) == [("DUE",)]


@ON_POSTGRESQL
def test_rights_held_through_another_role_are_named(
    pg_url: str, names: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine, group = names["engine"], names["viewer"]
    _owner(pg_url, f"CREATE ROLE {group} NOLOGIN")
    _owner(pg_url, f"GRANT INSERT ON revisions TO {group}")
    _owner(pg_url, f"GRANT UPDATE (state) ON schedules TO {group}")
    grant(capsys, pg_url, engine, "engine")
    _owner(pg_url, f"GRANT {group} TO {engine}")
    status, out, err = schedctl(capsys, "db", "grant", engine, "--as", "engine", "--db", pg_url)
    assert (status, out) == (0, f"role {engine!r} is now an engine\n")
    assert err == (
        f"schedctl db grant: warning: {engine!r} also holds INSERT on revisions; UPDATE (state) on schedules, "
        "through a role it belongs to or PUBLIC; db grant sets only the role's own rights: revoke them there\n"
    )
    _owner(pg_url, f"REVOKE {group} FROM {engine}")
    assert (
        grant(capsys, pg_url, engine, "engine")
        == f"role {engine!r} is now an engine, with exactly that kind's rights\n"
    )


@ON_POSTGRESQL
def test_roles_granted_before_alerts_get_their_kinds_rights_on_the_alert_tables(
    pg_url: str, names: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    from alembic import command

    from core.ledger.db import alembic_config

    kinds = (RoleKind.VIEWER, RoleKind.PUBLISHER, RoleKind.ENGINE)
    for kind in kinds:
        grant(capsys, pg_url, names[kind.value], kind.value)
    engine = create_engine(pg_url)
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0013")
            command.upgrade(alembic_config(conn), "head")
    finally:
        engine.dispose()
    for kind in kinds:
        assert _effective(pg_url, names[kind.value]) == _expected(pg_url, kind), kind
