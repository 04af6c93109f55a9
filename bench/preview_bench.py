"""Preview throughput against a bare baseline measured in the same run.

Baseline: python-dateutil's rrule over naive local times, each attached to the
zone and converted to UTC (no gap/fold handling, no ids, no reasons).
Measured: Tidemark's full expansion (resolution, ids, reasons, ordering).

Run by hand: ``.venv/bin/python bench/preview_bench.py [--runs N] [--quick]``.
Prints seconds and the ratio measured / baseline; the target is a ratio
within 3x.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dateutil import rrule

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.recurrence.compile import compile_schedule
from core.recurrence.expand import expand, first_rows
from core.spec_validation import parse_spec
from core.zones import get_zone


def best_of(runs: int, fn: Callable[[], int]) -> tuple[float, int]:
    best = float("inf")
    n = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        n = fn()
        best = min(best, time.perf_counter() - t0)
    return best, n


def baseline(rule_text: str, start: datetime, zone_name: str, count: int | None, until: datetime | None) -> int:
    zone = get_zone(zone_name)
    rule = rrule.rrulestr("RRULE:" + rule_text, dtstart=start)
    n = 0
    for local in rule:
        if until is not None and local >= until:
            break
        local.replace(tzinfo=zone).astimezone(UTC)
        n += 1
        if count is not None and n >= count:
            break
    return n


def spec(rule_text: str, zone: str, start: str) -> dict[str, object]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": "bench",
        "revision": 1,
        "timeZone": zone,
        "rule": rule_text,
        "start": start,
        "gapPolicy": "SHIFT_FORWARD",
        "foldPolicy": "FIRST_ONLY",
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs of each, the fastest kept (default 3)")
    parser.add_argument("--quick", action="store_true", help="one run of 1,000 rows and of one day (CI)")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.runs
    rows = 1_000 if args.quick else 100_000
    cases = []

    daily = compile_schedule(
        parse_spec(spec("FREQ=DAILY;BYHOUR=9;BYMINUTE=0", "America/New_York", "2026-01-01T00:00:00"))
    )
    cases.append(
        (
            f"daily 09:00 America/New_York, {rows:,} rows",
            lambda: baseline("FREQ=DAILY;BYHOUR=9;BYMINUTE=0", datetime(2026, 1, 1), "America/New_York", rows, None),
            lambda: len(first_rows(daily, datetime(2026, 1, 1, tzinfo=UTC), rows)),
        )
    )
    minutely = compile_schedule(parse_spec(spec("FREQ=MINUTELY", "Europe/Berlin", "2026-01-01T00:00:00")))
    year_start, year_end = datetime(2026, 1, 1), datetime(2026, 1, 2) if args.quick else datetime(2027, 1, 1)
    utc_start, utc_end = (d.replace(tzinfo=UTC) - timedelta(hours=1) for d in (year_start, year_end))  # Berlin's
    what = "1 January 2026" if args.quick else "2026"
    cases.append(
        (
            f"every minute of {what} in Europe/Berlin ({(year_end - year_start) // timedelta(minutes=1):,} rows)",
            lambda: baseline("FREQ=MINUTELY", year_start, "Europe/Berlin", None, year_end),
            lambda: len(expand(minutely, utc_start, utc_end)),
        )
    )
    print(f"{'case':60} {'baseline s':>10} {'tidemark s':>10} {'rows':>8} {'ratio':>6}")
    for name, base_fn, ours_fn in cases:
        base_s, base_n = best_of(runs, base_fn)
        ours_s, ours_n = best_of(runs, ours_fn)
        print(f"{name:60} {base_s:10.3f} {ours_s:10.3f} {ours_n:8d} {ours_s / base_s:6.2f}x")
        if base_n != ours_n:
            print(f"  note: baseline produced {base_n} rows (it ignores gaps and folds)")


if __name__ == "__main__":
    main()
