"""The largest preview allowed is written row by row in bounded memory: run under an
address-space limit (``RLIMIT_AS``) in a subprocess, it completes and its output is valid."""

from __future__ import annotations

import csv
import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from core.recurrence.preview import MAX_PREVIEW_ROWS

#: The interpreter with the preview's imports needs well under 150 MB of address space;
#: holding a million rows took several gigabytes.
LIMIT = 400 * 2**20
ROOT = Path(__file__).resolve().parents[2]
SPEC = """\
schema: scheduleSpec.v1
scheduleId: every-minute
revision: 1
timeZone: UTC
kind: interval
every: PT1M
anchor: 2026-01-01T00:00:00Z
"""


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _schedctl(spec: Path, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "core.cli", "preview", str(spec), "--from", "2026-01-01T00:00:00Z", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_limited,
    )


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "every-minute.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return path


@pytest.mark.slow
def test_the_largest_json_preview_streams_under_a_memory_limit(spec: Path) -> None:
    proc = _schedctl(spec, "--count", str(MAX_PREVIEW_ROWS), "--format", "json")
    assert proc.stdout is not None and proc.stderr is not None
    # Read it back in bounded memory too: each row object is parsed on its own,
    # then the document around them with an empty list in their place.
    outer: list[str] = []
    row: list[str] = []
    rows, first, last = 0, None, None
    inside = False
    for line in proc.stdout:
        if not inside:
            outer.append(line)
            inside = line in ('  "occurrences": [\n',)
            continue
        if line in ("  ],\n",):
            outer.append(line)
            inside = False
            continue
        row.append(line)
        if line in ("    }\n", "    },\n"):
            data = json.loads("".join(row).rstrip().rstrip(","))
            row = []
            rows += 1
            first = first or data["positionUtc"]
            last = data["positionUtc"]
    err = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert proc.wait() == 0, err
    document = json.loads("".join(outer))
    assert document["schema"] == "preview.v1" and document["occurrences"] == []
    assert rows == MAX_PREVIEW_ROWS
    assert (first, last) == ("2026-01-01T00:00:00Z", "2027-11-26T10:39:00Z")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "table", "ics"])
def test_the_other_formats_stream_too(spec: Path, fmt: str) -> None:
    count = MAX_PREVIEW_ROWS // 10
    proc = _schedctl(spec, "--count", str(count), "--format", fmt)
    assert proc.stdout is not None and proc.stderr is not None
    if fmt == "csv":
        found = sum(1 for _ in csv.reader(proc.stdout)) - 1
    elif fmt == "table":
        found = sum(1 for line in proc.stdout if "scheduled" in line)
    else:
        found = sum(1 for line in proc.stdout if line.startswith("BEGIN:VEVENT"))
    err = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert proc.wait() == 0, err
    assert found == count


def test_a_too_far_until_is_refused_under_the_memory_limit(spec: Path) -> None:
    proc = _schedctl(spec, "--until", "9026-01-01T00:00:00Z", "--format", "json")
    out, err = proc.communicate()
    assert proc.returncode == 2, err
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "more than 1,000,000 rows" in err


def test_the_ordering_lets_go_of_a_row_soon_after_releasing_it() -> None:
    """A row handed on is dropped from the ordering's buffer within a few dozen rows, so rows die
    young and the garbage collector never walks them again (nor, often, all the rest)."""
    import itertools
    from datetime import UTC, datetime

    from helpers import make_data

    from core.recurrence.compile import compile_schedule
    from core.recurrence.expand import _ordered, iter_rows
    from core.spec.validation import parse_spec

    compiled = compile_schedule(parse_spec(make_data(rule="FREQ=DAILY;BYHOUR=9;BYMINUTE=0")))
    rows = list(itertools.islice(iter_rows(compiled, datetime(2026, 1, 1, tzinfo=UTC)), 1000))
    ordered = _ordered(iter(rows), compiled.zone)
    handed = [next(ordered) for _ in range(500)]
    assert handed == rows[:500]
    del handed
    # Only ``rows`` holds the first row now, as it alone holds a row the ordering has not read.
    assert sys.getrefcount(rows[0]) == sys.getrefcount(rows[-1])
