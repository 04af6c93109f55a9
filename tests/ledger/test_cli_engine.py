"""``schedctl engine run`` announces itself, retires, and refuses to be a second
dispatcher on a ledger unless --allow-second; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import make_url

from core import cli
from core.clock import FixedClock
from core.engine.presence import announce, live_engines
from core.ledger.db import open_ledger
from core.ledger.models import EngineKind, EnginePresence, EngineRow

from . import utc

WHEN = "2026-03-01T12:00:00Z"


def schedctl(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def engines(url: str) -> list[EngineRow]:
    with open_ledger(url, FixedClock(utc(WHEN))) as ledger, ledger.read() as session:
        from sqlalchemy import select

        return list(session.scalars(select(EngineRow)))


def test_a_pass_announces_and_retires(ledger_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _out, err = schedctl(capsys, "engine", "run", "--once", "--db", ledger_url, "--now", WHEN)
    assert (status, err) == (0, ""), err
    [row] = engines(ledger_url)
    assert (row.kind, row.state) == (EngineKind.HEADLESS, EnginePresence.RETIRED)
    assert row.started_at == utc(WHEN) and row.retired_at == utc(WHEN)


def test_a_second_dispatcher_is_refused_naming_the_first(ledger_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    clock = FixedClock(utc(WHEN) - timedelta(seconds=9))
    with open_ledger(ledger_url, clock) as ledger:
        first = announce(ledger, clock, EngineKind.APP, host="desk-7", pid=31337)
    status, out, err = schedctl(capsys, "engine", "run", "--once", "--db", ledger_url, "--now", WHEN)
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        "schedctl engine run: another engine already runs on this ledger: the desktop app's engine on desk-7 "
        "(pid 31337), last seen 9 s ago at 2026-03-01T11:59:51Z; stop it first, or pass --allow-second to run "
        "two dispatchers"
    ]
    assert [r.engine_id for r in engines(ledger_url)] == [first], "the refused engine left no row"

    status, out, err = schedctl(capsys, "engine", "run", "--once", "--allow-second", "--db", ledger_url, "--now", WHEN)
    assert (status, err) == (0, "")
    with open_ledger(ledger_url, clock) as ledger, ledger.read() as session:
        assert [e.engine_id for e in live_engines(session, utc(WHEN))] == [first]


def test_a_stale_engine_does_not_block(ledger_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    clock = FixedClock(utc(WHEN) - timedelta(minutes=5))
    with open_ledger(ledger_url, clock) as ledger:
        announce(ledger, clock, EngineKind.HEADLESS)  # killed -9 five minutes ago: never retired
    status, _out, err = schedctl(capsys, "engine", "run", "--once", "--db", ledger_url, "--now", WHEN)
    assert (status, err) == (0, "")


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        pytest.param(("--label", "gpu"), "argument --label: 'gpu': write KEY=VALUE, e.g. --label gpu=yes",
                     id="no_equals"),
        pytest.param(("--label", "=yes"), "argument --label: '=yes': the label's name is empty; write KEY=VALUE",
                     id="empty_key"),
        pytest.param(("--label", "host=beta"),
                     "argument --label: 'host=beta': host is built in (the engine's own); choose another name",
                     id="built_in"),
        pytest.param(("--trust", "a b"), "argument --trust: 'a b' is not a publisher's name; give a database role "
                     "(PostgreSQL) or an OS user's login name (SQLite), or '*' for anyone", id="trust_with_space"),
    ],
)  # fmt: skip
def test_bad_labels_and_trusts_are_one_line_and_change_nothing(
    ledger_url: str, capsys: pytest.CaptureFixture[str], flag: tuple[str, str], message: str
) -> None:
    status, out, err = schedctl(capsys, "engine", "run", "--once", *flag, "--db", ledger_url, "--now", WHEN)
    assert (status, out) == (2, "")
    [line] = err.splitlines()
    assert line == f"schedctl engine run: {message} (see schedctl engine run --help)"
    assert engines(ledger_url) == []


def test_an_engine_run_records_its_labels_and_trusts(
    ledger_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.team.actor import os_user

    monkeypatch.setenv("TIDEMARK_HOSTNAME", "alpha")
    argv = ("--label", "gpu=yes", "--label", "site=lab", "--trust", "bob", "--trust", "*")
    status, _out, err = schedctl(capsys, "engine", "run", "--once", *argv, "--db", ledger_url, "--now", WHEN)
    assert (status, err) == (0, ""), err
    [row] = engines(ledger_url)
    assert row.labels == {"host": "alpha", "user": os_user(), "gpu": "yes", "site": "lab"}
    own_role = set() if ledger_url.startswith("sqlite") else {make_url(ledger_url).username}
    assert row.trusts == sorted({"*", "bob", os_user(), *own_role}) and row.os_user == os_user()
