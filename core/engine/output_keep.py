"""A task's output kept on disk while it runs, so that a crash of its engine
does not take it along.

The runner holds each pipe's tail in memory and the ledger gets it with the
attempt's end. When the engine dies first (the window is killed, the process
crashes), the next engine settles the attempt as lost; it then reads what this
module kept, so the attempt row says what the task had printed ("starting
transfer") instead of nothing. The kept text is the tail as the runner has
it, secrets already masked; it is written at most every
:data:`KEEP_EVERY_SECONDS` (the first output at once) and removed when the
attempt ends normally. One file per attempt, in a folder only this OS user
may read, on the host the task ran on.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from pathlib import Path

#: The longest a task's output goes unwritten while it runs (the first output is written at once).
KEEP_EVERY_SECONDS = 0.2


def keep_folder() -> Path:
    """Where this OS user's running tasks' output is kept (``$TMPDIR/tidemark-output-<uid>``)."""
    temp = tempfile.gettempdir()
    folder = _FOLDERS.get(temp)
    if folder is None:
        folder = _FOLDERS[temp] = Path(temp) / f"tidemark-output-{os.getuid()}"
    return folder


#: :func:`keep_folder` by temporary folder: worked out once, not at every task's start.
_FOLDERS: dict[str, Path] = {}

#: The folders this process has made (or found) already: made once, not at every write.
_MADE: set[Path] = set()


def kept_path(attempt_id: str, folder: Path | None = None) -> Path:
    return (folder or keep_folder()) / f"{attempt_id}.json"


class OutputKeeper:
    """Writes one attempt's stdout and stderr tails to its file as they grow.

    Give it the file, or (:meth:`for_attempt`) the attempt, whose file is then worked
    out only when the task prints something: a task that prints nothing costs nothing here."""

    def __init__(self, path: Path | None = None, *, attempt_id: str | None = None) -> None:
        self._path = path
        self._attempt_id = attempt_id
        self._written_at: float | None = None

    @classmethod
    def for_attempt(cls, attempt_id: str) -> OutputKeeper:
        """The keeper of an attempt's output, in :func:`keep_folder`."""
        return cls(attempt_id=attempt_id)

    @property
    def path(self) -> Path:
        if self._path is None:
            assert self._attempt_id is not None, "a keeper needs a file or an attempt"
            self._path = kept_path(self._attempt_id)
        return self._path

    def keep(self, stdout: str, stderr: str, *, now: float | None = None) -> float | None:
        """Write the tails, unless they were written less than :data:`KEEP_EVERY_SECONDS` ago: then
        return when to call again (with the tails as they are by then), so the last output is kept too."""
        moment = time.monotonic() if now is None else now
        if self._written_at is not None and moment - self._written_at < KEEP_EVERY_SECONDS:
            return self._written_at + KEEP_EVERY_SECONDS
        self._written_at = moment
        text = json.dumps({"stdout": stdout, "stderr": stderr})
        with contextlib.suppress(OSError):  # keeping is a help: a full disk must not fail the task
            try:
                self._write(text)
            except FileNotFoundError:  # the folder went (a cleaner of the temporary folder): made again
                _MADE.discard(self.path.parent)
                self._write(text)
        return None

    def _write(self, text: str) -> None:
        folder = self.path.parent
        if folder not in _MADE:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            _MADE.add(folder)
        part = self.path.with_suffix(".part")
        part.write_text(text, encoding="utf-8")
        part.replace(self.path)

    def forget(self) -> None:
        """The attempt ended and its tails go to the ledger: the file is not needed. A task
        that printed nothing had none written: nothing to remove (no system call per task)."""
        if self._written_at is not None:
            _remove(self.path)


def forget_kept(attempt_id: str, folder: Path | None = None) -> None:
    """The lost attempt's output is in the ledger now: its file goes."""
    _remove(kept_path(attempt_id, folder))


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def read_kept(attempt_id: str, folder: Path | None = None) -> tuple[str, str] | None:
    """The stdout and stderr a lost attempt had printed, as last kept here, or None."""
    try:
        data = json.loads(kept_path(attempt_id, folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return str(data.get("stdout") or ""), str(data.get("stderr") or "")
