"""What every part of the window shares: the clock, the workspace folder, the
ledger's address, the settings store and how to read this machine's zone."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings

from core.clock import Clock, SystemClock

if TYPE_CHECKING:
    from core.ledger.db import Ledger
    from core.ledger.rights import LedgerRights

ORGANIZATION = "Tidemark"
APPLICATION = "Tidemark"


def default_workspace() -> Path:
    from platformdirs import user_documents_dir

    return Path(user_documents_dir()) / "Tidemark"


def machine_zone() -> str:
    """The zone this machine is set to (its name only; the rules always come from tzdata)."""
    from core.time.zone_info import system_zone_name

    return system_zone_name()


@dataclass
class AppContext:
    """Built once by ``scheduler_gui.app`` and handed to every view.

    ``ledger_url`` None means the default SQLite file in the user's data
    directory. Tests pass a :class:`~core.clock.FixedClock`, a temporary
    workspace, a settings object backed by a temporary file and the machine's
    zone (``machine_zone``), so that nothing is read from the real system.
    """

    clock: Clock = field(default_factory=SystemClock)
    workspace: Path = field(default_factory=default_workspace)
    ledger_url: str | None = None
    settings: QSettings = field(default_factory=lambda: QSettings(ORGANIZATION, APPLICATION))
    #: What the ledger lets this window do (read when it opens; None: not known yet, nothing refused).
    rights: LedgerRights | None = None
    #: This machine's zone, asked anew each time (a laptop travels); only ever a proposal.
    machine_zone: Callable[[], str] = machine_zone
    _ledger: Ledger | None = field(default=None, repr=False)
    #: The ledger is opened by whichever thread asks first (the GUI or a background
    #: task): one opens it, the others wait for that one.
    _opening: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def ledger(self) -> Ledger:
        """The ledger, opened (and migrated) on first use; raises LedgerError with a message."""
        ledger = self._ledger
        if ledger is None:
            from core.ledger import open_ledger

            with self._opening:
                ledger = self._ledger
                if ledger is None:
                    ledger = self._ledger = open_ledger(self.ledger_url, self.clock)
        return ledger

    @property
    def ledger_open(self) -> bool:
        return self._ledger is not None

    def close(self) -> None:
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None
