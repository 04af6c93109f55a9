"""What ``schedctl`` prints about a ledger gives no secret away: an attempt's
input digest cannot be searched for a task's variable values, and a database
URL's password is masked in every message; on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from core import cli
from core.engine.runner import TaskIdentity, input_digest

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
    data: dict[str, Any] = {
        "schema": "scheduleSpec.v1",
        "scheduleId": SID,
        "revision": revision,
        "timeZone": "UTC",
        "rule": "FREQ=DAILY;BYHOUR=6",
        "start": "2026-01-01T00:00:00",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
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
