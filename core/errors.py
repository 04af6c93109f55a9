"""One hierarchy of errors for the headless core.

Two families matter to callers:

* :class:`UserError` and its subclasses describe something a person can fix
  (a spec with a typo, a rule that never fires, a file that is not there).
  Front ends print their message and exit with status 2; no traceback.
* Anything else escaping the core is a bug and is reported as one.
"""

from __future__ import annotations

from dataclasses import dataclass


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its class name when it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class TidemarkError(Exception):
    """Base of every error the core raises on purpose."""


class UserError(TidemarkError):
    """A mistake in input that a person can correct."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a spec: the key it concerns and what is wrong."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.key else self.message


class SpecError(UserError):
    """A spec was refused. Carries every problem found, each naming its key."""

    def __init__(self, problems: list[Problem], source: str | None = None) -> None:
        self.problems = list(problems)
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        prefix = f"{self.source}: " if self.source else ""
        return "\n".join(prefix + str(p) for p in self.problems)

    def lines(self) -> list[str]:
        prefix = f"{self.source}: " if self.source else ""
        return [prefix + str(p) for p in self.problems]


class SpecFileError(UserError):
    """A spec file could not be read at all (missing, a directory, binary, empty)."""


class ComputeLimitError(UserError):
    """An expansion hit its iteration bound instead of running on forever."""


class ZoneError(UserError):
    """A time zone name that is not usable (unknown, an abbreviation, an offset)."""


class LedgerError(UserError):
    """The ledger cannot be used as asked: it is locked, read-only, damaged, from a
    newer Tidemark, or the request contradicts what it holds. Names the ledger or
    the schedule, and says what to do."""


class PublishError(LedgerError):
    """A revision was refused at publish time (not newer, no task, a program that is not there)."""


class UnknownScheduleError(LedgerError):
    """No schedule with that id has been published to this ledger."""


#: How a full ledger is said: true of a disk with no room left and of a database at its size limit.
LEDGER_FULL = "is full: no room is left on its disk, or the database reached its size limit"


class LedgerUnavailable(LedgerError):
    """The database did not do what was asked: locked by another program, unreachable,
    or refusing. ``detail`` is the database's own first line; ``busy`` says it was a
    lock, which clears by itself when the other program has finished. ``refused`` is
    set when the database refused a write for want of a right (SQLSTATE 42501): the
    line naming the role, what it lacks and the grant to ask for, which is then the
    whole message. ``full``: the database or its disk is full (a real disk, or a size
    limit), ``detail`` then the database's words for that."""

    def __init__(self, detail: str, *, busy: bool, refused: str | None = None, full: bool = False) -> None:
        self.detail = detail
        self.busy = busy
        self.refused = refused
        self.full = full
        said = "is locked by another program" if busy else LEDGER_FULL if full else "cannot be used"
        super().__init__(refused or f"the ledger {said} ({detail})")
