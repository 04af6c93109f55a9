"""The businessCalendar and holidayPolicy keys in the model: the JSON Schema shows
both, a YAML file's unquoted dates read as dates, the canonical form keeps them
and every default of the calendar explicitly."""

from __future__ import annotations

from datetime import date

import pytest
from helpers import make_data

from core.errors import SpecError
from core.spec.canonical import canonical_dict
from core.spec.files import load_text
from core.spec.model import json_schema
from core.spec.validation import parse_spec


def test_the_schema_shows_both_keys() -> None:
    schema = json_schema()
    assert schema["properties"]["holidayPolicy"]["anyOf"][0] == {"$ref": "#/$defs/HolidayPolicy"}
    assert schema["$defs"]["HolidayPolicy"]["enum"] == ["SKIP", "NEXT_BUSINESS_DAY", "PREVIOUS_BUSINESS_DAY"]
    calendar = schema["$defs"]["BusinessCalendar"]
    assert list(calendar["properties"]) == ["holidays", "weekend", "closed", "open"]
    assert calendar["properties"]["closed"]["items"]["format"] == "date"
    assert calendar["properties"]["weekend"]["items"]["enum"] == ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


def test_a_yaml_calendar_reads_and_keeps_its_defaults_explicit() -> None:
    text = (
        "schema: scheduleSpec.v1\nscheduleId: invoices\nrevision: 1\ntimeZone: America/New_York\n"
        "rule: FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0\nstart: 2027-01-01T00:00:00\n"
        "gapPolicy: SHIFT_FORWARD\nfoldPolicy: FIRST_ONLY\n"
        "businessCalendar:\n  holidays: [US-NY]\n  closed: [2027-12-24]\nholidayPolicy: NEXT_BUSINESS_DAY\n"
    )
    spec = parse_spec(load_text(text, "invoices.yaml"))
    assert spec.business_calendar is not None and spec.business_calendar.closed == [date(2027, 12, 24)]
    canonical = canonical_dict(spec)
    assert canonical["businessCalendar"] == {
        "holidays": ["US-NY"],
        "weekend": ["SA", "SU"],
        "closed": ["2027-12-24"],
        "open": [],
    }
    assert canonical["holidayPolicy"] == "NEXT_BUSINESS_DAY"
    assert list(canonical).index("businessCalendar") == list(canonical).index("exclude") + 1


def test_a_spec_without_a_calendar_has_neither_key() -> None:
    canonical = canonical_dict(parse_spec(make_data()))
    assert "businessCalendar" not in canonical and "holidayPolicy" not in canonical


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [("weekends", "weekend"), ("holiday", "holidays"), ("close", "closed"), ("opened", "open")],
    ids=["weekends", "holiday", "close", "opened"],
)
def test_an_unknown_key_in_the_calendar_is_named_with_its_near_match(key: str, suggestion: str) -> None:
    data = make_data(businessCalendar={"holidays": ["US"], key: []}, holidayPolicy="SKIP")
    with pytest.raises(SpecError) as info:
        parse_spec(data)
    assert [(p.key, p.message) for p in info.value.problems] == [
        (f"businessCalendar.{key}", f"unknown key; did you mean {suggestion!r}?")
    ]
