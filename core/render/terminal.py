"""Text that cannot drive a terminal.

A spec's title, an unknown key, a file name or a task's output may hold
control characters: an escape sequence can retitle the window or clear the
screen, a carriage return can hide what came before it, and a bidi override
can make ``gnp.exe`` read as ``exe.png``. :func:`terminal_safe` writes each of
them as a visible escape; every text ``schedctl`` prints that can hold one
passes through it (a preview's ids, instants and numbers cannot, and skip it).
"""

from __future__ import annotations

import re

#: Bidi controls: embeddings and overrides, isolates, and the marks.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

#: C0 controls except tab and newline (a carriage return only when no newline follows), DEL, C1, bidi.
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f" + BIDI_CONTROLS + "]|\r(?!\n)")


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    # \x1b for C0 (what people know from shells); \u.... otherwise, valid inside a JSON string too.
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every character that could drive a terminal written as ``\\x1b`` or ``\\u202e``.

    Tabs, newlines and CRLF pairs stay. JSON stays valid: its encoder already
    escapes C0, and the rest are written as JSON escapes of the same character.
    """
    return _UNSAFE.sub(_escape, text)
