"""A task as crontab text: its variables as ``NAME=value`` lines and its argv as the command.

Cron hands the command to ``$SHELL -c`` (``/bin/sh`` unless ``SHELL=`` is set) after reading
each unescaped ``%`` as the end of the command, so every ``%`` is written ``\\%``. A task that
already runs ``[$SHELL, -c, TEXT]`` is written as TEXT, and one the import made to feed a
command its standard input (``TEXT%INPUT``) as ``TEXT%INPUT``; any other argv is shell-quoted. A value
cron would read differently (spaces around it, quotes around it) is written in double quotes, of
which cron removes one pair. ``MAILTO`` and ``MAILFROM`` are the task's own variables, not where
cron mails every job's output: the command sets them (``export MAILTO='ops@example.com'; ...``).
A line break cannot be held by a crontab line: such a task is refused.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from core.exporting.refusal import ExportRefused, on_one_line
from core.importing.cron import MAIL_VARIABLES
from core.importing.cron_command import DEFAULT_SHELL, with_input
from core.spec.model import SecretRef, Task


@dataclass(frozen=True)
class CronTask:
    """The variable lines, the secrets left out (variable, secret), the command text, and the
    variables cron reads for itself that the command sets instead (:data:`MAIL_VARIABLES`)."""

    env_lines: tuple[str, ...]
    secrets: tuple[tuple[str, str], ...]
    command: str
    in_command: tuple[str, ...] = ()


def _one_line(text: str, what: str) -> str:
    return on_one_line(text, what, "a crontab line")


def escape_percent(text: str) -> str:
    """``text`` as cron reads it back: each ``%`` written ``\\%``."""
    return text.replace("%", "\\%")


def env_value(value: str) -> str:
    """A variable's value as written after ``NAME=``, so that cron reads back exactly ``value``."""
    quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "'\""
    return f'"{value}"' if value != value.strip() or quoted else value


def command_text(argv: list[str], shell: str, cwd: str | None, own: Sequence[tuple[str, str]] = ()) -> str:
    """The command of the crontab line (``%`` escaped), from argv as the task runs it, after an
    ``export NAME=value;`` for each of ``own``. A task the import made for a command with a ``%``
    (its standard input after it) is written back so."""
    given = with_input(argv)
    stdin = None
    if given is not None and given[0] == shell and given[1].strip():
        text, stdin = _one_line(given[1], "the command").strip(), given[2]
    else:
        for index, word in enumerate(argv):
            _one_line(word, f"task.argv[{index}]")
        plain = len(argv) == 3 and argv[0] == shell and argv[1] == "-c" and argv[2].strip()
        text = argv[2].strip() if plain else shlex.join(argv)
    if cwd is not None:
        text = f"cd {shlex.quote(_one_line(cwd, 'task.cwd'))} && {text}"
    text = "".join(f"export {name}={shlex.quote(value)}; " for name, value in own) + text
    if stdin is None:
        return escape_percent(text)
    lines = [escape_percent(_one_line(line, "the command's standard input")) for line in stdin.split("\n")]
    return f"{escape_percent(text)}%{'%'.join(lines)}"


def cron_task(task: Task) -> CronTask:
    """What the crontab holds of ``task``; secrets are listed apart, never written."""
    lines: list[str] = []
    secrets: list[tuple[str, str]] = []
    own: list[tuple[str, str]] = []
    for name, value in task.env.items():
        if name == "CRON_TZ":
            raise ExportRefused("task.env.CRON_TZ: a crontab reads CRON_TZ as the zone of the jobs below it")
        if isinstance(value, SecretRef):
            secrets.append((name, value.secret))
            continue
        _one_line(value, f"task.env.{name}")
        if name in MAIL_VARIABLES:  # as a line, cron would mail every job below it there
            own.append((name, value))
            continue
        lines.append(f"{name}={env_value(value)}")
    shell = task.env.get("SHELL", DEFAULT_SHELL)
    shell = shell if isinstance(shell, str) else DEFAULT_SHELL
    command = command_text(task.argv, shell, task.cwd, own)
    return CronTask(tuple(lines), tuple(secrets), command, tuple(name for name, _ in own))
