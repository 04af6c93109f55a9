"""A task variable written ``{secret: NAME}``: the task receives the value, looked up on the
engine's host when it starts, from the OS keyring or the user's 0600 secrets file; the value
appears nowhere in the ledger's database, its attempts' output tails (masked) or any command's
output; a missing or unreadable secret is a spawn error naming it. Both stores, SQLite and PostgreSQL."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import create_engine, inspect, select, table, text

from core import cli
from core.cli.parser import COMMANDS
from core.team.secrets import secrets_file
from tests.secret_stores import STORES, schedctl, secret_store

from . import DAILY

PY = sys.executable
SID = "token-push"
VALUE = "tk-7Qz91-river-lamp"
#: Writes the variable to the file it is given, and says it on stdout and stderr (as a careless script would).
SCRIPT = (
    "import os, sys; v = os.environ['API_TOKEN']; open(sys.argv[1], 'w').write(v); "
    "print('using', v, 'in', os.environ['REGION']); print('token was', v, file=sys.stderr)"
)


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with secret_store(request.param, tmp_path / "config", monkeypatch):
        yield request.param


def only_attempt(capsys: pytest.CaptureFixture[str], url: str, state: str) -> dict[str, Any]:
    """The attempt of the one occurrence in ``state``, as ``attempts --format json`` prints it."""
    status, out, err = schedctl(capsys, "ledger", "--format", "json", "--state", state, "--db", url)
    assert status == 0, err
    (row,) = json.loads(out)["occurrences"]
    status, out, err = schedctl(capsys, "attempts", row["occurrenceId"], "--format", "json", "--db", url)
    assert status == 0, err
    (attempt,) = json.loads(out)["attempts"]
    assert VALUE not in out
    return dict(attempt) | {"occurrenceId": row["occurrenceId"]}


def write_spec(tmp_path: Path, received: Path, retry: int = 3, argv: list[str] | None = None) -> str:
    data: dict[str, Any] = DAILY | {
        "scheduleId": SID,
        "timeZone": "UTC",
        "rule": "FREQ=DAILY;BYHOUR=6",
        "horizon": "P2D",
        "retry": {"maxAttempts": retry, "initialBackoff": "PT1M"},
        "task": {
            "argv": argv or [PY, "-c", SCRIPT, str(received)],
            "env": {"API_TOKEN": {"secret": "api-token"}, "REGION": "eu"},
        },
    }
    path = tmp_path / "push.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def database_text(url: str) -> str:
    """Every row of every table of the ledger, as text."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            names = inspect(conn).get_table_names()
            assert "attempts" in names and "revisions" in names
            rows = [
                f"{name}: {row}" for name in names for row in conn.execute(select(text("*")).select_from(table(name)))
            ]
    finally:
        engine.dispose()
    return "\n".join(rows)


def raw_files(url: str) -> bytes:
    """The bytes of a SQLite ledger's files (the database and its journals); nothing for PostgreSQL."""
    if not url.startswith("sqlite"):
        return b""
    path = Path(url.removeprefix("sqlite:///"))
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def outputs(capsys: pytest.CaptureFixture[str], url: str, spec: str, occurrence: str) -> str:
    """What every command that shows a spec, a schedule, an occurrence or an attempt prints."""
    commands = [
        ["validate", spec],
        ["explain", spec, "--now", "2026-03-01T00:00:00Z"],
        ["preview", spec, "--format", "json", "--now", "2026-03-01T00:00:00Z"],
        ["schedules", "--db", url],
        ["schedules", "--format", "json", "--db", url],
        ["ledger", "--db", url],
        ["ledger", "--format", "json", "--db", url],
        ["attempts", occurrence, "--db", url],
        ["attempts", occurrence, "--format", "json", "--db", url],
        ["secret", "list"],
        ["secret", "list", "--format", "json"],
    ]
    names = {c.name for c in COMMANDS}
    if "events" in names:
        commands += [["events", "--db", url], ["events", "--format", "json", "--db", url]]
    if "show" in names:
        commands += [["show", SID, "--db", url]]
    said = []
    for argv in commands:
        status, out, err = schedctl(capsys, *argv)
        assert status == 0, (argv, err)
        said.append(out + err)
    return "\n".join(said)


