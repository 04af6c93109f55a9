"""A service's ``ExecStart=`` and ``Environment=`` as a task's ``argv`` and ``env``
(systemd.service(5), systemd.exec(5)), or the reason they cannot be one.

``ExecStart=`` may start with prefixes: ``-`` (a failure is not one for systemd), ``@`` (the
second word becomes the process's name: refused, a task cannot do that), ``:`` (no variable
expansion), ``+``, ``!`` and ``!!`` (privileges). Its words are split with quotes and
backslashes as a shell splits simple words; ``$NAME``/``${NAME}`` take the value from the
service's ``Environment=`` (``$NAME`` alone as a word splits it at systemd's whitespace: space, tab,
``\\n``, ``\\r``, never a no-break space; ``$$`` is ``$``). ``%%`` is ``%``;
any other specifier (``%h``, ``%i``, ...) is systemd's to fill in, and refused with its name.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from core.errors import UserError
from core.importing.input_text import UNIT_BLANKS, split_words

_PREFIX_NOTES = {
    "-": "ExecStart=- : systemd counts a failure of the command as success; Tidemark records it as failed",
    "+": "ExecStart=+ : systemd runs it with full privileges; the engine runs it as its own user",
    "!": "ExecStart=! : systemd runs it with elevated privileges; the engine runs it as its own user",
}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_SPECIFIER = re.compile(r"%(.)")


class ExecError(UserError):
    """An ``ExecStart=``/``Environment=`` that no task can hold; the message says why."""


@dataclass
class ExecCommand:
    """What the task runs, and what the report must say about it."""

    argv: list[str]
    notes: list[str] = field(default_factory=list)


def specifiers(text: str) -> str:
    """``text`` with ``%%`` read as ``%``; any other specifier is an :class:`ExecError`."""
    for found in _SPECIFIER.finditer(text.replace("%%", "")):
        raise ExecError(
            f"uses the specifier %{found.group(1)}, which systemd fills in from the unit's context; write its value in"
        )
    return text.replace("%%", "%")


def described(text: str) -> str:
    """A ``Description=`` as systemd shows it, as far as it can be known without the unit's
    context: ``%%`` is ``%``; any other specifier stays as written (a title, not a command)."""
    return text.replace("%%", "%")


def environment(value: str) -> dict[str, str]:
    """One ``Environment=`` line's assignments (quoted as systemd quotes them)."""
    try:
        split = shlex.split(value)
    except ValueError as exc:
        raise ExecError(f"Environment={value}: {exc}") from None
    found: dict[str, str] = {}
    for word in split:
        name, equals, text = word.partition("=")
        if not equals or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            raise ExecError(f"Environment=: {word!r} is not NAME=value")
        found[name] = specifiers(text)
    return found


def _expand(word: str, env: dict[str, str]) -> list[str]:
    if "$$" in word:  # $$ is a plain $
        return [part.replace("\0", "$") for part in _expand(word.replace("$$", "\0"), env)]
    alone = _VARIABLE.fullmatch(word)
    if alone is not None and alone.group(2) is not None:  # $NAME alone: split at spaces
        name = alone.group(2)
        if name not in env:
            raise ExecError(f"uses ${name}, which no Environment= of the service sets")
        return split_words(env[name], UNIT_BLANKS)

    def one(found: re.Match[str]) -> str:
        name = found.group(1) or found.group(2)
        if name not in env:
            raise ExecError(f"uses ${name}, which no Environment= of the service sets")
        return env[name]

    return [_VARIABLE.sub(one, word)]


def exec_command(value: str, env: dict[str, str]) -> ExecCommand:
    """The argv of one ``ExecStart=`` line; an :class:`ExecError` says why there is none."""
    notes: list[str] = []
    text = value.strip(UNIT_BLANKS)
    expand = True
    while text[:1] in ("-", "@", ":", "+", "!"):
        prefix, text = text[0], text[1:]
        if prefix == "@":
            raise ExecError("ExecStart=@ gives the process another name than its program; a task cannot")
        if prefix == ":":
            expand = False
        elif _PREFIX_NOTES[prefix] not in notes:
            notes.append(_PREFIX_NOTES[prefix])
    text = specifiers(text)
    try:
        split = shlex.split(text)
    except ValueError as exc:
        raise ExecError(f"ExecStart= cannot be split into words: {exc}") from None
    if not split:
        raise ExecError("ExecStart= is empty")
    argv = [part for word in split for part in (_expand(word, env) if expand else [word])]
    if not argv or not argv[0].strip(UNIT_BLANKS):
        raise ExecError("ExecStart= names no program once its variables are filled in")
    return ExecCommand(argv, notes)
