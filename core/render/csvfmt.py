"""Preview rows as CSV: one header row of the JSON keys of a row, then one line per row.

The bytes are :mod:`csv`'s writer's (the excel dialect, minimal quoting, ``\n`` line ends),
but a row is one template filled with its values: ids, times, offsets, the status and numbers
never hold a comma, a quote or a line break, so only the free texts (the reason and the
business period) are looked at, and quoted as the writer quotes them. The writer looked at
every character of every field: it took more than the rest of the row's writing.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TextIO

from core.recurrence.occurrence import ROW_KEYS, Occurrence
from core.recurrence.preview import Preview
from core.render.terminal import terminal_safe

if TYPE_CHECKING:
    from core.render.source import Source

#: The keys of :meth:`Occurrence.to_json`, in order.
COLUMNS = ROW_KEYS
#: Rows written together.
_BLOCK = 1000
#: What makes the csv writer quote a field with the line end ``\n``: the delimiter, the quote, a line feed.
_QUOTED = re.compile('[,"\n]')


def write_csv(source: Source, file: TextIO, *, safe: bool = False) -> None:
    """CSV, row by row; JSON null becomes an empty field. The header is written even without rows.

    ``safe``: the free texts (reason, business period) cannot drive a terminal; ids,
    instants and numbers never hold a control character and are written as they are.
    """
    file.write(",".join(COLUMNS) + "\n")
    free = _free_text(safe)
    lines: list[str] = []
    # A block of rows at a time, then one write: not one write per row.
    for line in _lines(source.rows, free):
        lines.append(line)
        if len(lines) == _BLOCK:
            file.write("".join(lines))
            lines.clear()
    file.write("".join(lines))


def _free_text(safe: bool) -> Callable[[str], str]:
    """A reason or business period as its field: made terminal-safe with ``safe``, quoted (a
    quote doubled) when it holds a comma, a quote or a line feed."""

    def field(text: str) -> str:
        if safe:
            text = terminal_safe(text)
        return '"' + text.replace('"', '""') + '"' if _QUOTED.search(text) else text

    return field


def _lines(rows: Iterable[Occurrence], free: Callable[[str], str]) -> Iterator[str]:
    for row in rows:
        occ, slot, nominal, fold, status, resolved, local, offset, position, reason, period, dispatch = (
            row.json_values()
        )
        yield (
            f"{occ},{slot or ''},{nominal},{fold},{status},{resolved or ''},{local or ''},{offset or ''},"
            f"{position},{'' if not reason else free(reason)},{'' if not period else free(period)},"
            f"{dispatch or ''}\n"
        )


def render_csv(preview: Preview) -> str:
    """:func:`write_csv` as a string."""
    out = io.StringIO()
    write_csv(preview, out)
    return out.getvalue()
