"""``schedctl events``: the audit log, who did what and when, with its filters and formats,
on SQLite and PostgreSQL. The host is played with TIDEMARK_HOSTNAME; the OS user is the
process's own, whatever LOGNAME and USER say."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import event, insert

from core import cli
from core.clock import FixedClock
from core.ledger import events, open_ledger
from core.ledger.audit_queries import AuditFilter, audit_events
from core.ledger.db import Ledger
from core.ledger.models import Event
from core.ledger.publish import Gate, change_gate, publish_to
from core.team.actor import Actor, os_user

from . import spec, utc

SID = "daily-ops-summary"
NOW = "2026-03-01T12:00:00Z"
#: The keys of one event in ``--format json``, in order: programs rely on them.
JSON_KEYS = ["id", "at", "kind", "actor", "scheduleId", "occurrenceId", "what", "note", "data"]
ME = os_user()
DAILY_SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": SID,
    "revision": 1,
    "timeZone": "America/New_York",
    "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
    "start": "2026-01-01T00:00:00",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
    "task": {"argv": ["/bin/true"]},
}


class Schedctl:
    """schedctl in process against one ledger, on alpha."""

    def __init__(self, url: str, capsys: pytest.CaptureFixture[str]) -> None:
        self.url = url
        self.capsys = capsys

    def __call__(self, *argv: str, now: str = NOW) -> tuple[int, str, str]:
        status = cli.main([*argv, "--db", self.url, "--now", now])
        out, err = self.capsys.readouterr()
        return status, out, err

    def ok(self, *argv: str, now: str = NOW) -> str:
        status, out, err = self(*argv, now=now)
        assert (status, err) == (0, ""), err
        return out

    def refused(self, *argv: str) -> str:
        status, out, err = self(*argv)
        assert (status, out) == (2, "")
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        return err.rstrip("\n")

    def events(self, *filters: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = json.loads(self.ok("events", "--format", "json", *filters))["events"]
        return found


@pytest.fixture
def schedctl(
    ledger_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Schedctl:
    monkeypatch.setenv("LOGNAME", "alice")  # ignored: the user is the uid's
    monkeypatch.setenv("USER", "alice")
    monkeypatch.setenv("TIDEMARK_HOSTNAME", "alpha")
    run = Schedctl(ledger_url, capsys)
    path = tmp_path / "daily.yaml"
    path.write_text(yaml.safe_dump(DAILY_SPEC))
    run.ok("apply", str(path))
    run.ok("pause", SID, "--note", "disk full", now="2026-03-01T12:05:00Z")
    run.ok("resume", SID, now="2026-03-01T12:10:00Z")
    return run


def role(url: str) -> str | None:
    return "postgres" if url.startswith("postgresql") else None


def test_json_says_who_did_what_and_when(schedctl: Schedctl) -> None:
    found = schedctl.events()
    assert [list(e) for e in found] == [JSON_KEYS] * 3
    assert [(e["at"], e["kind"], e["what"], e["note"]) for e in found] == [
        ("2026-03-01T12:00:00Z", "schedule.published", "published revision 1", None),
        ("2026-03-01T12:05:00Z", "schedule.paused", "paused", "disk full"),
        ("2026-03-01T12:10:00Z", "schedule.resumed", "resumed", None),
    ]
    assert {json.dumps(e["actor"]) for e in found} == {
        json.dumps({"user": ME, "host": "alpha", "role": role(schedctl.url)})
    }
    assert found[1]["scheduleId"] == SID and found[1]["occurrenceId"] is None
    assert found[1]["data"]["note"] == "disk full"


def test_the_table_has_a_line_per_event(schedctl: Schedctl) -> None:
    lines = schedctl.ok("events").splitlines()
    assert lines[0].split() == [
        "Time", "(UTC)", "Claimed", "by", "Database", "role", "Schedule", "Occurrence", "What", "Note"
    ]  # fmt: skip
    paused = lines[2]
    claimed, recorded = f"{ME}@alpha", role(schedctl.url) or "—"
    assert paused.startswith(f"2026-03-01 12:05:00Z  {claimed:22}  {recorded:16}  {SID}")
    assert lines[0].index("Database role") == paused.index(recorded) and lines[0].index("Schedule") == paused.index(SID)
    assert f"{SID}" in paused and "paused" in paused and paused.endswith("disk full")
    assert len(lines) == 4


def test_filters(schedctl: Schedctl) -> None:
    assert [e["kind"] for e in schedctl.events("--kind", "schedule.paused,schedule.resumed")] == [
        "schedule.paused",
        "schedule.resumed",
    ]
    assert [e["kind"] for e in schedctl.events("--since", "2026-03-01T12:05:00Z")] == [
        "schedule.paused",
        "schedule.resumed",
    ]
    assert [e["kind"] for e in schedctl.events("--limit", "1")] == ["schedule.resumed"]
    assert [e["kind"] for e in schedctl.events("--schedule", SID, "--limit", "2")] == [
        "schedule.paused",
        "schedule.resumed",
    ]
    occurrence = schedctl.ok("run-now", SID).split()[-1]
    mine = schedctl.events("--occurrence", occurrence)
    assert [(e["kind"], e["what"], e["occurrenceId"]) for e in mine] == [("occurrence.created", "run now", occurrence)]
    assert schedctl.ok("events", "--kind", "ledger.fenced").splitlines()[1] == "(no events)"
    assert json.loads(schedctl.ok("events", "--kind", "ledger.fenced", "--format", "json")) == {"events": []}


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--since", "yesterday"], "schedctl events: --since: 'yesterday' is not a date-time"),
        (["--since", "2026-02-30"], "schedctl events: --since: '2026-02-30' is not a real date-time"),
        (["--kind", "schedule.pasued"], "schedctl events: --kind: unknown kind 'schedule.pasued'; the kinds are"),
        (["--schedule", "nope"], "schedctl events: no schedule 'nope' in this ledger"),
        (["--occurrence", "nope"], "schedctl events: no occurrence 'nope' in this ledger"),
        (["--limit", "0"], "schedctl events: argument --limit: must be at least 1"),
    ],
    ids=["since-words", "since-no-such-day", "kind", "schedule", "occurrence", "limit"],
)
def test_bad_input_is_one_line(schedctl: Schedctl, argv: list[str], says: str) -> None:
    assert schedctl.refused("events", *argv).startswith(says)


def test_events_from_before_actors_show_a_dash(schedctl: Schedctl) -> None:
    with open_ledger(schedctl.url) as ledger, ledger.write() as session:
        session.execute(  # as a Tidemark before migration 0008 wrote it
            insert(Event).values(at=utc("2026-03-01T12:20:00Z"), kind="ledger.fenced", data={"epoch": 2, "note": None})
        )
    last = schedctl.events("--kind", "ledger.fenced")[0]
    assert (last["actor"], last["what"]) == (None, "fenced the ledger (epoch 2)")
    line = schedctl.ok("events", "--kind", "ledger.fenced").splitlines()[1]
    assert line.split()[2] == "—"


def test_a_note_cannot_drive_the_terminal(schedctl: Schedctl) -> None:
    schedctl.ok("pause", SID, "--note", "\x1b]0;owned\x07\x1b[2J\u202egnp.exe\nsecond line")
    for output in (schedctl.ok("events"), schedctl.ok("events", "--format", "json")):
        assert "\x1b" not in output and "\x07" not in output and "\u202e" not in output
    table = schedctl.ok("events", "--kind", "schedule.paused").splitlines()
    assert len(table) == 3  # the note's newline does not start a line of its own
    assert table[2].endswith("\\x1b]0;owned\\x07\\x1b[2J\\u202egnp.exe second line")


def test_read_page_by_page(ledger: Ledger, clock: FixedClock) -> None:
    """A long log is read a page at a time; a page boundary loses and repeats nothing."""
    publish_to(ledger, spec(), clock, check_task=False)
    for n in range(5):
        clock.set(clock.now() + timedelta(minutes=1))
        change_gate(ledger, SID, Gate.PAUSE if n % 2 == 0 else Gate.RESUME, clock, f"n{n}", actor=Actor("bob", "b"))
    with ledger.read() as session:
        whole = [e.id for e in audit_events(session, AuditFilter())]
        assert [e.id for e in audit_events(session, AuditFilter(), page=2)] == whole
        assert len(whole) == 6 and whole == sorted(whole)
        assert [e.id for e in audit_events(session, AuditFilter(), limit=3, page=2)] == whole[-3:]
        assert [e.id for e in audit_events(session, AuditFilter(), limit=99, page=4)] == whole
        paused = AuditFilter(kinds=frozenset({"schedule.paused"}))
        assert [e.data["note"] for e in audit_events(session, paused, limit=2, page=1)] == ["n2", "n4"]


def test_a_long_log_is_read_a_page_at_a_time(ledger: Ledger, clock: FixedClock) -> None:
    """The log is read as it is printed: taking the first event reads one page, not the log."""
    publish_to(ledger, spec(), clock, check_task=False)
    with ledger.write() as session:
        events.append_many(session, (events.LedgerFenced(at=clock.now(), epoch=n, note=None) for n in range(1, 26)))
    rows_read: list[int] = []

    def count(_conn: Any, cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "FROM events" in statement:
            rows_read.append(cursor.rowcount)

    event.listen(ledger.engine, "after_cursor_execute", count)
    try:
        with ledger.read() as session:
            found = audit_events(session, AuditFilter(), page=10)
            first = next(found)
            assert first.kind == "schedule.published" and len(rows_read) == 1
            assert len(list(found)) == 25 and len(rows_read) == 3  # pages of 10, 10 and 6
    finally:
        event.remove(ledger.engine, "after_cursor_execute", count)


def test_the_columns_stay_aligned_whatever_the_actor_and_role(
    ledger_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A long host, and on PostgreSQL a role longer than the column's usual width: every line's
    cells start under their headings."""
    from .pg_roles import as_role, granted

    monkeypatch.setenv("TIDEMARK_HOSTNAME", "build-server-17.example.org")
    path = tmp_path / "daily.yaml"
    path.write_text(yaml.safe_dump(DAILY_SPEC))
    kinds = ("publisher",) if ledger_url.startswith("postgresql") else ()
    with granted(ledger_url, *kinds, prefix="a_rather_long_team_role") if kinds else _no_roles() as roles:
        url = as_role(ledger_url, roles[0]) if roles else ledger_url
        Schedctl(url, capsys).ok("apply", str(path))
        Schedctl(ledger_url, capsys).ok("pause", SID, "--note", "disk full", now="2026-03-01T12:05:00Z")
        lines = Schedctl(ledger_url, capsys).ok("events").splitlines()
    header, published, paused = lines
    for heading, published_cell, paused_cell in [
        ("Database role", roles[0] if roles else "—", role(ledger_url) or "—"),
        ("Schedule", SID, SID),
        ("What", "published revision 1", "paused"),
    ]:
        at = header.index(heading)
        assert published[at:].startswith(published_cell) and paused[at:].startswith(paused_cell), heading


@contextmanager
def _no_roles() -> Iterator[list[str]]:
    yield []
