"""Which process is which: a pid is only an identity together with its start time and boot.

A pid is reused after its process ends, and after a reboot every pid means
something else. Tidemark therefore records a process as ``(host, pid, start
time, boot id)`` and, asked later whether it still runs, answers
:attr:`Liveness.ALIVE` only when a process with that pid exists on this host,
in this boot, and started at the recorded time. A process on another host can
not be looked at: the answer there is :attr:`Liveness.UNKNOWN` and the caller
falls back on leases.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import psutil

#: Two readings of one process's start time differ by less than this.
START_TIME_TOLERANCE = 0.5

#: This boot's id on Linux; absent elsewhere, where a pid and its start time alone say which process it is.
BOOT_ID_FILE = Path("/proc/sys/kernel/random/boot_id")


class Liveness(StrEnum):
    """What can be said about a recorded process now."""

    ALIVE = "alive"
    GONE = "gone"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class ProcessIdentity:
    """A process as recorded: where, which pid, when it started, in which boot."""

    host: str
    pid: int
    started: float | None
    boot_id: str | None


def this_host() -> str:
    """The name this machine records itself under."""
    return socket.gethostname()


def boot_id() -> str | None:
    """This boot's id (Linux), or ``None`` where the platform has none."""
    try:
        return BOOT_ID_FILE.read_text(encoding="ascii").strip() or None
    except OSError:
        return None


def start_time(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), or ``None`` if there is none."""
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.Error, OSError, ValueError):
        return None


def identify(pid: int | None = None) -> ProcessIdentity:
    """The identity of process ``pid`` (default: this process) on this host."""
    pid = os.getpid() if pid is None else pid
    return ProcessIdentity(this_host(), pid, start_time(pid), boot_id())


def liveness(identity: ProcessIdentity) -> Liveness:
    """Whether the recorded process still runs, judged from this host.

    ``GONE`` is certain (this host, and the pid is free, reused, a zombie, or
    from an earlier boot); ``ALIVE`` is certain (same pid, same start time, same
    boot); anything that cannot be checked is ``UNKNOWN``.
    """
    if identity.host != this_host():
        return Liveness.UNKNOWN
    current_boot = boot_id()
    if identity.boot_id and current_boot and identity.boot_id != current_boot:
        return Liveness.GONE
    try:
        process = psutil.Process(identity.pid)
        started = float(process.create_time())
        zombie = process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return Liveness.GONE
    except (psutil.Error, OSError):
        return Liveness.UNKNOWN
    if zombie:
        return Liveness.GONE
    if identity.started is None:
        return Liveness.UNKNOWN
    if abs(started - identity.started) > START_TIME_TOLERANCE:
        return Liveness.GONE
    return Liveness.ALIVE
