"""A fake ``systemd-run`` and ``systemctl`` on PATH, for the wake alarms' tests.

Each call appends its argv (a JSON list) to ``calls.jsonl`` in the fake's
folder. ``systemd-run --unit=U --on-calendar='... UTC'`` keeps the timer U in
``timers/``; ``systemctl --user stop U.timer`` removes it; ``list-timers
--output=json`` prints those left, as systemd does (``next`` in microseconds
since the epoch). ``--version`` says ``systemd $FAKE_SYSTEMD_VERSION`` (256),
and ``--user show-environment`` fails when ``no-session`` exists in the folder.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

_COMMON = f"""#!{sys.executable}
import json, os, sys
from datetime import datetime, timezone
HERE = os.path.dirname(os.path.abspath(__file__))
TIMERS = os.path.join(HERE, "timers")
os.makedirs(TIMERS, exist_ok=True)
with open(os.path.join(HERE, "calls.jsonl"), "a") as log:
    log.write(json.dumps([os.path.basename(sys.argv[0])] + sys.argv[1:]) + "\\n")
args = sys.argv[1:]
"""

_RUN = """
unit = next(a.split("=", 1)[1] for a in args if a.startswith("--unit="))
when = next(a.split("=", 1)[1] for a in args if a.startswith("--on-calendar="))
path = os.path.join(TIMERS, unit + ".timer")
if os.path.exists(path):
    sys.exit("Failed to start transient timer unit: Unit " + unit + ".timer was already loaded")
at = datetime.strptime(when, "%Y-%m-%d %H:%M:%S UTC").replace(tzinfo=timezone.utc)
with open(path, "w") as f:
    f.write(str(int(at.timestamp()) * 1000000))
"""

_CTL = """
if args == ["--version"]:
    print("systemd " + os.environ.get("FAKE_SYSTEMD_VERSION", "256") + " (fake)")
elif args[:2] == ["--user", "show-environment"]:
    sys.exit(1 if os.path.exists(os.path.join(HERE, "no-session")) else 0)
elif args[:2] == ["--user", "stop"]:
    path = os.path.join(TIMERS, args[2])
    if not os.path.exists(path):
        sys.exit("Failed to stop " + args[2] + ": Unit " + args[2] + " not loaded.")
    os.remove(path)
elif args[:2] == ["--user", "list-timers"]:
    rows = []
    for name in sorted(os.listdir(TIMERS)):
        with open(os.path.join(TIMERS, name)) as f:
            rows.append({"next": int(f.read()), "left": 0, "last": None, "passed": None,
                         "unit": name, "activates": name[:-6] + ".service"})
    print(json.dumps(rows))
"""


@dataclass(frozen=True)
class FakeSystemd:
    """The fake's folder (put it first on PATH) and what was asked of it."""

    folder: Path

    def calls(self) -> list[list[str]]:
        """Every call so far, each as its program's name and arguments."""
        path = self.folder / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def arms(self) -> list[tuple[str, str]]:
        """(unit, calendar) of every ``systemd-run`` so far."""
        found = []
        for call in self.calls():
            if call[0] == "systemd-run":
                unit = next(a.split("=", 1)[1] for a in call if a.startswith("--unit="))
                found.append((unit, next(a.split("=", 1)[1] for a in call if a.startswith("--on-calendar="))))
        return found

    def timers(self) -> dict[str, datetime]:
        """The timers set now: unit -> when it fires."""
        folder = self.folder / "timers"
        if not folder.exists():
            return {}
        return {
            p.name.removesuffix(".timer"): datetime.fromtimestamp(int(p.read_text()) // 1_000_000, UTC)
            for p in sorted(folder.iterdir())
        }

    def forget_calls(self) -> None:
        (self.folder / "calls.jsonl").unlink(missing_ok=True)


def install(folder: Path) -> FakeSystemd:
    """Write the two programs into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in (("systemd-run", _RUN), ("systemctl", _CTL)):
        path = folder / name
        path.write_text(_COMMON + body)
        path.chmod(0o755)
    return FakeSystemd(folder)
