"""What every engine service shares, whatever starts it (systemd here, launchd on macOS): the
command it runs, the ledger written out in full, how a call to the service manager is run, and
what an install or uninstall did."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Ran:
    """What one command returned."""

    returncode: int
    stdout: str = ""
    stderr: str = ""


#: Runs one command (argv) and returns what it did; never raises for a non-zero exit.
Runner = Callable[[Sequence[str]], Ran]


def timed_runner(seconds: float) -> Runner:
    """A runner whose commands are given up after ``seconds`` (exit 124)."""

    def run(argv: Sequence[str]) -> Ran:
        try:
            done = subprocess.run(list(argv), capture_output=True, text=True, timeout=seconds, check=False)
        except FileNotFoundError as exc:
            return Ran(127, "", str(exc))
        except subprocess.TimeoutExpired:
            return Ran(124, "", f"{argv[0]} did not answer within {seconds:g} s")
        return Ran(done.returncode, done.stdout, done.stderr)

    return run


def system_runner(argv: Sequence[str]) -> Ran:
    """The real runner: ``subprocess.run`` with a timeout; a missing program is exit 127."""
    return _SIXTY(argv)


_SIXTY = timed_runner(60)


@dataclass(frozen=True)
class ServiceResult:
    """What an install or uninstall did, in words for a person."""

    ok: bool
    #: Lines to show (what was done, or the one line saying why not).
    lines: tuple[str, ...]
    unit_path: Path
    #: The commands that were run, in order.
    calls: tuple[tuple[str, ...], ...] = ()
    #: When systemd is not usable here: the command to run by hand instead.
    instead: str | None = None
    written: bool = False


def schedctl_argv() -> tuple[str, ...]:
    """How to start this installation's ``schedctl``: the script beside this
    interpreter when there is one, else this interpreter with ``-m core.cli``."""
    beside = Path(sys.executable).parent / "schedctl"
    if beside.is_file() and os.access(beside, os.X_OK):
        return (str(beside),)
    return (sys.executable, "-m", "core.cli")


def pinned_db(db: str | None) -> str:
    """The ledger the service should use, as an absolute path or URL.

    The service does not see the shell's ``SCHEDULER_DB_URL`` nor its current
    directory, so the ledger is written out: a relative file becomes absolute,
    and no ledger at all means the default file of this user.
    """
    if not db:
        from core.ledger.db import default_path

        return str(default_path())
    if "://" in db:
        if db.startswith("sqlite:///") and not db.startswith("sqlite:////"):
            path = db[len("sqlite:///") :]
            if path and path != ":memory:" and not Path(path).is_absolute():
                return "sqlite:///" + str(Path(path).resolve())
        return db
    return str(Path(db).expanduser().resolve())


class Starts(Protocol):
    """A service's setup: how it starts this installation's ``schedctl``."""

    @property
    def schedctl(self) -> tuple[str, ...]: ...


#: The variable a service gives its engine the ledger in (``engine run`` reads it when no ``--db``).
DB_VARIABLE = "SCHEDULER_DB_URL"


def engine_argv(setup: Starts, options: Sequence[str] = ()) -> list[str]:
    """The service's command: ``schedctl engine run``, then ``options`` (a team engine's
    ``--allow-second``, ``--label KEY=VALUE``, ``--trust USER``). The ledger is not on it: a
    command line is public (any user's ``ps`` shows it, a PostgreSQL password too), so the
    service gives it in its environment (:func:`engine_env`), kept in its 0600 file."""
    return [*setup.schedctl, "engine", "run", *options]


def engine_env(db: str) -> dict[str, str]:
    """The service's environment for its engine: the ledger, written out in full."""
    return {DB_VARIABLE: db}


def first_line(ran: Ran) -> str:
    text = (ran.stderr or ran.stdout).strip()
    return text.splitlines()[0] if text else f"exit status {ran.returncode}"


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` as ``path`` whole, replacing it in one step, mode 0600 from its first byte: a
    service's file holds the ledger's URL, and so maybe a PostgreSQL password, which no other user
    may read even for a moment (a file made 0644 and chmod-ed after is readable in between)."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mkstemp creates it 0600
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
