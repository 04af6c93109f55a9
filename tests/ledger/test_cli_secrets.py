"""What ``schedctl`` prints about a ledger gives no secret away: an attempt's
input digest cannot be searched for a task's variable values, a database URL's
password is masked in every message, a title cannot drive the terminal, and a
placeholder's value is passed as written; on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from core import cli
from core.engine.runner import TaskIdentity, input_digest

from . import DAILY

PY = sys.executable
SID = "front-door"
PIN = "4821"
SCRIPT = "print('door opened')"
PINS = [f"{n:04d}" for n in range(10_000)]


def schedctl(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def write_spec(tmp_path: Path, revision: int, pin: str) -> str:
    data: dict[str, Any] = DAILY | {
        "scheduleId": SID,
        "revision": revision,
        "timeZone": "UTC",
        "rule": "FREQ=DAILY;BYHOUR=6",
        "horizon": "P2D",
        "task": {"argv": [PY, "-c", SCRIPT], "env": {"DOOR_PIN": pin}},
    }
    path = tmp_path / f"door-r{revision}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def ran_once(capsys: pytest.CaptureFixture[str], url: str, spec: str, apply_at: str, run_at: str) -> dict[str, Any]:
    """Apply ``spec``, run one pass, and return the ledger row (with its attempt) of the occurrence that ran."""
    assert schedctl(capsys, "apply", spec, "--db", url, "--now", apply_at)[0] == 0
    status, _out, err = schedctl(capsys, "engine", "run", "--once", "--db", url, "--now", run_at)
    assert (status, err) == (0, "")
    status, out, err = schedctl(capsys, "ledger", "--format", "json", "--state", "SUCCEEDED", "--db", url)
    assert status == 0, err
    row: dict[str, Any] = json.loads(out)["occurrences"][-1]
    status, out, err = schedctl(capsys, "attempts", row["occurrenceId"], "--format", "json", "--db", url)
    assert status == 0, err
    (row["attempt"],) = json.loads(out)["attempts"]
    assert PIN not in out
    return row


def identity_env(row: dict[str, Any]) -> dict[str, str]:
    """What anyone reading the ledger knows of the task's environment (the per-attempt variables are not digested)."""
    identity = TaskIdentity(
        schedule_id=row["scheduleId"],
        revision=row["revision"],
        occurrence_id=row["occurrenceId"],
        logical_slot_id=row["logicalSlotId"],
        nominal_local=row["nominalLocal"],
        scheduled_utc=row["resolvedUtc"],
        business_period=None,
        attempt_id="",
        attempt_number=0,
    )
    env = identity.environment()
    del env["SCHED_ATTEMPT_ID"], env["SCHED_ATTEMPT_NUMBER"]
    return env


