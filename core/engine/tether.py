"""Tasks die with their engine: a watcher process ends them when the engine dies.

Each engine process starts one small watcher (lazily, at its first task) and
keeps a pipe to it. As a task starts, the engine writes its process group and
start time to the pipe; as it ends, that the group is done. The watcher only
reads. When the pipe closes without its engine having released every group,
the engine has died (a crash, SIGKILL, or an exit while tasks ran): the
watcher sends each group still held SIGTERM, then SIGKILL after the runner's
grace period, as a timeout would, and exits.

Why not Linux's parent-death signal (``PR_SET_PDEATHSIG``)? It reaches the
group leader only (not the processes it started), it fires when the *thread*
that forked the task ends rather than the process, and setting it needs a
``preexec_fn``, which turns every spawn into a full fork: measured with
``bench/engine_bench.py``, the engine ran ``true`` 3.7 times slower. The
watcher costs two small writes per task and works wherever there are
process groups. It reads them in batches (at most every
:data:`BATCH_SECONDS` while it holds groups), not a wake-up per line: the
lines wait in the pipe's buffer, which the engine's writes reach at once,
so a batch loses nothing when the engine dies; its groups are ended at
most that much later.

Limits: a task started in the moment before its group reaches the watcher,
or whose watcher was killed with the engine (a ``kill -9`` of the whole
process group, say), outlives the engine; the next engine on the host finds
it as an orphan (:mod:`core.engine.orphans`). A frozen application (no
Python to run the watcher with) has no watcher.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys
import threading

from core.engine.runner import KILL_GRACE_SECONDS

#: While groups are held, the watcher reads its pipe at most this often (seconds): how late it may see its engine end.
BATCH_SECONDS = 0.05

#: The watcher: reads ``+ PGID START`` and ``- PGID`` lines; at end of input, ends the groups still held.
WATCHER = f"""
import os, signal, sys, time
# It stays in its engine's process group (so that an engine ending its tasks'
# groups does not end it), but outlives a Ctrl-C or a hangup long enough to
# see its engine go.
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
try:
    import psutil
except ImportError:
    psutil = None

def ours(pgid, started):
    # The recorded leader, or (leader gone) members left in its group: the kernel
    # does not hand out a pid while a group of that number exists.
    if psutil is not None:
        try:
            created = psutil.Process(pgid).create_time()
            return started is None or abs(created - started) <= 0.5
        except psutil.NoSuchProcess:
            pass
        except psutil.Error:
            return False
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False

def signal_all(groups, sig):
    for pgid in groups:
        try:
            os.killpg(pgid, sig)
        except OSError:
            pass

held = {{}}
rest = b""
while True:
    # One read takes every line written since the last one. While groups are held the
    # watcher reads at most every {BATCH_SECONDS!r} s, so a busy engine does not wake it
    # twice per task; the lines wait in the pipe, and its end still shows within that time.
    chunk = os.read(0, 65536)
    if not chunk:
        break
    *lines, rest = (rest + chunk).split(b"\\n")
    for line in lines:
        parts = line.split()
        if len(parts) == 3 and parts[0] == b"+":
            held[int(parts[1])] = None if parts[2] == b"-" else float(parts[2])
        elif len(parts) == 2 and parts[0] == b"-":
            held.pop(int(parts[1]), None)
    if held:
        time.sleep({BATCH_SECONDS!r})
targets = [pgid for pgid, started in held.items() if ours(pgid, started)]
signal_all(targets, signal.SIGTERM)
deadline = time.monotonic() + {KILL_GRACE_SECONDS!r}
while targets and time.monotonic() < deadline:
    time.sleep(0.05)
    targets = [pgid for pgid in targets if ours(pgid, held[pgid])]
signal_all(targets, signal.SIGKILL)
"""


class Tether:
    """This process's pipe to its watcher; :meth:`hold` a task's group while it runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watcher: subprocess.Popen[bytes] | None = None
        self._held: dict[int, float | None] = {}
        self._unavailable = bool(getattr(sys, "frozen", False))

    def hold(self, pgid: int, started: float | None) -> None:
        """The task leading group ``pgid`` (started at ``started``) runs: end it if this process dies."""
        with self._lock:
            self._held[pgid] = started
            self._send(self._line(pgid, started))

    def release(self, pgid: int) -> None:
        """The task has ended (or is someone else's to end now)."""
        with self._lock:
            if pgid in self._held:
                del self._held[pgid]
                self._send(f"- {pgid}\n".encode())

    def watcher_pid(self) -> int | None:
        """The watcher's pid, while one runs (for tests and diagnostics)."""
        with self._lock:
            return self._watcher.pid if self._watcher is not None else None

    @staticmethod
    def _line(pgid: int, started: float | None) -> bytes:
        return f"+ {pgid} {'-' if started is None else repr(started)}\n".encode()

    def _send(self, line: bytes) -> None:
        """Write one line (shorter than PIPE_BUF: never interleaved); start the watcher if needed.

        A watcher that died is found by the write failing (its pipe has no reader left), not
        asked about before every write: that is two system calls less per task."""
        for _ in range(2):
            watcher = self._watcher or self._running()
            if watcher is None:
                return
            assert watcher.stdin is not None
            try:
                os.write(watcher.stdin.fileno(), line)
                return
            except OSError:  # the watcher died: start another
                self._watcher = None

    def _running(self) -> subprocess.Popen[bytes] | None:
        if self._watcher is not None and self._watcher.poll() is None:
            return self._watcher
        if self._watcher is not None and self._watcher.stdin is not None:
            self._watcher.stdin.close()  # it died (someone killed it): a new one takes over
        if self._unavailable:
            return None
        try:
            self._watcher = subprocess.Popen(
                [sys.executable, "-I", "-c", WATCHER],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        except OSError:
            self._unavailable = True
            return None
        assert self._watcher.stdin is not None
        try:
            for pgid, started in self._held.items():  # a new watcher after one died: it gets every group held
                os.write(self._watcher.stdin.fileno(), self._line(pgid, started))
        except OSError:
            self._watcher = None
        return self._watcher

    def close(self) -> None:
        """This process ends: the watcher ends what is still held, and exits."""
        with self._lock:
            watcher, self._watcher = self._watcher, None
        if watcher is None or watcher.stdin is None:
            return
        watcher.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            watcher.wait(timeout=KILL_GRACE_SECONDS + 1)


#: The one tether of this process, shared by its engines.
TETHER = Tether()
atexit.register(TETHER.close)
