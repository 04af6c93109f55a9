"""Pin or follow the tz database (``tzdbPolicy``): a PIN revision resolves with the zone it
was published with, on every host, whatever tzdata is installed; a FOLLOW one follows
the installed tzdata for what is not materialized yet; materialized occurrences never move."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from core import cli
from core.clock import FixedClock
from core.engine.admin import run_now
from core.errors import PublishError
from core.ledger.db import Ledger
from core.ledger.future_diff import future_diff
from core.ledger.materialize import drift, materialize_all, unreadable_revisions
from core.ledger.models import Occurrence, Revision
from core.ledger.publish import publish
from core.ledger.queries import published_schedule
from core.ledger.states import OccurrenceKind
from core.spec.validation import parse_spec
from core.time.zones import tzdb_version, zone_tzif
from tests.tzdata_change import ZONE, clear_zone_caches, install, spring_a_week_later

from . import DAILY, by_nominal, spec, utc
from .test_engine_run import run_at

SID = "daily-ops-summary"
FOLLOWS = "follows the installed tz database"
#: The release the modified New York zone is installed as.
LATER = "2099a"
Install = Callable[[], str]


@pytest.fixture
def law_changes(monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """Call it to install tzdata "2099a", where New York springs forward on March 15 2026, not March 8;
    it returns the release that was installed before. Every zone cache is cleared at the end."""
    published_with = tzdb_version()
    modified = spring_a_week_later()

    def change() -> str:
        install(monkeypatch, modified, LATER)
        return published_with

    yield change
    monkeypatch.undo()
    clear_zone_caches()


def _instants(ledger: Ledger) -> dict[str, tuple[str | None, str, str]]:
    """Day -> (resolved instant, state, tzdb release) of the daily 02:30 from March 9 on."""
    with ledger.read() as session:
        rows = by_nominal(session, SID)
    return {
        nominal[:10]: (
            f"{occ.resolved_utc:%H:%MZ}" if occ.resolved_utc else None,
            occ.state.value,
            occ.tzdb_version,
        )
        for (nominal, _), occ in rows.items()
        if nominal >= "2026-03-09"
    }


def _publish(ledger: Ledger, clock: FixedClock, **overrides: object) -> None:
    with ledger.write() as session:
        publish(session, spec(**overrides), clock)
        materialize_all(session, clock)


def test_the_diff_of_the_future_says_when_the_policy_changes(ledger: Ledger, clock: FixedClock) -> None:
    pinned = f"pinned to tz database {tzdb_version()}"
    with ledger.read() as session:
        assert future_diff(session, spec(), clock.now(), timedelta(days=2)).tzdb_policy is None
        assert future_diff(session, spec(tzdbPolicy="PIN"), clock.now()).tzdb_policy == (None, pinned)
    _publish(ledger, clock)
    with ledger.read() as session:
        assert future_diff(session, spec(revision=2), clock.now()).tzdb_policy is None
        found = future_diff(session, spec(revision=2, tzdbPolicy="PIN"), clock.now())
    assert found.tzdb_policy == (FOLLOWS, pinned)
    assert found.changes == 0  # the same tzdata: no run moves
    _publish(ledger, clock, revision=2, tzdbPolicy="PIN")
    with ledger.read() as session:
        assert future_diff(session, spec(revision=3, tzdbPolicy="PIN"), clock.now()).tzdb_policy is None
        assert future_diff(session, spec(revision=3), clock.now()).tzdb_policy == (pinned, FOLLOWS)


def test_pin_stores_the_zones_rules_and_follow_stores_none(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, tzdbPolicy="PIN")
    _publish(ledger, clock, revision=2)
    with ledger.read() as session:
        stored = {number: tzif for number, tzif in session.execute(select(Revision.revision, Revision.tzif))}
    assert stored == {1: zone_tzif(ZONE), 2: None}


def test_pin_refuses_a_tzdb_version_that_is_not_installed(ledger: Ledger, clock: FixedClock) -> None:
    with ledger.write() as session, pytest.raises(PublishError) as refused:
        publish(session, spec(tzdbPolicy="PIN", tzdbVersion="2001a"), clock)
    assert str(refused.value) == (
        f"{SID} revision 1: tzdbPolicy: PIN keeps the installed tz database's rules ({tzdb_version()}), "
        "but tzdbVersion says 2001a; leave tzdbVersion out, or publish where tzdata 2001a is installed"
    )
    with ledger.read() as session:
        assert session.scalars(select(Revision)).all() == []


@pytest.mark.parametrize("policy", ["FOLLOW", "PIN"])
def test_a_change_of_the_law_moves_only_unmaterialized_runs_of_a_follow_schedule(
    ledger: Ledger, clock: FixedClock, law_changes: Install, policy: str
) -> None:
    """Materialized through March 11 under the old rules; the new tzdata arrives; materialized on to March 20."""
    _publish(ledger, clock, tzdbPolicy=policy, horizon="P10D")
    old = law_changes()
    clock.set(utc("2026-03-10T12:00:00Z"))
    with ledger.write() as session:
        materialize_all(session, clock)
    edt, est = "06:30Z", "07:30Z"
    facts = {day: (edt, "PLANNED", old) for day in ("2026-03-09", "2026-03-10", "2026-03-11")}
    if policy == "PIN":  # the rules it was published with, for every run
        later = {f"2026-03-{d}": (edt, "PLANNED", old) for d in range(12, 21)}
    else:  # the new rules for what was not materialized yet: EDT begins on the 15th, 02:30 does not exist then
        later = {f"2026-03-{d}": (est, "PLANNED", LATER) for d in (12, 13, 14)}
        later["2026-03-15"] = (None, "SKIPPED_GAP", LATER)
        later |= {f"2026-03-{d}": (edt, "PLANNED", LATER) for d in range(16, 21)}
    assert _instants(ledger) == facts | later


@pytest.mark.parametrize(("policy", "drifting"), [("FOLLOW", ["2026-03-11T02:30:00"]), ("PIN", [])])
def test_drift_lists_a_follow_schedule_and_never_a_pinned_one(
    ledger: Ledger, clock: FixedClock, law_changes: Install, policy: str, drifting: list[str]
) -> None:
    _publish(ledger, clock, tzdbPolicy=policy, horizon="P10D")
    law_changes()
    clock.set(utc("2026-03-10T12:00:00Z"))
    with ledger.read() as session:
        found = drift(session, clock)
    assert [item.nominal_local for item in found] == drifting
    if found:
        assert (found[0].stored_resolved_utc, found[0].current_resolved_utc) == (
            utc("2026-03-11T06:30:00Z"),
            utc("2026-03-11T07:30:00Z"),
        )
    with ledger.read() as session:  # read-only: nothing moved
        stored = session.scalar(
            select(Occurrence.resolved_utc).where(Occurrence.nominal_local == "2026-03-11T02:30:00")
        )
    assert stored == utc("2026-03-11T06:30:00Z")


@pytest.mark.parametrize(("policy", "next_run"), [("FOLLOW", "2026-03-10T07:30:00Z"), ("PIN", "2026-03-10T06:30:00Z")])
def test_the_next_run_before_materialization_uses_the_pinned_rules(
    ledger: Ledger, clock: FixedClock, law_changes: Install, policy: str, next_run: str
) -> None:
    with ledger.write() as session:
        publish(session, spec(tzdbPolicy=policy, cutoverAt="2026-03-09T12:00:00Z"), clock)
    law_changes()
    with ledger.read() as session:
        found = published_schedule(session, SID, utc("2026-03-09T12:00:00Z"))
    assert found is not None and found.next_due_at == utc(next_run)


@pytest.mark.parametrize(("policy", "moved"), [("FOLLOW", 0), ("PIN", 6)])
def test_the_diff_of_the_future_reads_the_current_revision_in_its_pinned_zone(
    ledger: Ledger, clock: FixedClock, law_changes: Install, policy: str, moved: int
) -> None:
    """Republishing under FOLLOW once the new tzdata is installed: a FOLLOW schedule's unmaterialized runs
    already follow it (nothing moves); a pinned one's March 9-14 runs move an hour later."""
    _publish(ledger, clock, tzdbPolicy=policy, horizon="P3D")
    law_changes()
    with ledger.read() as session:
        found = future_diff(session, spec(revision=2), clock.now(), timedelta(days=14))
    assert len(found.moves) == moved
    assert {m.shift for m in found.moves} == ({timedelta(hours=1)} if moved else set())


