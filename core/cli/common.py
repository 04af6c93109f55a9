"""What every ``schedctl`` command shares: exit statuses, its two errors, and reading a spec.

A command reports a user's mistake by raising :class:`UsageError` (one line,
prefixed by :func:`~core.cli.app.main` with the command) or :class:`Invalid`
(lines already worded, each naming its file); both end in exit status 2.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.errors import UserError
    from core.spec.model import ScheduleSpec

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID = 2
DEFAULT_COUNT = 10
#: The environment variable naming the ledger when --db is not given.
DB_ENV = "SCHEDULER_DB_URL"


class UsageError(Exception):
    """A mistake on the command line: reported in one line, exit status 2."""


class Invalid(Exception):
    """Problems already worded for stderr, one per line."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def problem_lines(path: str, exc: UserError) -> list[str]:
    """One line per problem, each starting with the file it concerns."""
    from core.errors import SpecError, SpecFileError

    if isinstance(exc, SpecError):
        if exc.source is None:
            exc.source = path
        return exc.lines()
    if isinstance(exc, SpecFileError):
        return [str(exc)]
    return [f"{path}: {line}" for line in str(exc).splitlines() or [type(exc).__name__]]


def warn_credentials(path: str, spec: ScheduleSpec) -> None:
    """Warn (without refusing) about each clear-text variable whose name looks like a credential."""
    from core.cli.output import err
    from core.team.secrets import credential_warnings

    if spec.task is not None:
        for line in credential_warnings(spec.task.env):
            err(f"{path}: warning: {line}")


def read_spec(path: str) -> ScheduleSpec:
    """Read and validate a spec; ``-`` reads standard input."""
    from core.errors import UserError
    from core.spec.files import MAX_SPEC_BYTES, load_spec, load_text, read_bounded, spec_text
    from core.spec.validation import parse_spec

    try:
        if path == "-":
            # Read no further than a spec can be: an endless pipe is refused as too big, not read forever.
            stream = getattr(sys.stdin, "buffer", None)
            if stream is not None:
                data = read_bounded(stream)
            else:  # a text stream with no bytes beneath it
                data = sys.stdin.read(MAX_SPEC_BYTES + 1).encode("utf-8", "surrogatepass")
            return parse_spec(load_text(spec_text(data, "<stdin>"), "<stdin>"), source="<stdin>")
        return load_spec(path)
    except UserError as exc:
        raise Invalid(problem_lines(path, exc)) from None
