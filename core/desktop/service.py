"""The headless engine as a systemd *user* service, so schedules keep running
without the window.

:func:`install_service` writes ``~/.config/systemd/user/tidemark-engine.service``
(ExecStart = this installation's ``schedctl engine run``, the ledger in ``Environment=``,
Restart=on-failure), then runs ``systemctl --user daemon-reload`` and
``systemctl --user enable --now``; :func:`uninstall_service` undoes it. Every
``systemctl`` call goes through a :data:`Runner`, so tests check the unit text
and the calls without touching the machine. Where systemd or a user session is
absent, nothing is written and the result says so, with the command to run
instead. On macOS (:func:`running_on` is ``darwin``) the same calls write and
remove a launchd agent instead (core/desktop/launchd.py).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.desktop.service_command import (
    Ran,
    Runner,
    ServiceResult,
    Starts,
    engine_argv,
    engine_env,
    first_line,
    pinned_db,
    schedctl_argv,
    system_runner,
    write_private,
)
from core.exporting.refusal import control_character
from core.exporting.unit_syntax import assignment, command_line, plain_value
from core.team.redact import mask_urls

UNIT_NAME = "tidemark-engine.service"


@dataclass
class ServiceSetup:
    """Where the unit goes and what it runs; the defaults are this user and this installation."""

    unit_dir: Path = field(default_factory=lambda: user_unit_dir())
    schedctl: tuple[str, ...] = field(default_factory=lambda: schedctl_argv())
    runner: Runner = system_runner
    #: Whether a ``systemctl`` program exists (a test passes False to play a machine without systemd).
    has_systemctl: bool | None = None

    @property
    def unit_path(self) -> Path:
        return self.unit_dir / UNIT_NAME


def user_unit_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/systemd/user``, else ``~/.config/systemd/user``."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def team_options(
    *,
    allow_second: bool = False,
    labels: Iterable[tuple[str, str]] = (),
    trusts: Iterable[str] = (),
    metrics_port: int | None = None,
    notify: bool = True,
) -> list[str]:
    """``engine run``'s options for a service's command: ``--metrics-port N`` (Prometheus), then the
    team's: ``--allow-second``, ``--no-notify`` when its desktop notifications are off, one
    ``--label KEY=VALUE`` per label and one ``--trust USER`` per trusted user."""
    options = [] if metrics_port is None else ["--metrics-port", str(metrics_port)]
    options += ["--allow-second"] if allow_second else []
    if not notify:
        options.append("--no-notify")
    for key, value in labels:
        options += ["--label", f"{key}={value}"]
    for user in trusts:
        options += ["--trust", user]
    return options


def running_on() -> str:
    """The platform a service is installed for: ``darwin`` gets a launchd agent (core.desktop.launchd),
    the rest systemd."""
    return sys.platform


def service_problem(db: str, options: Sequence[str] = (), db_name: str = "the ledger") -> str | None:
    """Why a service's file cannot hold the ledger ``db`` (named ``db_name``) or one of ``options``
    (a line break would end a line of the unit and start a setting of its own), or None."""
    named = [(db_name, db)]
    flag = "an option"
    for word in options:
        flag = word if word.startswith("--") else flag
        named.append((f"{flag} {mask_urls(repr(word))}" if word != flag else flag, word))
    for what, text in named:
        bad = control_character(text)
        if bad is not None:
            return f"{what} has {bad}: a service's file cannot hold one"
    return None


def unit_text(exec_argv: Sequence[str], db: str) -> str:
    """The text of the unit file (the Description, which systemctl shows to anyone, has no password;
    the ledger is in ``Environment=``, which only this user and root can read, not on ExecStart)."""
    exec_start = command_line(exec_argv, "the engine's command")
    environment = " ".join(assignment(name, value, name) for name, value in engine_env(db).items())
    description = plain_value(f"Tidemark engine for {mask_urls(db)}", "the ledger")
    return f"""\
# Written by `schedctl engine install-service`; remove it with `schedctl engine uninstall-service`.
[Unit]
Description={description}
# Keep retrying: while the desktop app's engine runs on the same ledger this one
# is refused, and starts once the app's engine has stopped.
StartLimitIntervalSec=0

[Service]
Type=simple
Environment={environment}
ExecStart={exec_start}
Restart=on-failure
RestartSec=15
# SIGTERM lets the engine finish its pass and record its tasks' outcomes.
KillMode=mixed
TimeoutStopSec=10min

[Install]
WantedBy=default.target
"""


def manual_command(setup: Starts, db: str, options: Sequence[str] = ()) -> str:
    """The command to keep the engine running without systemd, as it is shown: a password in the
    ledger's URL is ``***`` (the person writes it in)."""
    env = " ".join(f"{name}={shlex.quote(mask_urls(value))}" for name, value in engine_env(db).items())
    return f"{env} nohup " + shlex.join(engine_argv(setup, options)) + " >>tidemark-engine.log 2>&1 &"


def _systemctl(setup: ServiceSetup, *args: str) -> tuple[tuple[str, ...], Ran]:
    argv = ("systemctl", "--user", *args)
    return argv, setup.runner(argv)


