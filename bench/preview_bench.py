"""Preview throughput against the raw floor measured in the same run.

The floor: python-dateutil's rrule over naive wall times, each attached to the
zone with zoneinfo and converted to UTC, every row written as JSON (the C
encoder, one ``json.dumps`` per row). What any Python script would do: no gap
or fold handling, no ids, no reasons.

Measured:

- whole processes: ``schedctl preview FILE --count N --format F`` against the
  floor as a script of its own, both writing to /dev/null, run in turn (wall
  and CPU seconds, the best of ``--runs``, CPU being what a loaded machine
  disturbs least; peak RSS of the largest);
- the same rules in process: Tidemark's expansion (resolution, ids, reasons,
  ordering) against the floor's loop without writing;
- weekly and monthly rules, and a weekday rule with a business calendar, whose
  cost is the same rule's time with the calendar over its time without;
- startup: ``schedctl validate`` (of a JSON and of a YAML file), ``preview
  --count 5`` and ``explain`` of one small file, run in turn with ``python -c
  pass``, ``import pydantic`` and pydantic with one model (what any pydantic
  program pays), wall and CPU time.

Run by hand: ``.venv/bin/python bench/preview_bench.py [--runs N] [--quick] [--million]``.
Targets: whole process at or below 1.0x the floor; a million JSON rows under
100 MB peak RSS; each startup within 150 ms.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dateutil import rrule

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: The floor as a script: the rows of one rule, each written as JSON with the C encoder.
FLOOR_SCRIPT = """\
import json, sys
from datetime import UTC, datetime
from zoneinfo import ZoneInfo
from dateutil import rrule

rule, start, zone_name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
zone = ZoneInfo(zone_name)
write = sys.stdout.write
write("[")
sep = "\\n"
for n, local in enumerate(rrule.rrulestr("RRULE:" + rule, dtstart=datetime.fromisoformat(start))):
    if n >= count:
        break
    utc = local.replace(tzinfo=zone).astimezone(UTC)
    write(sep + json.dumps({"nominalLocal": local.isoformat(), "resolvedUtc": utc.isoformat()}))
    sep = ",\\n"
write("\\n]\\n")
"""

START = "2026-01-01T00:00:00"
NEW_YORK = "America/New_York"
DAILY = "FREQ=DAILY;BYHOUR=9;BYMINUTE=0"
WEEKLY = "FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=9;BYMINUTE=30"
MONTHLY = "FREQ=MONTHLY;BYMONTHDAY=1,15;BYHOUR=6;BYMINUTE=0"
WEEKDAYS = "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0"
BUSINESS = {"businessCalendar": {"holidays": ["US-NY"]}, "holidayPolicy": "NEXT_BUSINESS_DAY"}


def best_of(runs: int, fn: Callable[[], int]) -> tuple[float, int]:
    best = float("inf")
    n = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        n = fn()
        best = min(best, time.perf_counter() - t0)
    return best, n


def baseline(rule_text: str, start: datetime, zone_name: str, count: int | None, until: datetime | None) -> int:
    from core.time.zones import get_zone

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


def spec(rule_text: str, zone: str, start: str, **more: object) -> dict[str, object]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": "bench",
        "revision": 1,
        "timeZone": zone,
        "rule": rule_text,
        "start": start,
        "gapPolicy": "SHIFT_FORWARD",
        "foldPolicy": "FIRST_ONLY",
        **more,
    }


def run_process(argv: list[str]) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds (user + system) of one process writing to /dev/null."""
    with open(os.devnull, "w") as sink:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=sink, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def best_processes(runs: int, *argvs: list[str]) -> list[tuple[float, float, int]]:
    """Each command run ``runs`` times in turn with the others (so that a load that comes and goes
    touches all alike): the fastest wall and CPU seconds of each, and its largest peak RSS (KiB)."""
    results: list[list[tuple[float, int, float]]] = [[] for _ in argvs]
    for _ in range(runs):
        for argv, got in zip(argvs, results, strict=True):
            got.append(run_process(argv))
    return [(min(w for w, _, _ in got), min(c for _, _, c in got), max(r for _, r, _ in got)) for got in results]


def write_spec(folder: Path, name: str, rule_text: str, **more: object) -> Path:
    import json

    path = folder / f"{name}.json"
    path.write_text(json.dumps(spec(rule_text, NEW_YORK, START, **more)))
    return path


