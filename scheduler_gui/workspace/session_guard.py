"""A window that dies leaves a trace the next start finds.

Each running window keeps a small marker file in the data folder
(``sessions/<pid>.json``: its host, pid, process start time, boot id, when
its session began and when it was last seen alive, rewritten every
:data:`BEAT_EVERY`). A clean quit removes it. The next start looks at the
markers it finds: one whose process is gone (:mod:`core.engine.processes`:
the pid free, reused, or from an earlier boot) belongs to a window that
closed unexpectedly, and is reported once as an :class:`UncleanExit`. A
marker of a window still running (a second window on the same ledger) is
left alone.

:meth:`SessionGuard.record_crashes` also points :mod:`faulthandler` at
``crash.log`` in the same folder for the whole session, so a fatal signal
(a segmentation fault in Qt, an abort) leaves the Python stacks of every
thread there, under a line naming the session.

Nothing here imports Qt; the instants come from the clock it is given.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO

from core.clock import Clock
from core.engine.processes import Liveness, ProcessIdentity, identify, liveness, this_host
from core.time.formats import fmt_utc

#: How often a running window says it is alive; the crash happened within this after "last seen".
BEAT_EVERY = timedelta(seconds=30)
CRASH_LOG = "crash.log"
#: A crash log grown past this is started afresh (its latest part kept) at the next start.
MAX_LOG_BYTES = 512 * 1024
#: The header line of each session in the crash log.
SESSION_HEADER = "=== Tidemark window, pid {pid}, started {started} ==="


def data_folder() -> Path:
    """The user's data folder of Tidemark (``platformdirs``), where the default ledger lives too."""
    import platformdirs

    return Path(platformdirs.user_data_dir("tidemark"))


@dataclass(frozen=True)
class UncleanExit:
    """A window that closed without quitting: its process, its session, where its crash log is."""

    host: str
    pid: int
    started_at: datetime
    last_seen: datetime
    crash_log: Path

    @property
    def died_by(self) -> datetime:
        """The latest instant it can have died at: it would have been seen again after that."""
        return self.last_seen + BEAT_EVERY

    def crash_log_text(self, max_chars: int = 20_000) -> str | None:
        """What the crash log recorded for this session (a fatal error's stacks), or None."""
        try:
            text = self.crash_log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        header = SESSION_HEADER.format(pid=self.pid, started=fmt_utc(self.started_at))
        at = text.rfind(header)
        if at < 0:
            return None
        body = text[at + len(header) :]
        following = body.find("\n=== Tidemark window, pid ")
        body = (body if following < 0 else body[:following]).strip()
        return body[:max_chars] or None


class SessionGuard:
    """The marker of this window's session, and the crash log. ``begin`` at start, ``beat``
    now and then, ``end`` on a clean quit."""

    def __init__(self, folder: Path, clock: Clock, process: ProcessIdentity | None = None) -> None:
        self.folder = folder
        self.clock = clock
        self.process = process if process is not None else identify()
        self.crash_log = folder / CRASH_LOG
        self.started_at: datetime | None = None
        self._log: IO[str] | None = None

    @property
    def marker(self) -> Path:
        return self.folder / "sessions" / f"{self.process.pid}.json"

    def begin(self) -> list[UncleanExit]:
        """Write this session's marker; return the windows that closed unexpectedly, oldest first
        (each is reported once: its marker is removed)."""
        (self.folder / "sessions").mkdir(parents=True, exist_ok=True)
        found = []
        for path in sorted((self.folder / "sessions").glob("*.json")):
            if path == self.marker:
                continue  # a marker of an earlier process with this pid: written over below
            exit_ = self._read(path)
            if exit_ is None:
                continue
            found.append(exit_)
            with contextlib.suppress(OSError):
                path.unlink()
        self.started_at = self.clock.now()
        stale = self._read(self.marker) if self.marker.exists() else None
        if stale is not None:
            found.append(stale)
        self.beat()
        return sorted(found, key=lambda e: e.last_seen)

    def _read(self, path: Path) -> UncleanExit | None:
        """The unclean exit a marker records, or None (its window still runs, or runs elsewhere)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            process = ProcessIdentity(str(data["host"]), int(data["pid"]), data["processStarted"], data["bootId"])
            started = datetime.fromisoformat(str(data["startedAt"]).replace("Z", "+00:00"))
            seen = datetime.fromisoformat(str(data["lastSeen"]).replace("Z", "+00:00"))
        except (OSError, ValueError, KeyError, TypeError):
            with contextlib.suppress(OSError):
                path.unlink()  # unreadable: nothing can be said about it
            return None
        if process.host != this_host() or liveness(process) is not Liveness.GONE:
            return None
        return UncleanExit(process.host, process.pid, started, seen, self.crash_log)

    def beat(self) -> None:
        """Say this window is still alive (rewrites the marker; a failure is retried next time)."""
        if self.started_at is None:
            raise RuntimeError("begin() first")
        data = {
            "host": self.process.host,
            "pid": self.process.pid,
            "processStarted": self.process.started,
            "bootId": self.process.boot_id,
            "startedAt": fmt_utc(self.started_at),
            "lastSeen": fmt_utc(self.clock.now()),
        }
        part = self.marker.with_suffix(".part")
        with contextlib.suppress(OSError):
            part.write_text(json.dumps(data), encoding="utf-8")
            os.replace(part, self.marker)

    def record_crashes(self) -> Path:
        """Write fatal errors' stacks (every thread) to the crash log for the rest of the session."""
        if self.started_at is None:
            raise RuntimeError("begin() first")
        self._trim_log()
        log = self.crash_log.open("a", encoding="utf-8")
        log.write("\n" + SESSION_HEADER.format(pid=self.process.pid, started=fmt_utc(self.started_at)) + "\n")
        log.flush()
        faulthandler.enable(file=log, all_threads=True)
        self._log = log
        return self.crash_log

    def _trim_log(self) -> None:
        with contextlib.suppress(OSError):
            if self.crash_log.stat().st_size > MAX_LOG_BYTES:
                tail = self.crash_log.read_bytes()[-MAX_LOG_BYTES // 2 :]
                self.crash_log.write_bytes(tail)

    def end(self) -> None:
        """A clean quit: stop recording crashes and remove the marker."""
        if self._log is not None:
            faulthandler.disable()
            self._log.close()
            self._log = None
        with contextlib.suppress(OSError):
            self.marker.unlink()
