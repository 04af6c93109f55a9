"""A team on one PostgreSQL ledger, through real processes (docs/ledger.md, "Teams"):
``schedctl engine run`` as the hosts alpha and beta (``TIDEMARK_HOSTNAME``), each a
process of its own with ``--allow-second``, and ``schedctl apply`` from alpha. Time is
injected with ``--now``. A revision of another OS user and database role, who claims to be
root, is test_recorded_publisher's.

Every task appends ``schedule nominal-time host`` to one file, so the file says
what ran where, and how often.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .team_processes import Team

#: 02:30 New York on 2 and 3 March 2026, half a minute later.
DAY_1 = "2026-03-02T07:30:30Z"
DAY_2 = "2026-03-03T07:30:30Z"

pytestmark = [
    pytest.mark.slow,
    # Engines share work only on PostgreSQL; SQLite's cases are the in-process ones (test_placement).
    pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True),
]


@pytest.fixture
def team(ledger_url: str, tmp_path: Path) -> Team:
    return Team(ledger_url, tmp_path)


def test_each_schedule_runs_where_it_belongs_and_never_twice(team: Team) -> None:
    team.apply("alpha", team.spec_file("home"))
    team.apply("alpha", team.spec_file("on-beta", runsOn={"host": "beta"}))
    team.apply("alpha", team.spec_file("anywhere", runsOn={"any": True}))

    # Day 1: beta's engine passes first, then alpha's. Day 2: the other way round.
    assert team.engine("beta", DAY_1) == [
        "schedule home waits for another engine: revision 1 runs on an engine with host=alpha"
    ]
    assert team.ran() == ["anywhere 2026-03-02T02:30:00 beta", "on-beta 2026-03-02T02:30:00 beta"]
    assert team.engine("alpha", DAY_1) == [
        "schedule on-beta waits for another engine: revision 1 runs on an engine with host=beta"
    ]
    assert team.ran() == ["home 2026-03-02T02:30:00 alpha"]
    team.engine("alpha", DAY_2)
    assert team.ran() == ["anywhere 2026-03-03T02:30:00 alpha", "home 2026-03-03T02:30:00 alpha"]
    team.engine("beta", DAY_2)
    assert team.ran() == ["on-beta 2026-03-03T02:30:00 beta"]


def test_with_alpha_away_its_schedule_waits_visibly_and_its_misfire_policy_applies_on_return(team: Team) -> None:
    team.apply("alpha", team.spec_file("home", misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=1))
    team.engine("alpha", DAY_1)
    # alpha is away for three days; beta's engine neither runs nor expires what comes due ...
    back = "2026-03-05T09:00:00Z"
    out = team.run("beta", "engine", "run", "--once", "--allow-second", "--no-notify", now=back)
    assert "promoted 0, expired 0," in out and "started 0," in out, out
    assert out.splitlines()[1:] == [
        "schedule home waits for another engine: revision 1 runs on an engine with host=alpha"
    ]
    # ... and schedctl schedules says what the schedule waits for.
    shown = team.run("beta", "schedules", now=back).splitlines()
    assert shown[-1] == "home: waiting for an engine with host=alpha; none seen for 3 days 1 h 29 min"
    # alpha returns: bounded catch-up runs the newest missed run and expires the two before it.
    out = team.run("alpha", "engine", "run", "--once", "--allow-second", "--no-notify", now=back)
    assert "expired 2," in out and "outcomes: SUCCEEDED 1" in out, out
    assert team.ran() == ["home 2026-03-02T02:30:00 alpha", "home 2026-03-05T02:30:00 alpha"]
