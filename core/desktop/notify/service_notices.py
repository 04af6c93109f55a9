"""The headless engine's notifications: what newly needs a person on its ledger,
told through the desktop's notification service (:mod:`core.desktop.notify.desktop_bus`).

``schedctl engine run`` (what the systemd user service runs) makes one
:class:`ServiceNotices` unless ``--no-notify``. After each pass it
:meth:`~ServiceNotices.tick`\\ s: at most every :data:`EVERY` it reads the
attention queue, the drifted schedules and the schedules waiting for an engine
(:func:`core.ledger.monitor_reads.person_needs`) and hands them to a :class:`~core.desktop.notify.needs.NoticeBook`,
which gives one notice per batch. While a window on the same ledger runs (it
owns :func:`~core.desktop.notify.desktop_bus.window_name` on the session bus), what is
new counts as told and the window's tray tells it instead.

Without a session bus the engine says so in one line and notifies nothing; a
notification service that does not answer is said once too. Neither stops the
engine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from core.desktop.notify.needs import FirstLook, Notice, NoticeBook

if TYPE_CHECKING:
    from core.clock import Clock
    from core.desktop.notify.desktop_bus import DesktopBus
    from core.ledger.db import Ledger

#: The least time between two looks at the ledger.
EVERY = timedelta(seconds=5)

#: Starts a program (argv) without waiting for it.
Spawn = Callable[[Sequence[str], Mapping[str, str]], object]


def gui_argv() -> tuple[str, ...]:
    """How to start this installation's window: ``scheduler-gui`` beside this interpreter,
    else on the PATH, else this interpreter with ``-m scheduler_gui.app``."""
    beside = Path(sys.executable).parent / "scheduler-gui"
    if beside.is_file() and os.access(beside, os.X_OK):
        return (str(beside),)
    found = shutil.which("scheduler-gui")
    return (found,) if found else (sys.executable, "-m", "scheduler_gui.app")


def open_attention(db: str) -> tuple[list[str], dict[str, str]]:
    """The window on Needs attention, on the ledger ``db``: its command, and the variables it
    gets besides this process's. The ledger goes in ``SCHEDULER_DB_URL``, never on the command
    line, where any user's ``ps`` would show a PostgreSQL password."""
    return [*gui_argv(), "--view", "attention"], {"SCHEDULER_DB_URL": db}


def start_process(argv: Sequence[str], env: Mapping[str, str]) -> object:
    """The real :data:`Spawn`: a detached process of its own session."""
    return subprocess.Popen(
        list(argv),
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _say(line: str) -> None:
    print(f"schedctl engine run: {line}", file=sys.stderr, flush=True)


class ServiceNotices:
    """Looks at the ledger now and then and tells the desktop what newly needs a person."""

    def __init__(
        self,
        ledger: Ledger,
        clock: Clock,
        bus: DesktopBus,
        window: str,
        *,
        every: timedelta = EVERY,
        stale_after: timedelta | None = None,
        say: Callable[[str], None] = _say,
    ) -> None:
        from core.engine.presence import STALE_AFTER

        self.ledger = ledger
        self.clock = clock
        self.bus = bus
        #: The bus name a window on this ledger owns.
        self.window = window
        self.every = every
        self.stale_after = stale_after or STALE_AFTER
        self.book = NoticeBook(first_look=FirstLook.TELL)
        self.sent: list[Notice] = []
        self._say = say
        self._next: datetime | None = None
        self._unanswered = False

    def tick(self) -> Notice | None:
        """Look when :attr:`every` has passed since the last look; the notice sent, if any."""
        from core.errors import LedgerError
        from core.ledger.monitor_reads import person_needs

        now = self.clock.now()
        if self._next is not None and now < self._next:
            return None
        self._next = now + self.every
        try:
            needs = person_needs(self.ledger, now, self.stale_after)
        except LedgerError:
            return None  # the engine's own pass says what is wrong with the ledger
        notice = self.book.look(needs, now, quiet=self._window_running())
        if notice is not None:
            self._send(notice)
        return notice

    # A notification never stops the engine: whatever the bus does (gone with the session,
    # a connection closed under it, an answer not understood), the engine goes on.

    def _window_running(self) -> bool:
        try:
            return self.bus.window_running(self.window)
        except Exception:
            return False

    def _send(self, notice: Notice) -> None:
        try:
            self.bus.notify(notice.title, notice.text)
        except Exception as exc:
            if not self._unanswered:
                self._unanswered = True
                self._say(f"no desktop notification: {exc}")
            return
        self._unanswered = False
        self.sent.append(notice)

    def close(self) -> None:
        try:
            self.bus.close()
        except Exception:  # the bus went away first: nothing is left to close
            return


def start_notices(
    ledger: Ledger,
    clock: Clock,
    db: str,
    *,
    address: str = "SESSION",
    spawn: Spawn = start_process,
    say: Callable[[str], None] = _say,
) -> ServiceNotices | None:
    """The engine's notices on the session bus at ``address``, "Open" starting the window on the
    ledger ``db``; None, said in one line, when there is no session bus."""
    from core.desktop.notify.desktop_bus import BusUnavailable, DesktopBus, window_name

    try:
        bus = DesktopBus.connect(lambda: spawn(*open_attention(db)), address)
    except BusUnavailable as exc:
        say(f"no desktop notifications: {exc}")
        return None
    return ServiceNotices(ledger, clock, bus, window_name(ledger.where), say=say)
