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

import math
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import psutil

#: Two readings of one process's start time differ by less than this.
START_TIME_TOLERANCE = 0.5

#: This boot's id on Linux; absent elsewhere, where a pid and its start time alone say which process it is.
BOOT_ID_FILE = Path("/proc/sys/kernel/random/boot_id")

#: Where Linux shows its processes; elsewhere it is absent and psutil is asked.
PROC_ROOT = Path("/proc")

#: The unit of a process's start time in /proc (psutil's too).
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


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
    """When process ``pid`` started (seconds since the epoch), or ``None`` if there is none.

    On Linux it is read from /proc as psutil reads it (the same value, to the bit), for a
    fraction of psutil's cost. Elsewhere psutil is asked. The engine reads it for a task it
    has just started only when :func:`start_between` cannot tell."""
    boot = boot_time()
    if boot is None:
        try:
            return float(psutil.Process(pid).create_time())
        except (psutil.Error, OSError, ValueError):
            return None
    try:
        ticks = (
            read_file(f"{PROC_ROOT}/{pid}/stat").rsplit(b")", 1)[1].split()[19]
        )  # after the name: it may hold anything
        return float(ticks) / _CLOCK_TICKS + boot
    except (OSError, IndexError, ValueError):
        return None


#: The widest span (seconds) around a spawn whose clock readings stand for its task's start time.
SPAWN_SPAN = 0.05

#: The clock a task's start is measured on in /proc (the time since boot), or None where there is none.
_BOOT_CLOCK: int | None = getattr(time, "CLOCK_BOOTTIME", None)


def boot_clock() -> float | None:
    """Seconds since boot now (the clock /proc measures a process's start on), or None where there is none."""
    return None if _BOOT_CLOCK is None else time.clock_gettime(_BOOT_CLOCK)


def start_between(before: float | None, after: float | None) -> float | None:
    """The start time of a process started between two readings of :func:`boot_clock`, as
    :func:`start_time` would read it from /proc (to within :data:`SPAWN_SPAN`), with no file
    read; or None when the readings are missing or too far apart to stand for it.

    The kernel stamps a process's start when it is forked, which a spawn does between the
    two readings; /proc gives it in clock ticks, so ``before`` is cut to a tick as /proc cuts
    it. Every comparison of start times allows :data:`START_TIME_TOLERANCE`, ten times the span."""
    if before is None or after is None or not 0.0 <= after - before <= SPAWN_SPAN:
        return None
    boot = boot_time()
    if boot is None:
        return None
    return math.floor(before * _CLOCK_TICKS) / _CLOCK_TICKS + boot


def read_file(path: str) -> bytes:
    """A small file's bytes, whole (no buffered file object: this is on the spawn's path)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def boot_offset() -> float | None:
    """The wall clock less the time since boot, or None where there is no such clock or the
    reading was interrupted for long enough (a millisecond) to be unsure of it."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    if boottime is None:
        return None
    before = time.time()
    since_boot = time.clock_gettime(boottime)
    after = time.time()
    return None if after - before > BOOT_SLACK / 10 else before - since_boot


#: How far (seconds) the wall clock less the time since boot may move before /proc/stat's btime is read again.
BOOT_SLACK = 0.01


class BootTime:
    """When this system booted, as /proc/stat's ``btime`` says now (psutil's source), or None without /proc.

    The kernel computes it as the wall clock less the time since boot, in whole seconds.
    Reading /proc/stat costs more than the rest of a start time, so the value is kept with
    that difference as this process measured it (``offset``), and read again when the
    difference has moved (the wall clock was set) or lies near a whole second (it could
    round the other way)."""

    def __init__(
        self, offset: Callable[[], float | None] = boot_offset, read: Callable[[str], bytes] = read_file
    ) -> None:
        self.offset = offset
        self.read = read
        self.kept: tuple[float, float] | None = None
        """The last btime read, with the offset measured with it (None: read it next time)."""

    def __call__(self) -> float | None:
        offset, kept = self.offset(), self.kept
        if offset is not None and kept is not None and abs(offset - kept[0]) < BOOT_SLACK:
            return kept[1]
        try:
            stat = self.read(f"{PROC_ROOT}/stat")
            start = stat.index(b"\nbtime ") + 7
            btime = float(stat[start : stat.index(b"\n", start)])
        except (OSError, ValueError):
            return None
        near_a_second = not BOOT_SLACK < (offset or 0.0) % 1.0 < 1.0 - BOOT_SLACK
        self.kept = None if offset is None or near_a_second else (offset, btime)
        return btime


#: This process's boot time, kept between task starts.
boot_time = BootTime()


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
