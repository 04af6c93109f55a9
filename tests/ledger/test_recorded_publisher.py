"""Who published and who acted cannot be forged (docs/ledger.md, "Who can do what to whom").

The attacks: a teammate publishes claiming to be root (``LOGNAME=root USER=root``) for
root's engine to run their command; on PostgreSQL, a publisher role writes revisions and
events in raw SQL naming another publisher, or none, or changes them afterwards. The
OS user comes from the process's uid, and on PostgreSQL the database records the role
(``session_user``) whatever the client sends; an engine decides trust on that.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from alembic import command
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from core import cli
from core.ledger.db import Ledger, alembic_config

from . import DAILY
from .os_users import Teammate
from .pg_roles import as_role, drop_role, grant, granted, owner_sql
from .team_processes import Team

SID = DAILY["scheduleId"]
NOW = "2026-03-01T12:00:00Z"
#: 02:30 New York on 2 March 2026, half a minute later.
DUE = "2026-03-02T07:30:30Z"
#: What the attacker's environment says about who they are.
ROOT_CLAIMS = {"LOGNAME": "root", "USER": "root"}

ON_POSTGRESQL = pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every OS user may write (the teammate creates a SQLite ledger in it)."""
    folder = Path(tempfile.mkdtemp(prefix="tidemark-trust-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


@pytest.mark.slow
def test_a_teammate_claiming_to_be_root_is_not_run_by_roots_engine(
    ledger_url: str, teammate: Teammate, shared: Path
) -> None:
    """On SQLite the publisher is the uid's user; on PostgreSQL the role the teammate logged in as
    (named after them), and root's engine logs in as an engine role of its own."""
    roles: list[str] = []
    if ledger_url.startswith("sqlite"):
        publish_url = engine_url = str(shared / "ledger.db")
        named = teammate.name
    else:
        grant(ledger_url, teammate.name, "publisher")
        roles.append(teammate.name)
        engine_role = f"{teammate.name}_engine"
        grant(ledger_url, engine_role, "engine")
        roles.append(engine_role)
        publish_url, engine_url = as_role(ledger_url, teammate.name), as_role(ledger_url, engine_role)
        named = f"role {teammate.name}"
    try:
        team = Team(engine_url, shared)
        teammate.apply(team.spec_file("theirs"), publish_url, "alpha", **ROOT_CLAIMS)

        # root's engine on alpha does not run it, and says why.
        assert team.engine("alpha", DUE) == [
            f"schedule theirs waits for another engine: revision 1 published by {named}, whom this engine "
            "does not trust (schedctl engine run --trust)"
        ]
        assert team.schedules_while_an_engine_runs("alpha")[-1] == (
            f"theirs: waiting for an engine with host=alpha; publisher {named} is not trusted by the live engines"
        )
        assert team.ran() == []

        # The audit log names who published: the teammate (their uid), on alpha, and their role.
        events = json.loads(team.run("alpha", "events", "--schedule", "theirs", "--format", "json", now=DUE))
        [published] = [e for e in events["events"] if e["kind"] == "schedule.published"]
        role = None if ledger_url.startswith("sqlite") else teammate.name
        assert published["actor"] == {"user": teammate.name, "host": "alpha", "role": role}

        # Trusting them by name, it runs it.
        assert team.engine("alpha", DUE, "--trust", teammate.name) == []
        assert team.ran() == ["theirs 2026-03-02T02:30:00 alpha"]
    finally:
        for made in roles:
            drop_role(ledger_url, made)


# --- raw SQL on PostgreSQL ------------------------------------------------------------------

_REVISION_COLUMNS = (
    "schedule_id, revision, spec_json, cutover_at, tzdb_version, published_at, source_path, source_host, "
    "publisher_user, publisher_host, publisher_role, tzif, engine_version, holidays_version"
)
_FORGED_REVISION = (
    f"INSERT INTO revisions ({_REVISION_COLUMNS}) "
    "SELECT schedule_id, :number, spec_json, cutover_at, tzdb_version, published_at, source_path, source_host, "
    "NULL, publisher_host, :claimed, tzif, engine_version, holidays_version FROM revisions WHERE revision = 1"
)
_FORGED_EVENT = (
    "INSERT INTO events (at, schedule_id, kind, data, actor_user, actor_host, actor_role) "
    "VALUES (now(), :sid, 'schedule.paused', CAST(:data AS json), :user, :host, :claimed)"
)


def _as(url: str, role: str, *statements: tuple[str, dict[str, Any]]) -> None:
    """``statements`` in one transaction, logged in as ``role``."""
    engine = create_engine(as_role(url, role))
    try:
        with engine.begin() as conn:
            for sql, params in statements:
                conn.execute(text(sql), params)
    finally:
        engine.dispose()


def _schedctl(*argv: str) -> tuple[int, str, str]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def cast(ledger_url: str) -> Iterator[dict[str, str]]:
    """A ledger's cast, each a granted role: mallory and victim publish (mallory may SET ROLE
    victim), and an engine runs root's engine."""
    with granted(ledger_url, "publisher", "publisher", "engine") as (mallory, victim, engine):
        owner_sql(ledger_url, f"GRANT {victim} TO {mallory}")
        yield {"mallory": mallory, "victim": victim, "engine": engine}


@ON_POSTGRESQL
def test_a_revision_forged_in_raw_sql_records_the_role_that_wrote_it_and_is_not_run(
    ledger_url: str, cast: dict[str, str], tmp_path: Path
) -> None:
    mallory, victim = cast["mallory"], cast["victim"]
    marker = tmp_path / "ran.txt"
    spec = DAILY | {"task": {"argv": ["/bin/sh", "-c", f"echo ran >> {marker}"]}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    assert _schedctl("apply", str(tmp_path / "spec.yaml"), "--db", as_role(ledger_url, mallory), "--now", NOW)[0] == 0
    _as(
        ledger_url,
        mallory,
        (_FORGED_REVISION, {"number": 2, "claimed": None}),  # "no publisher", once trusted as before 0008
        (_FORGED_REVISION, {"number": 3, "claimed": victim}),
        ("SET ROLE " + victim, {}),  # current_user is victim now; session_user is not
        (_FORGED_REVISION, {"number": 4, "claimed": victim}),
        ("UPDATE schedules SET active_revision = 4", {}),
    )
    assert owner_sql(ledger_url, "SELECT revision, publisher_user, publisher_role FROM revisions ORDER BY 1") == [
        (1, "root", mallory),
        (2, None, mallory),
        (3, None, mallory),
        (4, None, mallory),
    ]
    # root's engine trusts the victim: nothing of mallory's runs.
    engine_url = as_role(ledger_url, cast["engine"])
    status, out, err = _schedctl("engine", "run", "--once", "--trust", victim, "--db", engine_url, "--now", DUE)
    assert (status, err) == (0, ""), err
    assert f"revision 4 published by role {mallory}, whom this engine does not trust" in out, out
    assert not marker.exists()


@ON_POSTGRESQL
@pytest.mark.parametrize(
    ("who", "refusal"),
    [
        pytest.param("mallory", "permission denied for table revisions", id="publisher_has_no_update"),
        pytest.param("owner", "revisions.publisher_role is recorded by the database: it cannot be changed",
                     id="owner_is_refused_by_the_database"),
    ],
)  # fmt: skip
def test_a_recorded_publisher_cannot_be_changed(
    ledger_url: str, cast: dict[str, str], tmp_path: Path, who: str, refusal: str
) -> None:
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(DAILY))
    assert _schedctl("apply", str(tmp_path / "spec.yaml"), "--db", as_role(ledger_url, cast["mallory"]))[0] == 0
    role = cast["mallory"] if who == "mallory" else None
    with pytest.raises(DBAPIError, match=refusal):
        if role is None:
            owner_sql(ledger_url, "UPDATE revisions SET publisher_role = :r", r=cast["victim"])
        else:
            _as(ledger_url, role, ("UPDATE revisions SET publisher_role = :r", {"r": cast["victim"]}))
    assert owner_sql(ledger_url, "SELECT publisher_role FROM revisions") == [(cast["mallory"],)]


@ON_POSTGRESQL
@pytest.mark.parametrize(
    ("writer", "set_role", "user", "host", "claimed"),
    [
        pytest.param("mallory", None, "bob", "beta", "victim", id="publisher_claims_another_role"),
        pytest.param("mallory", "victim", "bob", "beta", None, id="publisher_after_set_role"),
        pytest.param("engine", None, "carol", "desk", "mallory", id="engine_claims_a_publisher"),
    ],
)
def test_an_event_records_the_role_that_wrote_it_beside_the_claimed_user(
    ledger_url: str,
    cast: dict[str, str],
    tmp_path: Path,
    writer: str,
    set_role: str | None,
    user: str,
    host: str,
    claimed: str | None,
) -> None:
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(DAILY))
    assert _schedctl("apply", str(tmp_path / "spec.yaml"), "--db", ledger_url, "--now", NOW)[0] == 0
    statements = [] if set_role is None else [("SET ROLE " + cast[set_role], {})]
    params = {"sid": SID, "data": '{"from": "active", "note": "forged"}', "user": user, "host": host}
    _as(ledger_url, cast[writer], *statements, (_FORGED_EVENT, params | {"claimed": cast.get(claimed or "")}))
    status, out, err = _schedctl("events", "--kind", "schedule.paused", "--format", "json", "--db", ledger_url)
    assert (status, err) == (0, ""), err
    [forged] = json.loads(out)["events"]
    assert forged["actor"] == {"user": user, "host": host, "role": cast[writer]}
    status, out, err = _schedctl("events", "--kind", "schedule.paused", "--db", ledger_url)
    header, line = out.splitlines()
    assert line[header.index("Claimed by") :].startswith(f"{user}@{host} ")
    assert line[header.index("Database role") :].startswith(f"{cast[writer]} ")
    with pytest.raises(DBAPIError, match="events are append-only"):
        owner_sql(ledger_url, "UPDATE events SET actor_role = :r", r=cast[writer] + "x")
    with pytest.raises(DBAPIError, match="permission denied for table events"):
        _as(ledger_url, cast["mallory"], ("UPDATE events SET actor_role = 'x'", {}))


_TRIGGERS = "SELECT tgname FROM pg_trigger WHERE tgname LIKE '%record_role' ORDER BY 1"
_FUNCTIONS = "SELECT proname FROM pg_proc WHERE proname LIKE 'tidemark_%record_role' ORDER BY 1"


@ON_POSTGRESQL
def test_the_migration_adds_the_triggers_and_its_downgrade_removes_them(ledger: Ledger, ledger_url: str) -> None:
    recorded = [("events_record_role",), ("revisions_record_role",)]
    assert owner_sql(ledger_url, _TRIGGERS) == recorded
    assert owner_sql(ledger_url, _FUNCTIONS) == [("tidemark_events_record_role",), ("tidemark_revisions_record_role",)]
    engine = create_engine(ledger_url)
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0010")
        assert owner_sql(ledger_url, _TRIGGERS) == owner_sql(ledger_url, _FUNCTIONS) == []
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "head")
    finally:
        engine.dispose()
    assert owner_sql(ledger_url, _TRIGGERS) == recorded
