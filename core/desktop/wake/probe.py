"""Which wake backend this host offers, or why none: asked once per process.

Linux: a systemd user manager must answer (``systemctl --user show-environment``)
and be version 254 or later (earlier ones set ``WakeSystem=`` only with
CAP_WAKE_ALARM, which a user manager lacks by default). macOS: ``pmset
schedule`` needs root. A ``CLOCK_REALTIME_ALARM`` timerfd is not offered:
Python has no ``timerfd_create`` before 3.13, and a timer held by the engine
dies with it, while the OS's timers outlive the engine (docs/decisions.md).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
from collections.abc import Callable

from core.desktop.service_command import Runner, timed_runner
from core.desktop.wake.alarms import CALL_TIMEOUT, CannotWake, WakeBackend
from core.desktop.wake.pmset import PmsetWakes
from core.desktop.wake.systemd_timer import FIRST_WAKING_VERSION, SystemdTimers

_VERSION = re.compile(r"^systemd (\d+)")


def linux_backend(runner: Runner, which: Callable[[str], str | None] = shutil.which) -> WakeBackend:
    """Systemd user timers, or why not."""
    if which("systemctl") is None or which("systemd-run") is None:
        return CannotWake("systemd is not installed")
    if runner(["systemctl", "--user", "show-environment"]).returncode != 0:
        return CannotWake("there is no systemd user session (systemctl --user does not answer)")
    found = _VERSION.match(runner(["systemctl", "--version"]).stdout.strip())
    version = int(found.group(1)) if found else 0
    if version < FIRST_WAKING_VERSION:
        return CannotWake(
            f"systemd {version or 'of unknown version'} is older than {FIRST_WAKING_VERSION} "
            "and its user session lacks CAP_WAKE_ALARM"
        )
    return SystemdTimers(runner)


def mac_backend(runner: Runner, euid: int) -> WakeBackend:
    """``pmset schedule wake``, when permitted (as root)."""
    if euid != 0:
        return CannotWake("pmset schedule wake is not permitted without administrator rights")
    return PmsetWakes(runner)


def choose(platform: str, runner: Runner, euid: int, which: Callable[[str], str | None] = shutil.which) -> WakeBackend:
    """The backend for ``platform`` (``sys.platform``)."""
    if platform.startswith("linux"):
        return linux_backend(runner, which)
    if platform == "darwin":
        return mac_backend(runner, euid)
    return CannotWake(f"Tidemark cannot wake a machine on {platform}")


#: Set to 1, no engine of this process arms an alarm (a diagnostic and test switch).
WAKE_OFF_ENV = "TIDEMARK_NO_WAKE"

_lock = threading.Lock()
_host: list[WakeBackend] = []


def host_backend() -> WakeBackend:
    """This host's backend, probed on the first call and kept (every call after is free)."""
    if os.environ.get(WAKE_OFF_ENV) == "1":
        return CannotWake(f"waking is turned off here ({WAKE_OFF_ENV}=1)")
    with _lock:
        if not _host:
            _host.append(choose(sys.platform, timed_runner(CALL_TIMEOUT), getattr(os, "geteuid", lambda: -1)()))
        return _host[0]