def plain_sha256(argv: list[str], env: dict[str, str]) -> str:
    """An unkeyed digest over argv, cwd and every variable's value, as an attacker would try."""
    text = json.dumps({"argv": argv, "cwd": None, "env": dict(sorted(env.items()))}, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def brute_force(digest: str, known: dict[str, str]) -> list[str]:
    """Every four-digit PIN whose guessed digest (unkeyed sha256, or Tidemark's own function) matches."""
    argv = [PY, "-c", SCRIPT]
    found = []
    for pin in PINS:
        env = known | {"DOOR_PIN": pin}
        if digest in (plain_sha256(argv, env), input_digest(argv, None, env)):
            found.append(pin)
    return found


def test_the_brute_force_would_find_a_pin_in_an_unkeyed_digest() -> None:
    known = {"SCHED_SCHEDULE_ID": SID, "SCHED_REVISION": "1"}
    assert brute_force(plain_sha256([PY, "-c", SCRIPT], known | {"DOOR_PIN": PIN}), known) == [PIN]


def test_a_printed_digest_gives_no_pin_away(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first = ran_once(capsys, ledger_url, write_spec(tmp_path, 1, PIN), "2026-03-01T00:00:00Z", "2026-03-01T06:00:05Z")
    digest = first["attempt"]["inputDigest"]
    assert len(digest) == 64
    assert brute_force(digest, identity_env(first)) == []

    # A changed value is a new revision, and the digest of its attempts differs.
    second = ran_once(
        capsys, ledger_url, write_spec(tmp_path, 2, "4822"), "2026-03-01T12:00:00Z", "2026-03-02T06:00:05Z"
    )
    assert second["revision"] == 2
    assert second["attempt"]["inputDigest"] != digest
    assert brute_force(second["attempt"]["inputDigest"], identity_env(second)) == []


# --- a database URL's password is never printed ---------------------------------------

PASSWORD = "Hunter2-zq"
#: Every command that takes --db, with the arguments it needs besides (install-service writes a unit file instead).
DB_COMMANDS = {
    "apply": ["apply", "SPEC"],
    "schedules": ["schedules"],
    "pause": ["pause", SID],
    "resume": ["resume", SID],
    "disable": ["disable", SID],
    "engine run": ["engine", "run", "--once"],
    "engine fence": ["engine", "fence"],
    "run-now": ["run-now", SID],
    "backfill": ["backfill", SID, "--from", "2026-01-01", "--to", "2026-01-02"],
    "ledger": ["ledger"],
    "attempts": ["attempts", "occ-x"],
    "events": ["events"],
    "reconcile": ["reconcile", "occ-x", "--happened"],
    "db upgrade": ["db", "upgrade"],
    "db grant": ["db", "grant", "alice", "--as", "viewer"],
    "drift": ["drift"],
    "shadow": ["shadow"],
    "alerts set": ["alerts", "set", "https://example.com/hook"],
    "alerts list": ["alerts", "list"],
    "alerts test": ["alerts", "test", "mailto:ops@example.com"],
}


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_without_database() -> str:
    """The test server with a password and a database that does not exist (refused, whatever the auth)."""
    import os

    from sqlalchemy import make_url

    admin = make_url(os.environ.get("TIDEMARK_TEST_PG_URL") or "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    return admin.set(password=PASSWORD, database="tidemark_no_such_db").render_as_string(hide_password=False)


URLS = {
    "mysql": f"mysql://user:{PASSWORD}@host/x",
    "sqlite_with_user": f"sqlite://user:{PASSWORD}@/x.db",
    "ipv6_without_bracket": f"postgresql://user:{PASSWORD}@[::1:1/x",
    "port_not_a_number": f"postgresql://user:{PASSWORD}@host:port/x",
    "at_sign_in_password": f"postgresql://user:p@{PASSWORD}@127.0.0.1:{_closed_port()}/x",
    "server_refuses": f"postgresql+psycopg://user:{PASSWORD}@127.0.0.1:{_closed_port()}/x",
    "password_in_query": f"postgresql://user@127.0.0.1:{_closed_port()}/x?sslmode=disable&password={PASSWORD}",
    "no_such_database": _server_without_database(),
    "not_a_url": f"://user:{PASSWORD}@x",
}


def test_every_command_that_takes_db_is_in_the_table() -> None:
    import argparse

    from core.cli.parser import build_parser

    def taking_db(parser: argparse.ArgumentParser, prefix: list[str]) -> list[str]:
        found = [" ".join(prefix)] if any("--db" in a.option_strings for a in parser._actions) else []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += taking_db(sub, [*prefix, name])
        return found

    assert sorted(taking_db(build_parser(), [])) == sorted([*DB_COMMANDS, "engine install-service"])


@pytest.mark.parametrize("url", list(URLS.values()), ids=list(URLS))
@pytest.mark.parametrize("command", list(DB_COMMANDS))
def test_no_message_prints_a_database_password(
    command: str, url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "2")
    spec = write_spec(tmp_path, 1, PIN)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    argv = [spec if a == "SPEC" else a for a in DB_COMMANDS[command]]
    status, out, err = schedctl(capsys, *argv, "--db", url)
    assert status == 2, err
    assert PASSWORD not in out + err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "***" in err or "not a database URL" in err, err
    assert list(work.iterdir()) == [], "a refused URL created nothing"


# --- what the ledger prints cannot drive a terminal -----------------------------------

ATTACK = "\x1b]0;pwned\x07\x1b[2J\u202etxt.exe\x9b31m\u2066\x7f\r"
UNSAFE = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")


def test_a_title_with_escapes_is_escaped_in_every_format(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = Path(write_spec(tmp_path, 1, PIN))
    data = yaml.safe_load(path.read_text())
    path.write_text(json.dumps(data | {"title": f"Door{ATTACK}"}))
    assert schedctl(capsys, "apply", str(path), "--db", ledger_url, "--now", "2026-03-01T00:00:00Z")[0] == 0
    status, table, err = schedctl(capsys, "schedules", "--db", ledger_url)
    assert (status, err) == (0, "")
    status, text, err = schedctl(capsys, "schedules", "--format", "json", "--db", ledger_url)
    assert (status, err) == (0, "")
    assert not UNSAFE.search(table + text)
    assert json.loads(text)["schedules"][0]["title"] == f"Door{ATTACK}"


# --- placeholders are filled in once ----------------------------------------------------


def test_a_period_holding_a_placeholder_name_is_passed_as_written(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = Path(write_spec(tmp_path, 1, PIN))
    data = yaml.safe_load(path.read_text())
    data["businessPeriod"] = "{{scheduledUtc}}/{{occurrenceId}}/{{period}}-{nominal:%Y-%m-%d}"
    data["task"]["argv"] = [PY, "-c", "import sys; print(sys.argv[1])", "{period}|{nominalLocal}|{other}"]
    path.write_text(yaml.safe_dump(data))
    row = ran_once(capsys, ledger_url, str(path), "2026-03-01T00:00:00Z", "2026-03-01T06:00:05Z")
    assert (
        row["attempt"]["stdoutTail"]
        == "{scheduledUtc}/{occurrenceId}/{period}-2026-03-01|2026-03-01T06:00:00|{other}\n"
    )


def test_a_running_engine_names_its_ledger_without_the_password(
    ledger_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.engine.engine import Engine

    if ledger_url.startswith("sqlite"):
        pytest.skip("a SQLite ledger is a file: it has no password")
    monkeypatch.setattr(Engine, "run_forever", lambda self, **_kw: None)  # stopped as soon as it started
    url = ledger_url + ("&" if "?" in ledger_url else "?") + f"password={PASSWORD}"
    status, out, err = schedctl(capsys, "engine", "run", "--db", url, "--no-notify")
    assert (status, err) == (0, "")
    first = out.splitlines()[0]
    assert first.startswith("engine ") and "password=***;" in first, first
    assert PASSWORD not in out
