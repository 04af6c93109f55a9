"""Preview rows as CSV: one header row of the JSON keys of a row, then one line per row."""

from __future__ import annotations

import csv
import io

from core.preview import Preview

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


def render_csv(preview: Preview) -> str:
    """CSV text; JSON null becomes an empty field. The header is written even without rows."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n", extrasaction="raise")
    writer.writeheader()
    for row in preview.rows:
        data = row.to_json()
        writer.writerow({key: "" if value is None else value for key, value in data.items()})
    return out.getvalue()