def test_the_task_receives_its_secret_and_the_ledger_never_holds_it(
    store: str, ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = schedctl(capsys, "secret", "set", "api-token", stdin=VALUE + "\n")
    assert (status, err) == (0, "")
    assert ("keyring" in out) if store == "keyring" else (str(secrets_file()) in out)
    assert VALUE not in out
    if store == "file":
        assert secrets_file().stat().st_mode & 0o777 == 0o600

    received = tmp_path / "received.txt"
    spec = write_spec(tmp_path, received)
    status, out, err = schedctl(capsys, "apply", spec, "--db", ledger_url, "--now", "2026-03-01T00:00:00Z")
    assert (status, err) == (0, ""), err
    status, out, err = schedctl(capsys, "engine", "run", "--once", "--db", ledger_url, "--now", "2026-03-01T06:00:05Z")
    assert (status, err) == (0, "")
    assert received.read_text() == VALUE

    attempt = only_attempt(capsys, ledger_url, "SUCCEEDED")
    # The tails are masked before they are stored: the rest of what the task said is kept.
    assert attempt["stdoutTail"] == "using *** in eu\n"
    assert attempt["stderrTail"] == "token was ***\n"

    said = outputs(capsys, ledger_url, spec, attempt["occurrenceId"])
    assert "api-token" in said  # the reference is shown
    assert VALUE not in said
    dump = database_text(ledger_url)
    assert "api-token" in dump  # the revision stores the reference
    assert VALUE not in dump
    assert VALUE.encode() not in raw_files(ledger_url)


#: A secret whose value is not UTF-8: a Latin-1 word and two stray bytes, given to ``secret set`` as bytes.
RAW = b"Zq81-caf\xe9-\xff\xfe-lamp"
#: What of it would decode as text (with the replacement characters its other bytes would become).
FRAGMENTS = ("Zq81", "caf\ufffd", "lamp", "\ufffd")
#: Prints the secret on stdout in two writes, and on stderr inside a line.
RAW_SCRIPT = (
    "import os, sys; v = os.environb[b'API_TOKEN']; open(sys.argv[1], 'wb').write(v)\n"
    "sys.stdout.buffer.write(b'using ' + v[:7]); sys.stdout.flush()\n"
    "sys.stdout.buffer.write(v[7:] + b' in eu\\n'); sys.stdout.flush()\n"
    "sys.stderr.buffer.write(b'token was ' + v + b'\\n')\n"
)


def test_a_secret_that_is_not_utf8_is_masked_wherever_the_tail_shows(
    store: str, ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(RAW), encoding="utf-8", errors="strict"))
    assert cli.main(["secret", "set", "api-token"]) == 0
    capsys.readouterr()
    received = tmp_path / "received.bin"
    spec = write_spec(tmp_path, received, argv=[PY, "-c", RAW_SCRIPT, str(received)])
    assert schedctl(capsys, "apply", spec, "--db", ledger_url, "--now", "2026-03-01T00:00:00Z")[0] == 0
    status, _out, err = schedctl(capsys, "engine", "run", "--once", "--db", ledger_url, "--now", "2026-03-01T06:00:05Z")
    assert (status, err) == (0, "")
    assert received.read_bytes() == RAW  # the task received the very bytes given

    attempt = only_attempt(capsys, ledger_url, "SUCCEEDED")
    assert attempt["stdoutTail"] == "using *** in eu\n"
    assert attempt["stderrTail"] == "token was ***\n"
    said = outputs(capsys, ledger_url, spec, attempt["occurrenceId"])
    dump = database_text(ledger_url)
    for shown in (said, dump):
        assert [f for f in FRAGMENTS if f in shown] == []
    assert RAW not in raw_files(ledger_url) and b"lamp" not in raw_files(ledger_url)


def test_a_missing_secret_is_a_spawn_error_naming_it(
    store: str, ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    received = tmp_path / "received.txt"
    spec = write_spec(tmp_path, received)
    assert schedctl(capsys, "apply", spec, "--db", ledger_url, "--now", "2026-03-01T00:00:00Z")[0] == 0
    status, _out, err = schedctl(capsys, "engine", "run", "--once", "--db", ledger_url, "--now", "2026-03-01T06:00:05Z")
    assert status == 0, err
    assert not received.exists()
    attempt = only_attempt(capsys, ledger_url, "RETRY_WAIT")
    assert attempt["errorClass"] == "spawn_error"
    assert "secret api-token is not set on this host" in attempt["stderrTail"]

    # Once it is set, the retry runs with it.
    assert schedctl(capsys, "secret", "set", "api-token", stdin=VALUE)[0] == 0
    status, _out, err = schedctl(capsys, "engine", "run", "--once", "--db", ledger_url, "--now", "2026-03-01T06:02:05Z")
    assert status == 0, err
    assert received.read_text() == VALUE


def test_a_secrets_file_others_can_read_is_refused_and_the_occurrence_fails(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with secret_store("file", tmp_path / "config", monkeypatch):
        assert schedctl(capsys, "secret", "set", "api-token", stdin=VALUE)[0] == 0
        secrets_file().chmod(0o644)
        received = tmp_path / "received.txt"
        spec = write_spec(tmp_path, received, retry=1)
        assert schedctl(capsys, "apply", spec, "--db", ledger_url, "--now", "2026-03-01T00:00:00Z")[0] == 0
        status, _out, err = schedctl(
            capsys, "engine", "run", "--once", "--db", ledger_url, "--now", "2026-03-01T06:00:05Z"
        )
        assert status == 0, err
        assert not received.exists()
        attempt = only_attempt(capsys, ledger_url, "FAILED")
        assert attempt["errorClass"] == "spawn_error"
        assert "secret api-token cannot be read" in attempt["stderrTail"]
        assert "has mode 0644" in attempt["stderrTail"] and "chmod 600" in attempt["stderrTail"]


def test_apply_warns_about_a_credential_in_clear_and_publishes(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "clear.yaml"
    data = DAILY | {"scheduleId": SID, "task": {"argv": [PY, "-c", "pass"], "env": {"API_TOKEN": VALUE}}}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    status, out, err = schedctl(capsys, "apply", str(path), "--db", ledger_url, "--now", "2026-03-01T00:00:00Z")
    assert status == 0 and out.startswith(f"applied {SID} revision 1")
    assert err == (
        f"{path}: warning: task.env.API_TOKEN: looks like a credential and is in clear in the spec (and the "
        "ledger); keep it as a secret: schedctl secret set API_TOKEN then write API_TOKEN: {secret: API_TOKEN}\n"
    )
