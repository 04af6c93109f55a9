"""``schedctl``: Tidemark's command line (docs/contract.md §5).

Exit status: 0 success, 2 invalid input (one line on stderr per problem, naming
the key or option), 1 anything else (an internal error, reported with its
traceback on stderr); ``shadow`` exits 3 when the installed code or tz data
compute the ledger's future otherwise.

Only the standard library is imported at module level, in this package and in
every module of it; each command imports the core (pydantic, dateutil, PyYAML,
icalendar, SQLAlchemy) when it runs, so that ``schedctl --help`` answers at once.

The modules: :mod:`~core.cli.common` (exit statuses, errors, reading a spec),
:mod:`~core.cli.arguments` (argument types and times), :mod:`~core.cli.output`
(stdout, colour, encoding), :mod:`~core.cli.ledger_access` (opening the ledger
for one command), the commands in :mod:`~core.cli.spec_commands`,
:mod:`~core.cli.ledger_commands`, :mod:`~core.cli.engine_commands` and
:mod:`~core.cli.role_commands` (``db grant``), the
table of every command and the parser built from it in :mod:`~core.cli.parser`,
and :mod:`~core.cli.app` (``main``).

May import every core package (docs/architecture.md); nothing imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.cli.app import main
from core.cli.arguments import parse_time
from core.cli.common import DB_ENV, DEFAULT_COUNT, EXIT_INTERNAL, EXIT_INVALID, EXIT_OK, UsageError
from core.cli.output import use_colour
from core.cli.parser import build_parser

if TYPE_CHECKING:
    from core.cli.engine_commands import pass_summary

__all__ = [
    "DB_ENV",
    "DEFAULT_COUNT",
    "EXIT_INTERNAL",
    "EXIT_INVALID",
    "EXIT_OK",
    "UsageError",
    "build_parser",
    "main",
    "parse_time",
    "pass_summary",
    "use_colour",
]


def __getattr__(name: str) -> Any:
    """``pass_summary`` from the engine's commands, imported when asked for (a command that
    runs no engine never loads them)."""
    if name == "pass_summary":
        from core.cli.engine_commands import pass_summary

        return pass_summary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
