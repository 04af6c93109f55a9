"""docs/ledger.md's team set-up, followed as written on a fresh database of the PostgreSQL
server: its first step's SQL as the administrator, then ``db upgrade`` as the owner it makes,
every ``db grant`` of its second step, a publish, an engine pass and a viewer's look. Roles and
the database carry a random tag (the server is shared) and are dropped at the end."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

import psycopg
import pytest
import yaml
from psycopg import sql
from sqlalchemy import make_url

from core import cli

from . import DAILY
from .pg_roles import as_role, drop_role

DOC = Path(__file__).resolve().parents[2] / "docs" / "ledger.md"
pytestmark = pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)


def _step_one() -> list[str]:
    """The administrator's statements of the first step."""
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    found = re.search(r"\(`(CREATE ROLE tidemark [^`]*)`\)", text)
    assert found is not None
    return [part.strip() for part in found.group(1).split(";") if part.strip()]


def _grants() -> list[tuple[str, str]]:
    """Each ``schedctl db grant ROLE --as KIND`` of the second step."""
    return re.findall(r"^\s*\$ schedctl db grant (\w+) --as (\w+)$", DOC.read_text(encoding="utf-8"), re.M)


def _schedctl(*argv: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli.main(list(argv))
    return status, out.getvalue(), err.getvalue()


class Cluster:
    """The administrator's connection, and every name the recipe uses made unique to the test."""

    def __init__(self, admin_url: str) -> None:
        self.admin = make_url(admin_url)
        self.tag = uuid.uuid4().hex[:8]
        self.made: list[str] = []

    def name(self, doc_name: str) -> str:
        return f"tm_{self.tag}_{doc_name}"

    def url(self, role: str) -> str:
        return as_role(self.admin.set(database=self.name("tidemark")).render_as_string(hide_password=False), role)

    def run(self, statement: str) -> None:
        """A statement of the docs as the administrator, the docs' names made the test's."""
        named = re.sub(r"\btidemark\b", self.name("tidemark"), statement)
        plain = self.admin.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(named.encode())

    def drop(self) -> None:
        plain = self.admin.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.name("tidemark")))
            )
        for role in [*self.made, self.name("tidemark")]:
            drop_role(self.admin.render_as_string(hide_password=False), role)


@pytest.fixture
def cluster(ledger_url: str) -> Iterator[Cluster]:
    made = Cluster(ledger_url)
    try:
        yield made
    finally:
        made.drop()


def test_the_team_recipe_works_as_written_on_a_fresh_cluster(cluster: Cluster, tmp_path: Path) -> None:
    for statement in _step_one():
        cluster.run(statement)
    owner = cluster.url(cluster.name("tidemark"))
    assert _schedctl("db", "upgrade", "--db", owner)[0] == 0
    grants = _grants()
    assert {kind for _, kind in grants} == {"publisher", "viewer", "engine"}
    for role, kind in grants:
        cluster.made.append(cluster.name(role))
        status, out, err = _schedctl("db", "grant", cluster.name(role), "--as", kind, "--db", owner)
        assert (status, err) == (0, ""), err
        assert out.startswith(f"created role {cluster.name(role)!r} as a")
    spec = tmp_path / "backup.yaml"
    spec.write_text(yaml.safe_dump(DAILY))
    alice, engine, carol = (cluster.url(cluster.name(r)) for r in ("alice", "engine_alpha", "carol"))
    assert _schedctl("apply", str(spec), "--db", alice, "--now", "2026-03-01T12:00:00Z")[0] == 0
    trust = ("--trust", cluster.name("alice"))
    status, out, err = _schedctl(
        "engine", "run", "--once", "--allow-second", *trust, "--db", engine, "--now", "2026-03-02T07:30:30Z"
    )
    assert (status, err) == (0, ""), err
    assert "outcomes: SUCCEEDED 1" in out, out
    status, out, _ = _schedctl("schedules", "--db", carol, "--now", "2026-03-02T07:31:00Z")
    assert status == 0 and "SUCCEEDED 1" in out


def test_an_owner_that_may_not_create_roles_is_told_exactly_what_to_run(cluster: Cluster) -> None:
    for statement in _step_one():
        cluster.run(statement.replace(" CREATEROLE", ""))
    owner = cluster.url(cluster.name("tidemark"))
    assert _schedctl("db", "upgrade", "--db", owner)[0] == 0
    alice = cluster.name("alice")
    cluster.made.append(alice)
    status, out, err = _schedctl("db", "grant", alice, "--as", "publisher", "--db", owner)
    assert (status, out) == (2, "")
    assert err == (
        f"schedctl db grant: role {alice!r} does not exist and {cluster.name('tidemark')!r} may not create roles; "
        f'as a superuser, run ALTER ROLE "{cluster.name("tidemark")}" CREATEROLE (or create it: CREATE ROLE '
        f'"{alice}" LOGIN), then db grant again; nothing was changed\n'
    )
    cluster.run(f'ALTER ROLE "{cluster.name("tidemark")}" CREATEROLE')
    assert _schedctl("db", "grant", alice, "--as", "publisher", "--db", owner)[0] == 0
