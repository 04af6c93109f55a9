"""Writing to stdout: whole lines, colour only where it is welcome, and symbols the terminal can show."""

from __future__ import annotations

import io
import os
import sys
from typing import TextIO, cast

from core.counts import counted


def out(text: str, *, coloured: bool = False) -> None:
    """``text`` on stdout, ending in exactly one newline of its own, with nothing in it that drives a terminal.

    ``coloured``: the text holds colour codes of its own renderer, which has made
    everything else in it terminal-safe already.
    """
    from core.render.terminal import terminal_safe

    safe = text if coloured else terminal_safe(text)
    sys.stdout.write(safe if safe.endswith("\n") else safe + "\n")


class _TerminalSafeStream(io.TextIOBase):
    """Text written piece by piece (rows as they are produced), each piece made terminal-safe."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self._target = target

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        from core.render.terminal import terminal_safe

        self._target.write(terminal_safe(text))
        return len(text)

    def flush(self) -> None:
        self._target.flush()


def terminal_safe_stream(target: TextIO) -> TextIO:
    """``target`` behind a filter that keeps anything that drives a terminal out of it."""
    return cast(TextIO, _TerminalSafeStream(target))


def err(text: object) -> None:
    """One message on stderr: no database password, nothing that drives a terminal."""
    from core.render.terminal import terminal_safe
    from core.team.redact import mask_urls

    print(terminal_safe(mask_urls(str(text))), file=sys.stderr)


def stdout_is_terminal() -> bool:
    """Whether stdout is a terminal (a closed or replaced stdout is not)."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def use_colour(environ: dict[str, str] | None = None, *, tty: bool | None = None) -> bool:
    """ANSI colour only on a terminal, and never when NO_COLOR is set (no-color.org) or TERM is dumb."""
    env = os.environ if environ is None else environ
    is_tty = stdout_is_terminal() if tty is None else tty
    return is_tty and not env.get("NO_COLOR") and env.get("TERM") != "dumb"


def can_encode(sample: str) -> bool:
    """Whether stdout's encoding can write every character of ``sample``."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        sample.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def unicode_ok() -> bool:
    """Whether the ledger's tables and arrows may use their non-ASCII symbols."""
    return can_encode("—·②…→")


def plural(n: int, word: str) -> str:
    """``1 occurrence``, ``2 occurrences``, with thousands separators."""
    return counted(n, word)
