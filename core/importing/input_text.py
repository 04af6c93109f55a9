"""The text of a file brought in (a crontab, a unit file): refused in one line, naming the line,
when it is too long, binary, or not UTF-8; then cut into lines and words where the program that
reads the file cuts them, never at the other breaks and spaces Unicode knows.

cron ends a line at ``\\n`` only (``str.splitlines`` would also end one at U+2028, U+2029, U+0085,
``\\v``, ``\\f`` and more: a comment would become a job). systemd ends a line at ``\\n``, ``\\r``
or a pair of them (``read_line``). cron's fields and sh's unquoted words are separated by space
and tab only; systemd's words by space, tab, ``\\n`` and ``\\r`` (its ``WHITESPACE``). A no-break
space is part of a word to all of them.
"""

from __future__ import annotations

import re

#: What separates cron's fields and sh's words (its default IFS, less the newline a line cannot hold).
BLANKS = " \t"
#: systemd's ``WHITESPACE``: what it strips around values and splits words at.
UNIT_BLANKS = " \t\n\r"
_UNIT_LINE_END = re.compile(r"\r\n|\n\r|\r|\n")


def input_text(data: bytes, limit: int, what: str) -> str:
    """``data`` as text; a ``ValueError`` saying why it is not ``what`` (``"a crontab"``)."""
    if len(data) > limit:
        raise ValueError(f"more than {limit:,} bytes; {what} is at most {limit:,}")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ValueError(f"line {line_of(data, nul)}: a NUL byte; this is binary data, not {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"line {line_of(data, exc.start)}: not UTF-8 text") from None


def line_of(data: bytes, index: int) -> int:
    """The line (from 1) that byte ``index`` is on."""
    return data.count(b"\n", 0, index) + 1


def crontab_lines(text: str) -> list[str]:
    """The lines of a crontab as cron reads them: ended by ``\\n`` only. A ``\\r`` just before
    the ``\\n`` (a file written with CRLF line ends) is dropped; any other ``\\r`` stays in its
    line, for the reader to refuse."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def unit_lines(text: str) -> list[str]:
    """The lines of a unit file as systemd reads them: ended by ``\\n``, ``\\r``, ``\\r\\n`` or ``\\n\\r``."""
    return _UNIT_LINE_END.split(text)


def split_words(text: str, blanks: str = BLANKS) -> list[str]:
    """``text`` split at runs of ``blanks`` (space and tab: cron's fields, sh's unquoted words)."""
    return [word for word in re.split(f"[{re.escape(blanks)}]+", text) if word]
