"""Where a task runs and whom an engine trusts (docs/ledger.md, "Teams": "Where a
task runs" and "Whom an engine trusts"): engines play the hosts alpha and beta with an
injected :class:`~core.team.actor.Actor`, and revisions are published by an injected
actor. Two engines share a PostgreSQL ledger; what one engine shows runs on both
backends. Someone the engine does not trust is another OS user on SQLite (an injected
actor: everyone who may write the file is one principal) and, on PostgreSQL, another
database role, granted and logged in as (the database records the role)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from alembic import command
from sqlalchemy import make_url, select, update

from core import cli
from core.clock import FixedClock
from core.engine.engine import Engine, EngineOptions, PassReport
from core.engine.presence import STALE_AFTER, announce, heartbeat
from core.ledger.db import Ledger, alembic_config, open_ledger
from core.ledger.models import Attempt, EngineRow, Revision
from core.ledger.monitor_reads import engines_seen, schedule_summaries
from core.ledger.publish import publish
from core.ledger.states import EngineKind
from core.team.actor import Actor, os_user
from core.team.placement import NO_PUBLISHER, Placement

from . import by_nominal, spec, utc
from .pg_roles import as_role, granted

ME = os_user()
ALPHA = Actor(ME, "alpha")
BETA = Actor(ME, "beta")
#: 02:30 New York on 2 March 2026, half a minute later.
FIRST_DUE = "2026-03-02T07:30:30Z"

two_engines = pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)


def put(ledger: Ledger, clock: FixedClock, by: Actor = ALPHA, **overrides: Any) -> None:
    with ledger.write() as session:
        publish(session, spec(**overrides), clock, actor=by)


def engine(ledger: Ledger, clock: FixedClock, actor: Actor, *, trusts: tuple[str, ...] = ()) -> Engine:
    return Engine(ledger, clock, EngineOptions(max_workers=1), placement=Placement.of(actor, trusts=trusts))


def pass_at(clock: FixedClock, when: str, *engines: Engine) -> list[PassReport]:
    clock.set(utc(when))
    return [e.run_once() for e in engines]


def started(reports: list[PassReport]) -> list[int]:
    return [r.outcomes["SUCCEEDED"] for r in reports]


def states(ledger: Ledger, until: str = "2026-03-05T23:59:59") -> dict[str, str]:
    """The schedule's occurrences up to ``until`` (local), by nominal time."""
    with ledger.read() as session:
        return {k[0]: o.state.value for k, o in by_nominal(session, "daily-ops-summary").items() if k[0] <= until}


def waiting(ledger: Ledger, clock: FixedClock) -> str | None:
    """What the monitor's schedule summary says the schedule waits for."""
    [summary] = schedule_summaries(ledger, clock.now(), STALE_AFTER)
    return summary.waiting


def attempts(ledger: Ledger) -> int:
    with ledger.read() as session:
        return len(session.scalars(select(Attempt)).all())


@two_engines
def test_without_runs_on_a_schedule_runs_only_on_the_host_it_was_published_from(
    ledger: Ledger, clock: FixedClock
) -> None:
    put(ledger, clock, by=ALPHA)
    alpha, beta = engine(ledger, clock, ALPHA), engine(ledger, clock, BETA)
    beta_first = pass_at(clock, FIRST_DUE, beta, alpha)
    assert started(beta_first) == [0, 1]
    assert beta_first[0].refused == {"daily-ops-summary": "revision 1 runs on an engine with host=alpha"}
    assert started(pass_at(clock, "2026-03-03T07:30:30Z", beta, alpha)) == [0, 1]


@two_engines
def test_runs_on_a_host_runs_only_there(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, by=ALPHA, runsOn={"host": "beta"})
    alpha, beta = engine(ledger, clock, ALPHA), engine(ledger, clock, BETA)
    assert started(pass_at(clock, FIRST_DUE, alpha, beta)) == [0, 1]
    assert started(pass_at(clock, "2026-03-03T07:30:30Z", alpha, beta)) == [0, 1]


@two_engines
def test_any_engine_runs_it_on_either_and_never_twice(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, by=ALPHA, runsOn={"any": True})
    alpha, beta = engine(ledger, clock, ALPHA), engine(ledger, clock, BETA)
    assert started(pass_at(clock, FIRST_DUE, beta, alpha)) == [1, 0]
    assert started(pass_at(clock, "2026-03-03T07:30:30Z", alpha, beta)) == [1, 0]
    assert attempts(ledger) == 2
    assert states(ledger)["2026-03-02T02:30:00"] == states(ledger)["2026-03-03T02:30:00"] == "SUCCEEDED"


