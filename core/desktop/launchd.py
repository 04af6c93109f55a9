"""The headless engine as a launchd *agent* on macOS: what ``schedctl engine
install-service`` writes there instead of a systemd unit.

:func:`install_agent` writes ``~/Library/LaunchAgents/<LABEL>.plist``: the same
command the systemd unit starts (this installation's ``schedctl engine run`` and
the team options, the ledger in its environment), ``RunAtLoad`` and ``KeepAlive`` (launchd starts it
at login and again whenever it ends), and its output in
``~/Library/Logs/Tidemark``. It prints the ``launchctl bootstrap`` line that
starts it now rather than running it, so nothing here needs a Mac to be tested:
the plist is read back with :mod:`plistlib`. :func:`uninstall_agent` removes the
file and prints the ``launchctl bootout`` line that stops a running agent.
"""

from __future__ import annotations

import os
import plistlib
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.desktop.entry import APP_ID
from core.desktop.service_command import (
    Ran,
    Runner,
    ServiceResult,
    engine_argv,
    engine_env,
    first_line,
    pinned_db,
    schedctl_argv,
    system_runner,
    write_private,
)
from core.team.redact import mask_urls

#: The agent's launchd label (and the plist's name): the app id's own, with ``.engine``.
LABEL = f"{APP_ID}.engine"


def _home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())


@dataclass
class LaunchAgentSetup:
    """Where the agent goes, where it logs, and what it runs; the defaults are this user and installation."""

    agent_dir: Path = field(default_factory=lambda: _home() / "Library" / "LaunchAgents")
    log_dir: Path = field(default_factory=lambda: _home() / "Library" / "Logs" / "Tidemark")
    schedctl: tuple[str, ...] = field(default_factory=lambda: schedctl_argv())
    runner: Runner = system_runner
    #: The user id in launchctl's ``gui/UID`` domain.
    uid: int = field(default_factory=os.getuid)

    @property
    def unit_path(self) -> Path:
        return self.agent_dir / f"{LABEL}.plist"

    @property
    def domain(self) -> str:
        return f"gui/{self.uid}"


def agent_plist(setup: LaunchAgentSetup, argv: Sequence[str], env: Mapping[str, str]) -> bytes:
    """The agent's property list (XML): ``ProgramArguments`` is ``argv`` as is, no shell in between;
    ``EnvironmentVariables`` is ``env`` (the ledger: never on the command line, which ``ps`` shows)."""
    agent = {
        "Label": LABEL,
        "ProgramArguments": list(argv),
        "EnvironmentVariables": dict(env),
        "RunAtLoad": True,
        "KeepAlive": True,
        # While the desktop app's engine holds the ledger this one is refused and ends; launchd starts
        # it again after this many seconds, until the app's engine has stopped.
        "ThrottleInterval": 15,
        # SIGTERM lets the engine finish its pass and record its tasks' outcomes.
        "ExitTimeOut": 600,
        "ProcessType": "Background",
        "StandardOutPath": str(setup.log_dir / "engine.log"),
        "StandardErrorPath": str(setup.log_dir / "engine.err.log"),
    }
    return plistlib.dumps(agent, fmt=plistlib.FMT_XML, sort_keys=False)


def _bootstrap_line(setup: LaunchAgentSetup) -> str:
    return shlex.join(["launchctl", "bootstrap", setup.domain, str(setup.unit_path)])


def _bootout_line(setup: LaunchAgentSetup) -> str:
    return shlex.join(["launchctl", "bootout", f"{setup.domain}/{LABEL}"])


def install_agent(db: str | None, setup: LaunchAgentSetup | None = None, options: Sequence[str] = ()) -> ServiceResult:
    """Write the agent's plist (mode 0600 from its first byte: a PostgreSQL URL may hold a password) and its log folder,
    and say how to start it; ``options`` go after ``engine run`` (the ledger goes in its environment)."""
    setup = setup or LaunchAgentSetup()
    pinned = pinned_db(db)
    path = setup.unit_path
    text = agent_plist(setup, engine_argv(setup, options), engine_env(pinned))
    previous = path.read_bytes() if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    setup.log_dir.mkdir(parents=True, exist_ok=True)
    write_private(path, text)
    lines = [
        f"installed {path}",
        f"the engine for {mask_urls(pinned)} starts whenever you log in; its log: {setup.log_dir}",
    ]
    if previous is not None and previous != text:
        lines.append(f"to restart a running agent with the new command: {_bootout_line(setup)}")
    lines.append(f"start it now with: {_bootstrap_line(setup)}")
    return ServiceResult(True, tuple(lines), path, written=True)


def uninstall_agent(setup: LaunchAgentSetup | None = None) -> ServiceResult:
    """Remove the agent's plist and say how to stop an agent launchd still runs."""
    setup = setup or LaunchAgentSetup()
    path = setup.unit_path
    if not path.exists():
        return ServiceResult(True, (f"nothing to remove: {path} does not exist",), path)
    path.unlink()
    return ServiceResult(True, (f"removed {path}", f"stop a running agent with: {_bootout_line(setup)}"), path)


def agent_installed(setup: LaunchAgentSetup | None = None) -> bool:
    """Whether this user has the agent's plist."""
    return (setup or LaunchAgentSetup()).unit_path.exists()


def start_installed_agent(setup: LaunchAgentSetup | None = None) -> ServiceResult:
    """Start the installed agent now (the window hands its ledger over to it): ``launchctl bootstrap``
    loads it when it is not loaded yet (installed since the last login; launchd refuses a second load,
    which is fine), then ``launchctl kickstart`` starts it unless it runs."""
    setup = setup or LaunchAgentSetup()
    load = ("launchctl", "bootstrap", setup.domain, str(setup.unit_path))
    setup.runner(load)
    argv = ("launchctl", "kickstart", f"{setup.domain}/{LABEL}")
    ran: Ran = setup.runner(argv)
    if ran.returncode != 0:
        return ServiceResult(False, (f"`{shlex.join(argv)}` failed: {first_line(ran)}",), setup.unit_path, (load, argv))
    return ServiceResult(True, (f"started {LABEL}",), setup.unit_path, (load, argv))
