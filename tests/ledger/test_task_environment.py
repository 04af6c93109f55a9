"""What a task inherits from its engine: everything but the engine's own variables. An engine
started as a service is given its ledger in ``SCHEDULER_DB_URL`` (a PostgreSQL password in it),
maybe libpq's ``PGPASSWORD`` too; a task it runs receives neither, unless its own ``task.env``
names one, which it then receives with its own value. On SQLite and PostgreSQL, the engine a
process of its own as a service runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import make_url

from tests.secret_stores import schedctl

from . import DAILY

PY = sys.executable
#: Writes the task's whole environment to argv[1] as JSON, and the names of its variables on stdout.
DUMP_ENV = (
    "import json, os, sys; json.dump(dict(os.environ), open(sys.argv[1], 'w'))\nprint(' '.join(sorted(os.environ)))\n"
)
DB_PASSWORD = "S3cretPW-ledger"
PG_PASSWORD = "S3cretPW-libpq"


def write_spec(folder: Path, schedule_id: str, dump: Path, env: dict[str, str]) -> str:
    data: dict[str, Any] = DAILY | {
        "scheduleId": schedule_id,
        "timeZone": "UTC",
        "rule": "FREQ=DAILY;BYHOUR=6",
        "horizon": "P2D",
        "task": {"argv": [PY, "-c", DUMP_ENV, str(dump)], "env": env},
    }
    path = folder / f"{schedule_id}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


def with_password(url: str) -> str:
    """``url`` holding a password as a service's would (the test server trusts, and ignores it)."""
    if not url.startswith("postgresql"):
        return url
    return make_url(url).set(password=DB_PASSWORD).render_as_string(hide_password=False)


def test_a_task_never_inherits_the_engines_ledger_nor_its_password(
    ledger_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain, own = tmp_path / "plain.json", tmp_path / "own.json"
    specs = [
        write_spec(tmp_path, "env-plain", plain, {}),
        write_spec(tmp_path, "env-own", own, {"SCHEDULER_DB_URL": "sqlite:///its-own.db", "REGION": "eu"}),
    ]
    for spec in specs:
        status, _out, err = schedctl(capsys, "apply", spec, "--db", ledger_url, "--now", "2026-03-01T00:00:00Z")
        assert (status, err) == (0, "")

    # The engine as its service starts it: the ledger (and libpq's password) in its environment only.
    service_env = os.environ | {"SCHEDULER_DB_URL": with_password(ledger_url), "PGPASSWORD": PG_PASSWORD}
    done = subprocess.run(
        [PY, "-m", "core.cli", "engine", "run", "--once", "--no-notify", "--now", "2026-03-01T06:00:05Z"],
        env=service_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert "outcomes: SUCCEEDED 2" in done.stdout

    inherited = json.loads(plain.read_text())
    assert inherited["SCHED_SCHEDULE_ID"] == "env-plain" and inherited["PATH"] == os.environ["PATH"]
    assert sorted({"SCHEDULER_DB_URL", "PGPASSWORD"} & set(inherited)) == []
    named = json.loads(own.read_text())
    assert (named["SCHEDULER_DB_URL"], named["REGION"]) == ("sqlite:///its-own.db", "eu")
    assert "PGPASSWORD" not in named
    for dump in (plain, own):
        text = dump.read_text()
        assert ledger_url not in text and DB_PASSWORD not in text and PG_PASSWORD not in text

    # What each task said is its variables' names: the ledger keeps the same story.
    status, out, err = schedctl(capsys, "ledger", "--format", "json", "--state", "SUCCEEDED", "--db", ledger_url)
    assert status == 0, err
    told = {}
    for row in json.loads(out)["occurrences"]:
        status, said, err = schedctl(capsys, "attempts", row["occurrenceId"], "--format", "json", "--db", ledger_url)
        assert status == 0, err
        (attempt,) = json.loads(said)["attempts"]
        names = set(attempt["stdoutTail"].split())
        told[row["scheduleId"]] = sorted(names & {"SCHEDULER_DB_URL", "PGPASSWORD", "SCHED_OCCURRENCE_ID"})
    assert told == {"env-plain": ["SCHED_OCCURRENCE_ID"], "env-own": ["SCHEDULER_DB_URL", "SCHED_OCCURRENCE_ID"]}