def _unavailable(setup: ServiceSetup) -> tuple[str | None, list[tuple[str, ...]]]:
    """Why systemd's user manager cannot be used here, or None; and the calls made to find out."""
    has = setup.has_systemctl if setup.has_systemctl is not None else shutil.which("systemctl") is not None
    if not has:
        return "systemd is not available on this machine (no systemctl)", []
    argv, ran = _systemctl(setup, "is-system-running")
    # is-system-running exits non-zero for "degraded" too; no answer, or "offline" (systemctl is there
    # but no user manager answers on the bus), means there is nothing to install into.
    if ran.returncode != 0 and ran.stdout.strip() in ("", "offline", "unknown"):
        return f"there is no systemd user session here ({first_line(ran)})", [argv]
    return None, [argv]


def install_service(db: str | None, setup: ServiceSetup | None = None, options: Sequence[str] = ()) -> ServiceResult:
    """Write the unit, reload the user manager, and enable and start the service; ``options``
    go after ``engine run`` (:func:`engine_argv`; the ledger goes in its environment). On macOS, a launchd agent instead
    (:func:`core.desktop.launchd.install_agent`)."""
    problem = service_problem(pinned_db(db), options)
    if problem is not None:
        return ServiceResult(False, (f"{problem}; nothing was installed",), (setup or ServiceSetup()).unit_path)
    if setup is None and running_on() == "darwin":
        from core.desktop.launchd import install_agent

        return install_agent(db, options=options)
    setup = setup or ServiceSetup()
    pinned = pinned_db(db)
    path = setup.unit_path
    why, calls = _unavailable(setup)
    if why is not None:
        instead = manual_command(setup, pinned, options)
        return ServiceResult(
            False, (f"{why}; nothing was installed",), path, tuple(calls), instead=instead, written=False
        )
    text = unit_text(engine_argv(setup, options), pinned)
    path.parent.mkdir(parents=True, exist_ok=True)
    previous = path.read_text(encoding="utf-8") if path.exists() else None
    changed = previous is not None and previous != text
    write_private(path, text.encode("utf-8"))  # a PostgreSQL URL may hold a password
    steps: list[tuple[str, ...]] = [("daemon-reload",), ("enable", "--now", UNIT_NAME)]
    if changed:
        steps.append(("try-restart", UNIT_NAME))  # a running service keeps its old ExecStart until restarted
    for args in steps:
        argv, ran = _systemctl(setup, *args)
        calls.append(argv)
        if ran.returncode != 0:
            # Leave things as they were: the old unit back, or none.
            if previous is None:
                path.unlink(missing_ok=True)
            else:
                write_private(path, previous.encode("utf-8"))
            return ServiceResult(
                False,
                (f"`{' '.join(argv)}` failed: {first_line(ran)}; nothing was installed",),
                path,
                tuple(calls),
                instead=manual_command(setup, pinned, options),
                written=False,
            )
    return ServiceResult(
        True,
        (
            f"installed {path}",
            f"the engine for {mask_urls(pinned)} is enabled and started: it runs whenever you are logged in",
            f"see it with: systemctl --user status {UNIT_NAME}",
        ),
        path,
        tuple(calls),
        written=True,
    )


def uninstall_service(setup: ServiceSetup | None = None) -> ServiceResult:
    """Stop and disable the service, remove the unit and reload the user manager (macOS: remove the agent)."""
    if setup is None and running_on() == "darwin":
        from core.desktop.launchd import uninstall_agent

        return uninstall_agent()
    setup = setup or ServiceSetup()
    path = setup.unit_path
    if not path.exists():
        return ServiceResult(True, (f"nothing to remove: {path} does not exist",), path)
    why, calls = _unavailable(setup)
    if why is None:
        argv, ran = _systemctl(setup, "disable", "--now", UNIT_NAME)
        calls.append(argv)
        if ran.returncode != 0:
            return ServiceResult(
                False, (f"`{' '.join(argv)}` failed: {first_line(ran)}; {path} was kept",), path, tuple(calls)
            )
    path.unlink()
    lines = [f"removed {path}"]
    if why is None:
        argv, _ran = _systemctl(setup, "daemon-reload")
        calls.append(argv)
        lines.append("the engine service is stopped and disabled")
    return ServiceResult(True, tuple(lines), path, tuple(calls))


def service_installed(setup: ServiceSetup | None = None) -> bool:
    """Whether this user has the unit file (macOS: the agent's plist)."""
    if setup is None and running_on() == "darwin":
        from core.desktop.launchd import agent_installed

        return agent_installed()
    return (setup or ServiceSetup()).unit_path.exists()


def start_installed_service(setup: ServiceSetup | None = None) -> ServiceResult:
    """Start the installed service now (the window hands its ledger over to it)."""
    if setup is None and running_on() == "darwin":
        from core.desktop.launchd import start_installed_agent

        return start_installed_agent()
    setup = setup or ServiceSetup()
    argv, ran = _systemctl(setup, "start", UNIT_NAME)
    if ran.returncode != 0:
        return ServiceResult(False, (f"`{' '.join(argv)}` failed: {first_line(ran)}",), setup.unit_path, (argv,))
    return ServiceResult(True, (f"started {UNIT_NAME}",), setup.unit_path, (argv,))