def in_process(runs: int, rows: int, quick: bool) -> None:
    from core.recurrence.compile import compile_schedule
    from core.recurrence.expand import expand, first_rows
    from core.spec.validation import parse_spec

    print(f"\n{'in process: expansion only':60} {'floor s':>10} {'tidemark s':>10} {'rows':>8} {'ratio':>6}")
    cases = []
    for label, rule_text, more in (
        ("daily 09:00", DAILY, {}),
        ("weekly Mon/Wed/Fri 09:30", WEEKLY, {}),
        ("monthly 1st and 15th 06:00", MONTHLY, {}),
        ("weekdays 09:00", WEEKDAYS, {}),
        ("weekdays 09:00 US-NY calendar", WEEKDAYS, BUSINESS),
    ):
        compiled = compile_schedule(parse_spec(spec(rule_text, NEW_YORK, START, **more)))
        cases.append(
            (
                f"{label} {NEW_YORK}, {rows:,} rows",
                lambda r=rule_text: baseline(r, datetime(2026, 1, 1), NEW_YORK, rows, None),
                lambda c=compiled: len(first_rows(c, datetime(2026, 1, 1, tzinfo=UTC), rows)),
            )
        )
    minutely = compile_schedule(parse_spec(spec("FREQ=MINUTELY", "Europe/Berlin", START)))
    year_start, year_end = datetime(2026, 1, 1), datetime(2026, 1, 2) if quick else datetime(2027, 1, 1)
    utc_start, utc_end = (d.replace(tzinfo=UTC) - timedelta(hours=1) for d in (year_start, year_end))  # Berlin's
    what = "1 January 2026" if quick else "2026"
    cases.append(
        (
            f"every minute of {what} in Europe/Berlin ({(year_end - year_start) // timedelta(minutes=1):,} rows)",
            lambda: baseline("FREQ=MINUTELY", year_start, "Europe/Berlin", None, year_end),
            lambda: len(expand(minutely, utc_start, utc_end)),
        )
    )
    seconds: dict[str, float] = {}
    for name, base_fn, ours_fn in cases:
        base_s, base_n = best_of(runs, base_fn)
        ours_s, ours_n = best_of(runs, ours_fn)
        seconds[name] = ours_s
        print(f"{name:60} {base_s:10.3f} {ours_s:10.3f} {ours_n:8d} {ours_s / base_s:6.2f}x")
        if base_n != ours_n:
            print(f"  note: the floor produced {base_n} rows (it ignores gaps and folds)")
        if "calendar" in name:
            print(calendar_cost(seconds[f"weekdays 09:00 {NEW_YORK}, {rows:,} rows"], ours_s, rows))


def whole_process(runs: int, rows: int, million: int, folder: Path) -> None:
    floor_script = folder / "floor.py"
    floor_script.write_text(FLOOR_SCRIPT)
    py = sys.executable
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{'whole process, to /dev/null (load ' + load + ')':60} {'floor s':>10} {'tidemark s':>10}", end="")
    print(f" {'peak MiB':>8} {'ratio':>6} {'floor cpu':>10} {'cpu':>8} {'cpu ratio':>9}")
    cases: list[tuple[str, str, Path, int, str]] = []
    daily = write_spec(folder, "daily", DAILY)
    for fmt in ("json", "csv", "table"):
        cases.append((f"daily 09:00 {NEW_YORK}, {rows:,} rows, {fmt}", DAILY, daily, rows, fmt))
    cases.append((f"daily 09:00 {NEW_YORK}, {million:,} rows, json", DAILY, daily, million, "json"))
    weekly, monthly = write_spec(folder, "weekly", WEEKLY), write_spec(folder, "monthly", MONTHLY)
    cases.append((f"weekly Mon/Wed/Fri 09:30, {rows:,} rows, json", WEEKLY, weekly, rows, "json"))
    cases.append((f"monthly 1st and 15th 06:00, {rows:,} rows, json", MONTHLY, monthly, rows, "json"))
    weekdays, business = write_spec(folder, "weekdays", WEEKDAYS), write_spec(folder, "business", WEEKDAYS, **BUSINESS)
    cases.append((f"weekdays 09:00, {rows:,} rows, json", WEEKDAYS, weekdays, rows, "json"))
    cases.append((f"weekdays 09:00 US-NY calendar, {rows:,} rows, json", WEEKDAYS, business, rows, "json"))
    seconds: dict[str, float] = {}
    for name, rule_text, path, count, fmt in cases:
        floor_argv = [py, str(floor_script), rule_text, START, NEW_YORK, str(count)]
        argv = [py, "-m", "core.cli", "preview", str(path), "--from", START, "--count", str(count), "--format", fmt]
        (floor_s, floor_cpu, _), (ours_s, ours_cpu, peak) = best_processes(runs, floor_argv, argv)
        seconds[name] = ours_s
        print(f"{name:60} {floor_s:10.3f} {ours_s:10.3f} {peak / 1024:8.1f} {ours_s / floor_s:6.2f}x", end="")
        print(f" {floor_cpu:10.3f} {ours_cpu:8.3f} {ours_cpu / floor_cpu:8.2f}x")
    plain, with_calendar = (seconds[name] for name, *_ in cases[-2:])
    print(calendar_cost(plain, with_calendar, rows))


