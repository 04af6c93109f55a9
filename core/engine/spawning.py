"""A task's process: started in a session of its own with both outputs on pipes, stdin on
/dev/null and none of the engine's descriptors, then reaped; the program a command names;
and whether a group has any live process left.

``posix_spawn`` starts a task where it can say what ``Popen`` would do (the C library's,
called without the GIL, where :mod:`core.engine.libc_spawn` finds it); ``Popen`` elsewhere.
:mod:`core.engine.runner` reads the pipes and decides how the run ended.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import psutil

from core.engine import libc_spawn

#: Where Linux shows its processes (their state tells a zombie from a live one); elsewhere it is absent.
PROC_ROOT = Path("/proc")

_DEVNULL: list[int] = []


def _devnull() -> int:
    """One descriptor of /dev/null for every task's stdin (Popen would open one per task)."""
    if not _DEVNULL:
        _DEVNULL.append(os.open(os.devnull, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)))
    return _DEVNULL[0]


def open_pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux 5.3+), else None."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


def find_program(program: str, path: str | None = None) -> str | None:
    """The executable a command's first element names, or None when there is none."""
    if os.sep in program:
        # os.access alone says yes to root for any file; require an execute bit too.
        ok = os.path.isfile(program) and os.access(program, os.X_OK) and os.stat(program).st_mode & 0o111
        return program if ok else None
    return shutil.which(program, path=path)


def only_zombies(pgid: int) -> bool:
    """Whether every process of the group is a zombie: read from /proc on Linux, asked of psutil elsewhere."""
    try:
        entries = os.listdir(PROC_ROOT)
    except OSError:
        return _only_zombies_by_psutil(pgid)
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(PROC_ROOT / entry / "stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return False
    return True


def _only_zombies_by_psutil(pgid: int) -> bool:
    """:func:`only_zombies` without /proc (macOS, the BSDs). A member whose state cannot be read counts as alive."""
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) != pgid:
                continue
            if process.status() != psutil.STATUS_ZOMBIE:
                return False
        except (ProcessLookupError, psutil.NoSuchProcess):  # gone, or a zombie psutil cannot look into
            continue
        except (OSError, psutil.Error):
            return False
    return True


class Command(Protocol):
    """What a spawn needs of a prepared command (:class:`core.engine.runner.PreparedCommand` is one)."""

    @property
    def argv(self) -> list[str]: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def env(self) -> dict[str, str]: ...


class Child(Protocol):
    """A started task's main process, as the reader loop sees it (a ``Popen`` is one)."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...


#: ``posix_spawn`` and ``posix_spawnp``: the C library's called without the GIL where it can close a
#: range of descriptors (:mod:`core.engine.libc_spawn`), else ``os.posix_spawn`` and ``os.posix_spawnp``
#: where the platform has them (None elsewhere, or once they proved unable to start a session).
posix_spawn: Callable[..., int] | None = libc_spawn.posix_spawn or getattr(os, "posix_spawn", None)
posix_spawnp: Callable[..., int] | None = libc_spawn.posix_spawnp or getattr(os, "posix_spawnp", None)

#: What ``Popen`` resets to their defaults in a child (``restore_signals``), since Python ignores them.
_RESTORED_SIGNALS = tuple(
    sig for sig in (getattr(signal, name, None) for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ")) if sig is not None
)


class Spawned:
    """A process started with ``posix_spawn``: reaped with ``waitpid`` as ``Popen`` reaps its own."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def _reaped(self, flags: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:  # reaped elsewhere (SIGCHLD ignored): its status is gone, as Popen says
                pid, status = self.pid, 0
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        return self._reaped(os.WNOHANG)

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            code = self._reaped(0)
            assert code is not None
            return code
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while (code := self.poll()) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired([str(self.pid)], timeout)
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.05)
        return code


def spawn(command: Command) -> tuple[Child, int, int]:
    """Start ``command`` in a session of its own, stdin on /dev/null and both outputs on
    pipes; returns the process and the read ends of its stdout and stderr.

    ``posix_spawn`` starts it where it can express the task (no working folder to
    change to; a program named with its folder, or looked up on a PATH the task
    shares with the engine): it costs the engine less than ``Popen`` (no error pipe,
    none of ``Popen``'s Python around the call). Elsewhere ``Popen`` starts it. Both
    say why a program cannot start in the same words."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        child = _posix_spawned(command, out_w, err_w) or _popen(command, out_w, err_w)
    except BaseException:
        for fd in (out_r, err_r):
            os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w):  # the child has its own copies
            os.close(fd)
    return child, out_r, err_r


def _popen(command: Command, stdout: int, stderr: int) -> Child:
    return subprocess.Popen(  # an argv list, never a shell
        command.argv,
        cwd=command.cwd,
        env=command.env,
        stdin=_devnull(),
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
        close_fds=True,
    )


def _posix_spawned(command: Command, stdout: int, stderr: int) -> Child | None:
    """The task started with ``posix_spawn``, or None when it cannot say what ``Popen`` would do
    (a working folder, a program not found, descriptors it cannot list)."""
    global posix_spawn, posix_spawnp
    if posix_spawn is None or command.cwd is not None or not command.argv or min(stdout, stderr) <= 2:
        return None
    start = posix_spawn
    if os.sep not in command.argv[0]:
        # posix_spawnp searches this process's PATH; Popen searches the task's.
        if posix_spawnp is None or command.env.get("PATH") != os.environ.get("PATH") or "PATH" not in command.env:
            return None
        start = posix_spawnp
    actions: list[tuple[int, ...]] = [
        (os.POSIX_SPAWN_DUP2, _devnull(), 0),
        (os.POSIX_SPAWN_DUP2, stdout, 1),
        (os.POSIX_SPAWN_DUP2, stderr, 2),
    ]
    # As Popen's close_fds: everything above stderr closed in the child, or what a listing finds inheritable.
    if getattr(start, "closes_from", False):
        actions.append((libc_spawn.CLOSE_FROM, 3))
    else:
        inherited = _inheritable_fds()
        if inherited is None:
            return None
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in inherited]
    try:
        pid = start(
            command.argv[0], command.argv, command.env, file_actions=actions, setsid=True, setsigdef=_RESTORED_SIGNALS
        )
    except NotImplementedError:  # no POSIX_SPAWN_SETSID here: Popen from now on
        posix_spawn = posix_spawnp = None
        return None
    return Spawned(pid)


def _inheritable_fds() -> list[int] | None:
    """This process's descriptors above 2 that a child would inherit (None when they cannot be listed).

    Python opens its descriptors close-on-exec; only one made inheritable on purpose is here."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found = []
        for name in names:
            fd = int(name)
            with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
                if fd > 2 and os.get_inheritable(fd):
                    found.append(fd)
        return found
    return None