def test_a_manual_run_of_a_pinned_schedule_records_the_pinned_release(
    ledger: Ledger, clock: FixedClock, law_changes: Install
) -> None:
    _publish(ledger, clock, tzdbPolicy="PIN", horizon="P1D")
    old = law_changes()
    run_now(ledger, SID, clock)
    with ledger.read() as session:
        manual = session.scalars(select(Occurrence).where(Occurrence.kind == OccurrenceKind.MANUAL)).one()
    assert manual.tzdb_version == old


def test_schedctl_drift_lists_the_follow_schedule_and_not_the_pinned_one(
    ledger: Ledger, ledger_url: str, clock: FixedClock, law_changes: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    _publish(ledger, clock, tzdbPolicy="PIN", horizon="P10D")
    _publish(ledger, clock, scheduleId="follows", horizon="P10D")
    old = law_changes()
    status = cli.main(["drift", "--db", ledger_url, "--now", "2026-03-10T12:00:00Z"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"1 future occurrence would move under the installed tzdb {LATER}:"
    assert " follows revision 1 2026-03-11T02:30:00#0: " in lines[1]
    assert f"2026-03-11T06:30:00Z (tzdb {old}) → 2026-03-11T07:30:00Z (SCHEDULED)" in lines[1]
    assert SID not in out


@pytest.mark.parametrize(("policy", "first", "second"), [("FOLLOW", "13:00Z", "19:00Z"), ("PIN", "12:00Z", "18:00Z")])
def test_an_after_completion_run_is_appointed_in_the_pinned_zone(
    ledger: Ledger, clock: FixedClock, law_changes: Install, policy: str, first: str, second: str
) -> None:
    """Published under the old rules, run under the new ones: 08:00 on March 9 is EDT by the pinned rules
    (12:00Z), EST by the installed ones (13:00Z); the next run is 6 h after the first ends, at 14:00:30
    local either way (by the installed rules a pinned schedule's would say 13:00:30)."""
    data = {k: v for k, v in DAILY.items() if k not in ("rule", "gapPolicy", "foldPolicy")}
    data |= {"kind": "after_completion", "delay": "PT6H", "start": "2026-03-09T08:00:00", "tzdbPolicy": policy}
    data |= {"cutoverAt": "2026-03-01T12:00:00Z", "task": {"argv": ["/bin/true"]}}
    with ledger.write() as session:
        publish(session, parse_spec(data), clock)
    law_changes()
    run_at(ledger, clock, f"2026-03-09T{first[:5]}:30Z")
    with ledger.read() as session:
        rows = [
            (o.nominal_local, f"{o.resolved_utc:%H:%MZ}")
            for o in session.scalars(select(Occurrence).order_by(Occurrence.position_utc))
        ]
    assert rows == [("2026-03-09T08:00:00", first), ("2026-03-09T14:00:30", second)]


def test_a_revision_whose_pinned_rules_cannot_be_read_is_held_not_run(ledger: Ledger, clock: FixedClock) -> None:
    _publish(ledger, clock, tzdbPolicy="PIN", horizon="P1D")
    with ledger.write() as session:
        session.execute(update(Revision).values(tzif=b"not a zone"))
    with ledger.read() as session:
        found = unreadable_revisions(session, set())
    why = f"the pinned rules of {ZONE} cannot be read: it is not a TZif file (it does not begin with TZif)"
    assert found == {(SID, 1): (True, [why])}
