"""A crontab job's command as a task's ``argv``, keeping what cron's shell did with it.

Cron hands the command to ``$SHELL -c`` (``/bin/sh`` unless the crontab sets ``SHELL``). An
unescaped ``%`` ends the command: the text after it, each further ``%`` read as a line break,
is the command's standard input; ``\\%`` is a literal ``%``. A command with nothing a shell
would act on becomes a plain ``argv``, split at spaces and tabs as sh splits it (a no-break
space is part of a word); one with pipes, redirections, ``;``, ``&&``, ``$``, quotes, globs and
the like keeps its shell.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.importing.input_text import split_words

DEFAULT_SHELL = "/bin/sh"
#: What a shell would act on, and what each is called in the import's words.
_SHELL_SIGNS = (
    ("|", "a pipe (|)"),
    (">", "a redirection (>)"),
    ("<", "a redirection (<)"),
    (";", "a command list (;)"),
    ("&", "& or &&"),
    ("$", "a variable or substitution ($)"),
    ("`", "a command substitution (`)"),
    ("'", "quotes"),
    ('"', "quotes"),
    ("\\", "a backslash escape"),
    ("*", "a glob (*)"),
    ("?", "a glob (?)"),
    ("[", "a glob ([...])"),
    ("~", "a tilde (~)"),
    ("(", "parentheses"),
    (")", "parentheses"),
    ("{", "braces"),
    ("}", "braces"),
    ("#", "a # (a shell comment)"),
    ("!", "a !"),
)
#: Feeds the text after cron's ``%`` to the command as its standard input, as cron does.
_WITH_INPUT = 'printf "%s" "$1" | "$2" -c "$3"'


@dataclass(frozen=True)
class CronCommand:
    """What the task runs, and why it runs through a shell (empty: it does not)."""

    argv: list[str]
    why_shell: list[str]
    stdin: str | None


def split_percent(command: str) -> tuple[str, str | None]:
    """The command and its standard input, as cron splits them at the first unescaped ``%``."""
    head: list[str] = []
    i = 0
    while i < len(command):
        ch = command[i]
        if ch == "\\" and command[i + 1 : i + 2] == "%":
            head.append("%")
            i += 2
            continue
        if ch == "%":
            return "".join(head), _input(command[i + 1 :])
        head.append(ch)
        i += 1
    return "".join(head), None


def _input(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and text[i + 1 : i + 2] == "%":
            out.append("%")
            i += 2
            continue
        out.append("\n" if text[i] == "%" else text[i])
        i += 1
    return "".join(out)


def shell_signs(command: str) -> list[str]:
    """What in ``command`` needs a shell, each named once, in the order first found."""
    found: list[str] = []
    for sign, words in _SHELL_SIGNS:
        if sign in command and words not in found:
            found.append(words)
    split = split_words(command)
    first = split[0] if split else ""
    if "=" in first:
        found.append("a variable assignment before the command")
    return found


def with_input(argv: list[str]) -> tuple[str, str, str] | None:
    """``(shell, command, standard input)`` of an argv :func:`task_command` made for a command with
    a ``%``; None for any other argv."""
    if len(argv) == 7 and argv[:4] == [DEFAULT_SHELL, "-c", _WITH_INPUT, "cron-input"]:
        return argv[5], argv[6], argv[4]
    return None


def task_command(command: str, shell: str = DEFAULT_SHELL) -> CronCommand:
    """The argv that runs ``command`` as cron would, through ``shell`` where that matters."""
    body, stdin = split_percent(command)
    why = shell_signs(body)
    if stdin is not None:
        why = ["% (the text after it is the command's standard input)", *why]
        argv = [DEFAULT_SHELL, "-c", _WITH_INPUT, "cron-input", stdin, shell, body]
        return CronCommand(argv, why, stdin)
    argv = split_words(body)
    if why or not argv:
        return CronCommand([shell, "-c", body], why, None)
    return CronCommand(argv, [], None)
