"""The keys of a spec validated by a validator built when a document first holds them (task,
businessCalendar, alerts): they check, say and show in the JSON Schema what the same types
nested in a model built at once do."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import make_data
from pydantic import BaseModel, ValidationError

from core.errors import SpecError
from core.spec.model import AlertRoute, BusinessCalendar, ScheduleSpec, Task, json_schema
from core.spec.validation import parse_spec


class _AtOnce(BaseModel):
    """The three keys as plain nested models, built when the class is made."""

    model_config = ScheduleSpec.model_config
    business_calendar: BusinessCalendar | None = None
    alerts: list[AlertRoute] | None = None
    task: Task | None = None


def _said(error: ValidationError) -> list[tuple[Any, ...]]:
    return [(e["type"], e["loc"], e["msg"], repr(e["input"])) for e in error.errors(include_url=False)]


def test_their_json_schema_is_that_of_the_types_nested_at_once() -> None:
    ours, at_once = json_schema(), _AtOnce.model_json_schema(by_alias=True, mode="validation")
    for key in ("businessCalendar", "alerts", "task"):
        assert ours["properties"][key] == at_once["properties"][key]
    assert {name: ours["$defs"][name] for name in at_once["$defs"]} == at_once["$defs"]
    assert "title" not in ours["properties"]["task"] and ours["properties"]["alerts"]["title"] == "Alerts"


@pytest.mark.parametrize(
    "given",
    [
        pytest.param({"task": {"argv": []}}, id="task_empty_argv"),
        pytest.param({"task": {"argv": ["/bin/true"], "env": {"A": 1, "1B": "x"}}}, id="task_env"),
        pytest.param({"task": {"argv": ["x"], "env": {"A": {"secret": "no way"}}}}, id="task_secret"),
        pytest.param({"task": "run.sh"}, id="task_not_a_map"),
        pytest.param({"businessCalendar": {"weekend": ["XX"], "closed": ["2027-13-01"]}}, id="calendar"),
        pytest.param({"businessCalendar": {"closed": ["2027-12-24"], "open": ["2027-12-24"]}}, id="calendar_both"),
        pytest.param({"businessCalendar": []}, id="calendar_not_a_map"),
        pytest.param({"alerts": [{"to": "ftp://x"}, {"to": "mailto:a@b.c", "on": ["NEVER"]}]}, id="alerts"),
        pytest.param({"alerts": {"to": "mailto:a@b.c"}}, id="alerts_not_a_list"),
    ],
)
def test_their_problems_are_those_of_the_types_nested_at_once(given: dict[str, Any]) -> None:
    data = make_data(**given)
    with pytest.raises(ValidationError) as ours:
        ScheduleSpec.model_validate(data)
    with pytest.raises(ValidationError) as at_once:
        _AtOnce.model_validate({key: data[key] for key in given})
    assert _said(ours.value) == _said(at_once.value) != []


def test_a_spec_with_all_three_reads_and_dumps_as_before() -> None:
    data = make_data(
        task={"argv": ["/bin/true"], "env": {"TOKEN": {"secret": "api-token"}}},
        businessCalendar={"holidays": ["US"], "closed": ["2027-12-24"]},
        holidayPolicy="SKIP",
        alerts=[{"to": "mailto:ops@example.com", "on": ["FAILED"]}],
    )
    spec = parse_spec(data)
    at_once = _AtOnce.model_validate({key: data[key] for key in ("task", "businessCalendar", "alerts")})
    assert (spec.task, spec.business_calendar, spec.alerts) == (at_once.task, at_once.business_calendar, at_once.alerts)
    dumped = spec.model_dump(mode="json", by_alias=True)
    assert {key: dumped[key] for key in ("task", "businessCalendar", "alerts")} == at_once.model_dump(
        mode="json", by_alias=True
    )


def test_a_spec_problem_inside_names_its_place() -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(make_data(task={"argv": ["/bin/true"], "timeout": "soon"}))
    assert [p.key for p in info.value.problems] == ["task.timeout"]
