"""Preview rows as CSV: one header row of the JSON keys of a row, then one line per row."""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING, TextIO

from core.preview import Preview

if TYPE_CHECKING:
    from core.render.source import Source

#: The keys of :meth:`Occurrence.to_json`, in order (a test keeps the two in step).
COLUMNS = (
    "occurrenceId",
    "logicalSlotId",
    "nominalLocal",
    "foldOrdinal",
    "status",
    "resolvedUtc",
    "resolvedLocal",
    "utcOffset",
    "positionUtc",
    "reason",
    "businessPeriod",
    "dispatchUtc",
)


def write_csv(source: Source, file: TextIO) -> None:
    """CSV, row by row; JSON null becomes an empty field. The header is written even without rows."""
    writer = csv.DictWriter(file, fieldnames=COLUMNS, lineterminator="\n", extrasaction="raise")
    writer.writeheader()
    for row in source.rows:
        data = row.to_json()
        writer.writerow({key: "" if value is None else value for key, value in data.items()})


def render_csv(preview: Preview) -> str:
    """:func:`write_csv` as a string."""
    out = io.StringIO()
    write_csv(preview, out)
    return out.getvalue()