def calendar_cost(plain: float, with_calendar: float, rows: int) -> str:
    """The business calendar's own cost: the same weekday rule's time with it over its time without."""
    extra = (with_calendar - plain) / rows * 1e6
    ratio = with_calendar / plain
    return f"  the business calendar's own cost: {extra:+.2f} us a row, {ratio:.2f}x the rule without it"


#: The least any pydantic program pays: the package and one model built and used.
PYDANTIC_FLOOR = "from pydantic import BaseModel\nclass M(BaseModel):\n    x: int\nM.model_validate({'x': 1})\n"


def startup(runs: int, folder: Path) -> None:
    """Each command and its baselines run in turn, ``runs`` rounds, so that a load that comes and
    goes touches all alike; the fastest wall and CPU time of each is printed, CPU being what a
    loaded machine disturbs least."""
    py = sys.executable
    daily = write_spec(folder, "small", DAILY)
    yaml_spec = folder / "small.yaml"
    yaml_spec.write_text("".join(f"{key}: {value}\n" for key, value in spec(DAILY, NEW_YORK, START).items()))
    cases = {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import pydantic'": [py, "-c", "import pydantic"],
        "pydantic and one model (the floor)": [py, "-c", PYDANTIC_FLOOR],
        "schedctl validate (JSON)": [py, "-m", "core.cli", "validate", str(daily)],
        "schedctl validate (YAML)": [py, "-m", "core.cli", "validate", str(yaml_spec)],
        "schedctl preview --count 5": [py, "-m", "core.cli", "preview", str(daily), "--count", "5"],
        "schedctl explain": [py, "-m", "core.cli", "explain", str(daily)],
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            wall, _, cpu = run_process(argv)
            times[name].append((wall, cpu))
    print(f"\n{'startup, one small file (load ' + ', '.join(f'{x:.1f}' for x in os.getloadavg()) + ')':60}", end="")
    print(f" {'wall ms':>8} {'cpu ms':>8} {'cpu over pass':>14}")
    if sys.flags.dont_write_bytecode:
        print("  (PYTHONDONTWRITEBYTECODE is set: a module with no cached .pyc is compiled at every start)")
    bare = min(cpu for _, cpu in times["python -c pass"])
    for name, got in times.items():
        wall, cpu = min(w for w, _ in got), min(c for _, c in got)
        print(f"{name:60} {wall * 1000:8.0f} {cpu * 1000:8.0f} {(cpu - bare) * 1000:14.0f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs of each, the fastest kept (default 3)")
    parser.add_argument("--quick", action="store_true", help="one run of 1,000 rows and of one day (CI)")
    parser.add_argument("--million", action="store_true", help="also write 1,000,000 rows (else 200,000)")
    parser.add_argument("--startup", action="store_true", help="only the startup of the small commands")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.runs
    if args.startup:
        with tempfile.TemporaryDirectory() as tmp:
            startup(1 if args.quick else max(runs, 7), Path(tmp))
        return
    rows = 1_000 if args.quick else 100_000
    million = 2_000 if args.quick else (1_000_000 if args.million else 200_000)
    # The processes first: a child's peak RSS counts the memory of the process it was forked from,
    # which must not yet hold the core and the rows of the in-process cases.
    with tempfile.TemporaryDirectory() as tmp:
        whole_process(runs, rows, million, Path(tmp))
        startup(1 if args.quick else max(runs, 7), Path(tmp))
    in_process(runs, rows, args.quick)


if __name__ == "__main__":
    main()
