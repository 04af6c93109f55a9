"""schedctl as processes on one ledger, one per host (``TIDEMARK_HOSTNAME``): a team's
commands and engines, each task logging what ran where to one file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from . import DAILY

PY = sys.executable
APPLY_AT = "2026-03-01T12:00:00Z"


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
