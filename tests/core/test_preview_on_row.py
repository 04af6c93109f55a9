"""``build_preview_to_change`` hands each of the rows asked for to ``on_row`` as it is
computed, in order, and stops when ``on_row`` raises: the designer shows them as they come."""

from __future__ import annotations

import pytest
from helpers import make_spec, utc

from core.recurrence.occurrence import Occurrence
from core.recurrence.preview import build_preview_to_change

#: A week before New York's 2026 spring change.
MARCH = utc("2026-03-01T00:00:00Z")


@pytest.mark.parametrize(
    ("count", "limit", "rows"),
    [
        (5, 100, 10),  # extended past the change: only the 5 asked for are handed over as they come
        (5, 6, 5),  # the change out of reach: the extension is dropped, the 5 stay
        (40, 40, 40),  # the change among the rows asked for
    ],
)
def test_the_rows_asked_for_are_handed_over_in_order(count: int, limit: int, rows: int) -> None:
    seen: list[Occurrence] = []
    preview, _ = build_preview_to_change(make_spec(), MARCH, count, limit=limit, on_row=seen.append)
    assert len(preview.rows) == rows
    assert seen == preview.rows[:count]


def test_a_raising_on_row_stops_the_expansion_at_once() -> None:
    class Stop(Exception):
        pass

    seen: list[Occurrence] = []

    def stop_at_third(row: Occurrence) -> None:
        seen.append(row)
        if len(seen) == 3:
            raise Stop

    with pytest.raises(Stop):
        build_preview_to_change(make_spec(), MARCH, 400, limit=1000, on_row=stop_at_third)
    assert len(seen) == 3