@two_engines
def test_with_its_host_gone_a_schedule_waits_and_its_misfire_policy_applies_when_the_host_returns(
    ledger: Ledger, clock: FixedClock, ledger_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    put(ledger, clock, by=ALPHA, misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=1)
    alpha, beta = engine(ledger, clock, ALPHA), engine(ledger, clock, BETA)
    assert started(pass_at(clock, FIRST_DUE, alpha)) == [1]
    alpha_id = announce(ledger, clock, EngineKind.HEADLESS, placement=alpha.context.placement)
    beta_id = announce(ledger, clock, EngineKind.HEADLESS, placement=beta.context.placement)
    assert waiting(ledger, clock) is None
    # alpha is away for three days: beta neither runs nor expires what comes due.
    for day in ("03", "04", "05"):
        report = pass_at(clock, f"2026-03-{day}T09:00:00Z", beta)[0]
        assert heartbeat(ledger, clock, beta_id)
        assert (report.started, report.expired, report.expired_ranges, report.promoted) == (0, 0, 0, 0)
    # ... and says so: the monitor's read and schedctl schedules.
    line = "waiting for an engine with host=alpha; none seen for 3 days 1 h 29 min"
    assert waiting(ledger, clock) == line
    assert cli.main(["schedules", "--db", ledger_url, "--now", "2026-03-05T09:00:00Z"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"daily-ops-summary: {line}"
    assert states(ledger) == {
        "2026-03-02T02:30:00": "SUCCEEDED",
        "2026-03-03T02:30:00": "PLANNED",
        "2026-03-04T02:30:00": "PLANNED",
        "2026-03-05T02:30:00": "PLANNED",
    }
    # alpha returns: the misfire policy catches up the newest, the older ones expire.
    assert heartbeat(ledger, clock, alpha_id)
    assert waiting(ledger, clock) is None
    report = pass_at(clock, "2026-03-05T09:00:00Z", alpha)[0]
    assert report.outcomes["SUCCEEDED"] == 1
    assert states(ledger) == {
        "2026-03-02T02:30:00": "SUCCEEDED",
        "2026-03-03T02:30:00": "MISFIRE_EXPIRED",
        "2026-03-04T02:30:00": "MISFIRE_EXPIRED",
        "2026-03-05T02:30:00": "SUCCEEDED",
    }


@contextmanager
def someone_else(ledger: Ledger, ledger_url: str, clock: FixedClock) -> Iterator[tuple[Ledger, str, str]]:
    """A ledger that publishes as someone this process's engines do not trust, the name to
    ``--trust`` and how the engine's lines name them: on SQLite the OS user ``bob-ME`` (an
    injected actor), on PostgreSQL a granted publisher role (whatever user the client claims)."""
    if ledger_url.startswith("sqlite"):
        bob = "bob-" + ME
        ledger.actor = Actor(bob, "alpha")
        yield ledger, bob, bob
        return
    with granted(ledger_url, "publisher") as [role]:
        other = open_ledger(as_role(ledger_url, role), clock, create=False)
        other.actor = ALPHA  # the client claims to be this process's user: the role decides
        try:
            yield other, role, f"role {role}"
        finally:
            other.close()


def test_a_revision_of_another_user_waits_until_the_engine_trusts_them(
    ledger: Ledger, clock: FixedClock, ledger_url: str
) -> None:
    with someone_else(ledger, ledger_url, clock) as (theirs, name, named):
        with theirs.write() as session:
            publish(session, spec(), clock)
        mine = engine(ledger, clock, ALPHA)
        report = pass_at(clock, FIRST_DUE, mine)[0]
        assert (report.started, report.promoted, report.expired) == (0, 0, 0)
        assert report.refused == {
            "daily-ops-summary": f"revision 1 published by {named}, whom this engine does not trust "
            "(schedctl engine run --trust)"
        }
        announce(ledger, clock, EngineKind.HEADLESS, placement=mine.context.placement)
        assert waiting(ledger, clock) == (
            f"waiting for an engine with host=alpha; publisher {named} is not trusted by the live engines"
        )
        trusting = engine(ledger, clock, ALPHA, trusts=(name,))
        assert started(pass_at(clock, FIRST_DUE, trusting)) == [1]
        anyone = engine(ledger, clock, ALPHA, trusts=("*",))
        assert started(pass_at(clock, "2026-03-03T07:30:30Z", anyone)) == [1]


def test_trust_does_not_widen_the_hosts(ledger: Ledger, clock: FixedClock) -> None:
    put(ledger, clock, by=Actor("bob-" + ME, "alpha"))
    assert started(pass_at(clock, FIRST_DUE, engine(ledger, clock, BETA, trusts=("*",)))) == [0]


def publish_unrecorded(ledger: Ledger, ledger_url: str, clock: FixedClock) -> None:
    """A revision whose publisher the ledger did not record: on SQLite one from before 0008 (its
    columns empty), on PostgreSQL one published before 0011 (whose role the upgrade clears)."""
    if ledger_url.startswith("sqlite"):
        put(ledger, clock, by=Actor("bob-" + ME, "alpha"), runsOn={"any": True})
        with ledger.write() as session:
            session.execute(update(Revision).values(publisher_user=None, publisher_host=None, publisher_role=None))
        return
    put(ledger, clock, by=ALPHA, runsOn={"any": True})
    with ledger.engine.begin() as conn:  # as if published before 0011: its upgrade clears the role
        command.downgrade(alembic_config(conn), "0010")
        command.upgrade(alembic_config(conn), "head")


def test_a_revision_without_a_recorded_publisher_runs_only_where_anyone_is_trusted(
    ledger: Ledger, clock: FixedClock, ledger_url: str
) -> None:
    publish_unrecorded(ledger, ledger_url, clock)
    with ledger.read() as session:
        assert session.scalar(select(Revision.publisher_role)) is None
    mine = engine(ledger, clock, BETA, trusts=(ME, "bob-" + ME, "postgres"))
    report = pass_at(clock, FIRST_DUE, mine)[0]
    assert (report.started, report.refused) == (0, {"daily-ops-summary": f"revision 1 {NO_PUBLISHER}"})
    announce(ledger, clock, EngineKind.HEADLESS, placement=mine.context.placement)
    assert waiting(ledger, clock) == (
        "waiting for an engine; it has no recorded publisher: publish it again (schedctl apply)"
    )
    assert started(pass_at(clock, FIRST_DUE, engine(ledger, clock, BETA, trusts=("*",)))) == [1]
    # Published again, it records its publisher, whom the engine trusts.
    put(ledger, clock, by=BETA, runsOn={"any": True}, revision=2)
    assert started(pass_at(clock, "2026-03-03T07:30:30Z", mine)) == [1]


def test_a_revision_records_its_publisher(ledger: Ledger, clock: FixedClock, ledger_url: str) -> None:
    """The user and host are what the client says; the role (PostgreSQL) is the one it logged in as."""
    put(ledger, clock, by=Actor("carol", "gamma"))
    with ledger.read() as session:
        row = session.execute(select(Revision.publisher_user, Revision.publisher_host, Revision.publisher_role)).one()
    role = None if ledger_url.startswith("sqlite") else make_url(ledger_url).username
    assert tuple(row) == ("carol", "gamma", role)


def test_publishing_records_this_process_by_default(
    ledger: Ledger, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIDEMARK_HOSTNAME", "delta")
    with ledger.write() as session:
        publish(session, spec(), clock)
    with ledger.read() as session:
        assert tuple(session.execute(select(Revision.publisher_user, Revision.publisher_host)).one()) == (ME, "delta")


def test_an_engine_announces_its_user_labels_trusts_and_version(ledger: Ledger, clock: FixedClock) -> None:
    """It trusts its OS user's name, the names given, and on PostgreSQL the role it logs in as."""
    placement = Placement.of(ALPHA, {"gpu": "yes"}, trusts=("bob",))
    announce(ledger, clock, EngineKind.HEADLESS, placement=placement)
    with ledger.read() as session:
        row = session.scalars(select(EngineRow)).one()
    own_role = {ledger.role()} - {None}
    assert (row.os_user, row.labels, row.trusts) == (
        ME,
        {"host": "alpha", "user": ME, "gpu": "yes"},
        sorted({ME, "bob", *own_role}),
    )
    assert row.version and row.version[0].isdigit()


def test_the_engines_view_shows_each_engine_and_what_it_refuses(
    ledger: Ledger, clock: FixedClock, ledger_url: str
) -> None:
    with someone_else(ledger, ledger_url, clock) as (theirs, _name, named), theirs.write() as session:
        publish(session, spec(), clock)
    alpha = announce(ledger, clock, EngineKind.APP, placement=Placement.of(ALPHA))
    clock.set(clock.now() + timedelta(minutes=5))
    beta = announce(ledger, clock, EngineKind.HEADLESS, placement=Placement.of(BETA, {"gpu": "yes"}, trusts=("*",)))
    older = announce(ledger, clock, EngineKind.HEADLESS, placement=Placement.of(ALPHA))
    with ledger.write() as session:  # an engine from before 0008: no labels, runs everything
        session.execute(update(EngineRow).where(EngineRow.engine_id == older).values(labels=None, trusts=None))
    views = {v.engine_id: v for v in engines_seen(ledger, clock.now(), STALE_AFTER)}
    assert [v.engine_id for v in engines_seen(ledger, clock.now(), STALE_AFTER)][-1] == alpha, "the gone one last"
    assert (views[alpha].live, views[beta].live) == (False, True)
    assert views[beta].labels == {"host": "beta", "user": ME, "gpu": "yes"} and views[beta].os_user == ME
    assert views[beta].refuses == (("daily-ops-summary", "runs on an engine with host=alpha"),)
    assert views[older].refuses == () and views[older].trusts is None
    assert views[alpha].refuses == (
        ("daily-ops-summary", f"published by {named}, whom this engine does not trust (schedctl engine run --trust)"),
    )
    assert views[beta].version


def test_the_engines_view_names_an_untrusted_publisher(ledger: Ledger, clock: FixedClock, ledger_url: str) -> None:
    with someone_else(ledger, ledger_url, clock) as (theirs, _name, named), theirs.write() as session:
        publish(session, spec(), clock)
    mine = announce(ledger, clock, EngineKind.APP, placement=Placement.of(ALPHA))
    [view] = engines_seen(ledger, clock.now(), STALE_AFTER)
    assert view.engine_id == mine and view.trusts == tuple(sorted({ME, *({ledger.role()} - {None})}))
    assert view.refuses == (
        ("daily-ops-summary", f"published by {named}, whom this engine does not trust (schedctl engine run --trust)"),
    )


def test_schedules_and_ledger_say_who_waits_and_why_on_either_backend(
    ledger: Ledger, clock: FixedClock, ledger_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A schedule of someone no live engine trusts, one for a host no engine has: ``schedules`` and
    ``ledger`` (table and JSON) say what each waits for, with the labels and the publisher."""
    with someone_else(ledger, ledger_url, clock) as (theirs, _, named):
        with theirs.write() as session:
            publish(session, spec(), clock)
        put(ledger, clock, by=ALPHA, scheduleId="on-gamma", runsOn={"host": "gamma"})
        announce(ledger, clock, EngineKind.HEADLESS, placement=Placement.of(ALPHA))
        now = ["--db", ledger_url, "--now", "2026-03-01T12:00:00Z"]
        expected = {
            "daily-ops-summary": f"waiting for an engine with host=alpha; publisher {named} is not trusted by the "
            "live engines",
            "on-gamma": "waiting for an engine with host=gamma; none seen on this ledger",
        }
        said = [f"{sid}: {why}" for sid, why in expected.items()]
        assert cli.main(["schedules", *now]) == 0
        assert capsys.readouterr().out.splitlines()[-2:] == said
        assert cli.main(["ledger", *now]) == 0
        assert capsys.readouterr().out.splitlines() == ["No occurrences match.", *said]
        assert cli.main(["ledger", *now, "--schedule", "on-gamma", "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out) == {"occurrences": [], "waiting": {"on-gamma": expected["on-gamma"]}}


@pytest.mark.parametrize(
    ("first", "second", "line"),
    [
        # The one in force runs here; the next is another host's from its cutover on.
        ({}, {"host": "alpha"}, "revision 2, in force from 2026-03-04T00:00:00Z, runs on an engine with host=alpha"),
        # Both are another host's: the one in force now is named.
        ({"host": "alpha"}, {"host": "gamma"}, "revision 1 runs on an engine with host=alpha"),
        # The one in force runs here, and so does the next: nothing waits.
        ({}, {}, None),
    ],
    ids=["next_one_refused", "both_refused", "neither"],
)
def test_the_waiting_line_names_the_revision_that_governs_now(
    ledger: Ledger, clock: FixedClock, first: dict[str, str], second: dict[str, str], line: str | None
) -> None:
    put(ledger, clock, by=BETA, runsOn=first or None)
    put(ledger, clock, by=BETA, revision=2, cutoverAt="2026-03-04T00:00:00Z", runsOn=second or None)
    report = pass_at(clock, FIRST_DUE, engine(ledger, clock, BETA))[0]
    assert report.refused == ({"daily-ops-summary": line} if line else {})
    assert cli.pass_summary(report, clock.now()).splitlines()[1:] == (
        [f"schedule daily-ops-summary waits for another engine: {line}"] if line else []
    )
