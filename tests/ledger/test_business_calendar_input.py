"""A business calendar's bad input, through ``schedctl validate``, ``preview`` and
``apply``: one line naming the key path, exit 2, nothing published. On SQLite and
PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .test_hostile_specs import APPLIED, BASE, INTERVAL, schedctl

BAD_CALENDARS = [
    pytest.param({"businessCalendar": {"holidays": ["US-NYC"]}, "holidayPolicy": "SKIP"},
                 "businessCalendar.holidays[0]: 'US-NYC' is not a subdivision the holidays package knows; "
                 "did you mean US-NY", id="unknown_subdivision"),
    pytest.param({"businessCalendar": {"holidays": ["US", "XQ"]}, "holidayPolicy": "SKIP"},
                 "businessCalendar.holidays[1]: 'XQ' is not a country or subdivision code", id="unknown_country"),
    pytest.param({"businessCalendar": {"closed": ["2027-02-30"]}, "holidayPolicy": "SKIP"},
                 "businessCalendar.closed[0]: '2027-02-30' is not a date such as 2027-12-24", id="closed_not_a_date"),
    pytest.param({"businessCalendar": {"open": ["2027-12-24", "Friday"]}, "holidayPolicy": "SKIP"},
                 "businessCalendar.open[1]: 'Friday' is not a date such as 2027-12-24", id="open_not_a_date"),
    pytest.param({"businessCalendar": {"closed": ["2027-12-24T09:00:00"]}, "holidayPolicy": "SKIP"},
                 "businessCalendar.closed[0]: '2027-12-24T09:00:00' is not a date", id="closed_with_a_time"),
    pytest.param({"businessCalendar": {"weekend": ["SA", "SU", "SA"]}, "holidayPolicy": "SKIP"},
                 "businessCalendar.weekend: 'SA' is listed twice", id="weekend_twice"),
    pytest.param({"businessCalendar": {"weekend": ["SO"]}, "holidayPolicy": "SKIP"},
                 "businessCalendar.weekend[0]: Input should be 'MO', 'TU'", id="weekend_not_a_day"),
    pytest.param({"businessCalendar": {"weekend": ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]},
                  "holidayPolicy": "SKIP"},
                 "businessCalendar.weekend: names all seven days, so no day would be a business day", id="no_workday"),
    pytest.param({"businessCalendar": {"closed": ["2027-12-24"], "open": ["2027-12-24"]},
                  "holidayPolicy": "SKIP"},
                 "businessCalendar: 2027-12-24 is both closed and open; keep it in one list", id="closed_and_open"),
    pytest.param({"holidayPolicy": "NEXT_BUSINESS_DAY"},
                 "holidayPolicy: only applies with a businessCalendar", id="policy_without_calendar"),
    pytest.param({"businessCalendar": {"holidays": ["US-NY"]}},
                 "holidayPolicy: required with businessCalendar; there is no silent default: choose SKIP, "
                 "NEXT_BUSINESS_DAY or PREVIOUS_BUSINESS_DAY", id="calendar_without_policy"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "line"), BAD_CALENDARS)
@pytest.mark.parametrize("command", ["validate", "preview", "apply"])
def test_bad_calendar_input_is_one_line_and_exit_2(
    ledger_url: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    changes: dict[str, Any],
    line: str,
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(BASE | {"scheduleId": "holidays"} | changes), encoding="utf-8")
    argv = [command, str(spec)]
    if command == "apply":
        argv += ["--db", ledger_url, "--now", APPLIED.isoformat()]
    if command == "preview":
        argv += ["--now", APPLIED.isoformat()]
    status, out, err = schedctl(capsys, *argv)
    assert (status, out) == (2, "")
    [only] = err.splitlines()
    assert only.startswith(f"{spec}: {line}"), err
    assert "holidays" not in schedctl(capsys, "schedules", "--db", ledger_url)[1], "nothing was published"


@pytest.mark.parametrize(
    ("base", "kind"), [(INTERVAL, "an interval"), ({**INTERVAL, "kind": "after_completion"}, "an after_completion")]
)
def test_only_a_calendar_schedule_takes_a_business_calendar(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, base: dict[str, Any], kind: str
) -> None:
    data = base | {"every": "PT1H", "businessCalendar": {"holidays": ["US"]}, "holidayPolicy": "SKIP"}
    if base["kind"] == "after_completion":
        data = {k: v for k, v in data.items() if k not in ("anchor", "every")} | {
            "delay": "PT1H",
            "start": "2026-01-01T00:00:00",
        }
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(data), encoding="utf-8")
    status, out, err = schedctl(capsys, "validate", str(spec))
    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert lines[0].startswith(f"{spec}: businessCalendar: does not apply to {kind} schedule; ")
    assert lines[0].endswith("so it has no nominal dates to keep off holidays; use a calendar rule")
    assert lines[1] == f"{spec}: holidayPolicy: does not apply to {kind} schedule; remove it"


def test_a_good_calendar_validates(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        json.dumps(BASE)[:-1] + ', "businessCalendar": {"holidays": ["US-NY", "DE-BE"], "closed": ["2026-12-24"]}, '
        '"holidayPolicy": "NEXT_BUSINESS_DAY"}',
        encoding="utf-8",
    )
    assert schedctl(capsys, "validate", str(spec)) == (0, "ok\n", "")
