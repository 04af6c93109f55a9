"""A team on one PostgreSQL ledger, through real processes (docs/ledger.md, "Teams"):
``schedctl engine run`` as the hosts alpha and beta (``TIDEMARK_HOSTNAME``), each a
process of its own with ``--allow-second``, and ``schedctl apply`` from alpha or as
another OS user. Time is injected with ``--now``; the only engine that follows the
real clock is one that must refuse everything it sees.

Every task appends ``schedule nominal-time host`` to one file, so the file says
what ran where, and how often.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import DAILY

PY = sys.executable
#: 02:30 New York on 2 and 3 March 2026, half a minute later.
DAY_1 = "2026-03-02T07:30:30Z"
DAY_2 = "2026-03-03T07:30:30Z"
APPLY_AT = "2026-03-01T12:00:00Z"

pytestmark = [
    pytest.mark.slow,
    # Engines share work only on PostgreSQL; SQLite's cases are the in-process ones (test_placement).
    pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True),
]


class Team:
    """schedctl as processes on one ledger; every task logs what ran where to ``log``."""

    def __init__(self, url: str, folder: Path) -> None:
        self.url = url
        self.folder = folder
        self.log = folder / "ran.log"
        self.seen = 0

    def spec_file(self, schedule_id: str, **overrides: Any) -> Path:
        data = {
            **DAILY,
            "scheduleId": schedule_id,
            "task": {
                "argv": [
                    "/bin/sh",
                    "-c",
                    f'echo "$SCHED_SCHEDULE_ID $SCHED_NOMINAL_LOCAL $TIDEMARK_HOSTNAME" >> {self.log}',
                ]
            },
            **overrides,
        }
        path = self.folder / f"{schedule_id}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        path.chmod(0o644)
        return path

    def env(self, host: str, **more: str) -> dict[str, str]:
        return {**os.environ, "TIDEMARK_HOSTNAME": host, **more}

    def run(self, host: str, *argv: str, now: str, **kwargs: Any) -> str:
        """One schedctl command on ``host``; its standard output (it must succeed, silently on stderr)."""
        kwargs.setdefault("env", self.env(host))
        done = subprocess.run(
            [PY, "-m", "core.cli", *argv, "--db", self.url, "--now", now],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            **kwargs,
        )
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        return done.stdout

    def apply(self, host: str, spec: Path, **kwargs: Any) -> None:
        self.run(host, "apply", str(spec), now=APPLY_AT, **kwargs)

    def engine(self, host: str, now: str, *flags: str) -> list[str]:
        """One pass of ``host``'s engine at ``now``: what it says besides its counts."""
        out = self.run(host, "engine", "run", "--once", "--allow-second", "--no-notify", *flags, now=now)
        assert out.startswith(f"pass at {now}: "), out
        return out.splitlines()[1:]

    def schedules_while_an_engine_runs(self, host: str) -> list[str]:
        """``schedctl schedules`` while ``host``'s engine runs (on the real clock, until SIGTERM)."""
        engine = subprocess.Popen(
            [PY, "-m", "core.cli", "engine", "run", "--allow-second", "--no-notify", "--db", self.url],
            env=self.env(host),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert engine.stdout is not None
            assert engine.stdout.readline().startswith("engine "), "the engine announces itself before this line"
            done = subprocess.run(
                [PY, "-m", "core.cli", "schedules", "--db", self.url],
                env=self.env(host),
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            engine.send_signal(signal.SIGTERM)
            _out, err = engine.communicate(timeout=60)
        finally:
            if engine.poll() is None:
                engine.kill()
                engine.wait()
        assert (engine.returncode, err, done.returncode, done.stderr) == (0, "", 0, ""), err + done.stderr
        return done.stdout.splitlines()

    def ran(self) -> list[str]:
        """What ran where since the last call, sorted (one pass may start several tasks at once)."""
        lines = self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []
        new, self.seen = lines[self.seen :], len(lines)
        return sorted(new)


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


def _unreadable_by_others(paths: list[Path]) -> Path | None:
    """The first of ``paths``, or of the folders above them, that another OS user cannot read
    (a file) or enter (a folder); None when they can read every one."""
    for path in paths:
        for step in [*reversed(path.parents), path]:
            mode = step.stat().st_mode
            need = stat.S_IXOTH if stat.S_ISDIR(mode) else stat.S_IROTH
            if mode & need != need:
                return step
    return None


def _schedctl_for_others() -> tuple[list[str], dict[str, str]]:
    """How another OS user runs this Tidemark: the command and the environment it needs.

    This interpreter when they can read it; else a system one of the same version
    (this one may live in a home folder), given this Tidemark and its packages on
    PYTHONPATH. Skips, saying why, when there is none."""
    import site

    from core import cli

    tidemark = Path(cli.__file__).resolve().parents[2]
    packages = [Path(p) for p in site.getsitepackages() if Path(p).is_dir()]
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    blocked = _unreadable_by_others([Path(PY), Path(PY).resolve(), Path(os.__file__), *packages, tidemark / "core"])
    if blocked is None:
        return [PY, "-m", "core.cli"], {}
    for other in (Path("/usr/bin") / version, Path("/usr/local/bin") / version):
        if other.exists() and _unreadable_by_others([other.resolve(), *packages, tidemark / "core"]) is None:
            return [str(other), "-m", "core.cli"], {"PYTHONPATH": os.pathsep.join(map(str, [tidemark, *packages]))}
    pytest.skip(f"another OS user cannot run this Tidemark: {blocked} is closed to others, and no {version} is open")


@dataclass(frozen=True)
class Teammate:
    """A real OS user of this machine, made for the test, and how to run schedctl as them."""

    name: str
    uid: int
    gid: int
    schedctl: list[str]
    env: dict[str, str]

    def apply(self, spec: Path, url: str, host: str) -> None:
        """``schedctl apply`` as this user on ``host``, from the spec's folder (theirs to read)."""
        # No LOGNAME or USER: the publisher's name can only come from the process's own uid.
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(spec.parent),
            "TIDEMARK_HOSTNAME": host,
            **self.env,
        }
        done = subprocess.run(
            [*self.schedctl, "apply", str(spec), "--db", url, "--now", APPLY_AT],
            env=env,
            user=self.uid,
            group=self.gid,
            extra_groups=[],
            cwd=spec.parent,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (done.returncode, done.stderr) == (0, ""), done.stderr


@pytest.fixture
def teammate() -> Iterator[Teammate]:
    """Another OS user (removed after the test): needs root, to create them (CI runs as root)."""
    if os.geteuid() != 0:
        pytest.skip("publishing as another OS user needs root, to create that user (CI runs as root)")
    useradd, userdel = shutil.which("useradd"), shutil.which("userdel")
    if useradd is None or userdel is None:
        pytest.skip("publishing as another OS user needs useradd and userdel, to create and remove that user")
    schedctl, env = _schedctl_for_others()
    name = f"tm{uuid.uuid4().hex[:10]}"
    subprocess.run([useradd, "--no-create-home", "--user-group", name], check=True, capture_output=True)
    try:
        entry = pwd.getpwnam(name)
        yield Teammate(name, entry.pw_uid, entry.pw_gid, schedctl, env)
    finally:
        subprocess.run([userdel, name], check=True, capture_output=True)


def test_a_revision_of_another_os_user_runs_only_on_an_engine_that_trusts_them(
    ledger_url: str, teammate: Teammate
) -> None:
    # The teammate's spec lies in a folder they can read; their schedctl runs as them, on alpha.
    shared = Path(tempfile.mkdtemp(prefix="tidemark-team-"))
    try:
        shared.chmod(0o755)
        team = Team(ledger_url, shared)
        teammate.apply(team.spec_file("theirs"), ledger_url, "alpha")
        another_user = teammate.name

        # root's engine on alpha does not run it, and says why.
        assert team.engine("alpha", DAY_1) == [
            f"schedule theirs waits for another engine: revision 1 published by {another_user}, whom this engine "
            "does not trust (schedctl engine run --trust)"
        ]
        # While it runs, schedctl schedules says that the live engines do not trust the publisher.
        waits = "waiting for an engine with host=alpha"
        assert team.schedules_while_an_engine_runs("alpha")[-1] == (
            f"theirs: {waits}; publisher {another_user} is not trusted by the live engines"
        )
        assert team.ran() == []

        # Trusting them, it does.
        assert team.engine("alpha", DAY_1, "--trust", another_user) == []
        assert team.ran() == ["theirs 2026-03-02T02:30:00 alpha"]

        # The audit log names who published: that user, on alpha.
        events = json.loads(team.run("alpha", "events", "--schedule", "theirs", "--format", "json", now=DAY_1))
        [published] = [e for e in events["events"] if e["kind"] == "schedule.published"]
        assert (published["actor"]["user"], published["actor"]["host"]) == (another_user, "alpha")
    finally:
        shutil.rmtree(shared)
