"""Preview rows as CSV: one header row of the JSON keys of a row, then one line per row."""

from __future__ import annotations

import csv
import io
import itertools
from typing import TYPE_CHECKING, Any, TextIO

from core.occurrence import ROW_KEYS, Occurrence
from core.preview import Preview
from core.render.terminal import terminal_safe

if TYPE_CHECKING:
    from core.render.source import Source

#: The keys of :meth:`Occurrence.to_json`, in order.
COLUMNS = ROW_KEYS
_REASON, _PERIOD = COLUMNS.index("reason"), COLUMNS.index("businessPeriod")
#: Rows written together.
_BLOCK = 1000


def write_csv(source: Source, file: TextIO, *, safe: bool = False) -> None:
    """CSV, row by row; JSON null becomes an empty field. The header is written even without rows.

    ``safe``: the free texts (reason, business period) cannot drive a terminal; ids,
    instants and numbers never hold a control character and are written as they are.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    rows = iter(source.rows)
    # A block of rows at a time into a buffer, then one write: not one write per row.
    while block := list(itertools.islice(rows, _BLOCK)):
        writer.writerows(_values(row, safe) for row in block)
        file.write(buf.getvalue())
        buf.seek(0)
        buf.truncate()
    file.write(buf.getvalue())


def _values(row: Occurrence, safe: bool) -> tuple[Any, ...]:
    values = row.json_values()
    if safe and (values[_REASON] is not None or values[_PERIOD] is not None):
        return tuple(terminal_safe(v) if i in (_REASON, _PERIOD) and v else v for i, v in enumerate(values))
    return values


def render_csv(preview: Preview) -> str:
    """:func:`write_csv` as a string."""
    out = io.StringIO()
    write_csv(preview, out)
    return out.getvalue()
