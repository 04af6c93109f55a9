"""The text of a file brought in (a crontab, a unit file): refused in one line, naming the line,
when it is too long, binary, or not UTF-8."""

from __future__ import annotations


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
