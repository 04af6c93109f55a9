"""scheduleSpec.v1 validation (docs/contract.md §1): a spec is refused whole, with every
problem at once, each naming its key; refusals are user errors with plain
messages; YAML timestamps mean the same quoted or not; the canonical form holds
every default explicitly; unreadable files are refused with a clear message."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import tzdata
from helpers import BASE_INTERVAL, DROP, make_data

from core.errors import ComputeLimitError, SpecError, SpecFileError, UserError
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import expand
from core.spec.canonical import canonical_dict
from core.spec.files import MAX_SPEC_BYTES, dump_yaml, load_spec, load_text
from core.spec.model import ScheduleSpec, json_schema
from core.spec.validation import parse_spec

#: Text that betrays an internal error rather than a message for a person.
NOT_FOR_PEOPLE = ("Traceback", 'File "', "pydantic", "errors.pydantic.dev", "input_value=", "input_type=", "[type=")


def refuse(data: Any) -> SpecError:
    with pytest.raises(SpecError) as info:
        parse_spec(data)
    return info.value


def assert_plain(message: str) -> None:
    for marker in NOT_FOR_PEOPLE:
        assert marker not in message, message


# key and a fragment of its message, for one wrong value each
SINGLE_PROBLEMS = [
    pytest.param({"timeZone": "EST"}, "timeZone", "is an abbreviation, not a place", id="zone_abbreviation"),
    pytest.param({"timeZone": "CET"}, "timeZone", "is an abbreviation", id="zone_abbreviation_cet"),
    pytest.param({"timeZone": "+02:00"}, "timeZone", "is a raw UTC offset", id="zone_raw_offset"),
    pytest.param({"timeZone": "UTC-05:00"}, "timeZone", "is a raw UTC offset", id="zone_utc_minus"),
    pytest.param({"timeZone": "Etc/GMT+5"}, "timeZone", "its sign is inverted", id="zone_etc_gmt_plus_5"),
    pytest.param({"timeZone": "Mars/Olympus_Mons"}, "timeZone", "unknown time zone", id="zone_unknown"),
    pytest.param({"timeZone": "europe/berlin"}, "timeZone", "did you mean Europe/Berlin?", id="zone_case"),
    pytest.param({"rule": "FREQ=DAILY;BYHOUR"}, "rule", "'BYHOUR' is not a NAME=VALUE part", id="rule_malformed"),
    pytest.param({"rule": "FREQ=FORTNIGHTLY"}, "rule", "FREQ=FORTNIGHTLY is not one of", id="rule_bad_freq"),
    pytest.param({"rule": "BYHOUR=9"}, "rule", "FREQ is missing", id="rule_no_freq"),
    pytest.param({"rule": ""}, "rule", "the rule is empty", id="rule_empty"),
    pytest.param({"rule": "FREQ=SECONDLY"}, "rule", "FREQ=SECONDLY is not supported", id="rule_secondly"),
    pytest.param({"rule": "FREQ=DAILY;BYHOUR=25"}, "rule", "BYHOUR=25 is out of range (hours are 0-23)",
                 id="rule_byhour_25"),
    pytest.param({"rule": "FREQ=DAILY;BYMINUTE=60"}, "rule", "BYMINUTE=60 is out of range", id="rule_byminute_60"),
    pytest.param({"rule": "FREQ=DAILY;COUNT=3;UNTIL=20270101T000000Z"}, "rule",
                 "COUNT and UNTIL cannot both be given", id="rule_count_with_until"),
    pytest.param({"rule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"}, "rule",
                 "it yields no occurrence at all: day 30 never exists in February", id="rule_feb_30"),
    pytest.param({"rule": "FREQ=DAILY;UNTIL=20250101T000000"}, "rule", "yields no occurrence between start and its end",
                 id="rule_until_before_start"),
    pytest.param({"rule": "FREQ=DAILY;FOO=1"}, "rule", "unknown rule part FOO", id="rule_unknown_part"),
    pytest.param({"rule": "FREQ=DAILY;BYHOUR=9;BYHOUR=10"}, "rule", "BYHOUR appears twice", id="rule_repeated_part"),
    pytest.param({"rule": "FREQ=DAILY;BYDAY=1MO"}, "rule", "numbered weekdays need FREQ=MONTHLY or YEARLY",
                 id="rule_numbered_weekday_daily"),
    pytest.param({"rule": "FREQ=WEEKLY;BYMONTHDAY=1"}, "rule", "BYMONTHDAY cannot be used with FREQ=WEEKLY",
                 id="rule_weekly_bymonthday"),
    pytest.param({"rule": "FREQ=DAILY;INTERVAL=0"}, "rule", "INTERVAL=0 must be a whole number of at least 1",
                 id="rule_interval_0"),
    pytest.param({"rule": "FREQ=DAILY;UNTIL=20260230"}, "rule", "UNTIL=20260230 is not a real date",
                 id="rule_until_feb_30"),
    pytest.param({"rule": "FREQ=MONTHLY;SKIP=BACKWARD"}, "rule", "set invalidDatePolicy", id="rule_rfc7529_skip"),
    pytest.param({"rule": "DTSTART:20260101T000000\nRRULE:FREQ=DAILY"}, "rule", "give a single RRULE",
                 id="rule_with_dtstart"),
    pytest.param({"rule": 5}, "rule", "valid string", id="rule_not_text"),
    pytest.param({"gapPolicy": DROP}, "gapPolicy", "there is no silent default", id="gap_policy_missing"),
    pytest.param({"foldPolicy": DROP}, "foldPolicy", "there is no silent default", id="fold_policy_missing"),
    pytest.param({"gapPolicy": "SKIPPED"}, "gapPolicy", "'SKIP', 'SHIFT_FORWARD' or 'SHIFT_BY_GAP'",
                 id="gap_policy_bad"),
    pytest.param({"foldPolicy": "ALL"}, "foldPolicy", "'FIRST_ONLY', 'SECOND_ONLY' or 'BOTH'", id="fold_policy_bad"),
    pytest.param({"latenessWindow": "15 minutes"}, "latenessWindow", "is not an ISO 8601 duration",
                 id="duration_words"),
    pytest.param({"latenessWindow": "P1M"}, "latenessWindow", "uses years or months", id="duration_months"),
    pytest.param({"jitter": "PT"}, "jitter", "is not an ISO 8601 duration", id="duration_empty_time"),
    pytest.param({"horizon": "PT0S"}, "horizon", "must be longer than zero", id="horizon_zero"),
    pytest.param({"catchUpWindow": 3600}, "catchUpWindow", "expected an ISO 8601 duration", id="duration_number"),
    pytest.param({"retry": {"initialBackoff": "30s"}}, "retry.initialBackoff", "is not an ISO 8601 duration",
                 id="nested_duration"),
    pytest.param({"retry": {"initialBackoff": "PT10M", "maxBackoff": "PT1M"}}, "retry.maxBackoff",
                 "is shorter than retry.initialBackoff", id="retry_backoff_order"),
    pytest.param({"retry": {"maxAttempts": 0}}, "retry.maxAttempts", "greater than or equal to 1",
                 id="retry_attempts_0"),
    pytest.param({"misfirePolicy": "CATCH_UP_BOUNDED"}, "maxCatchUp",
                 "required with misfirePolicy CATCH_UP_BOUNDED", id="bounded_without_max"),
    pytest.param({"misfirePolicy": "SKIP", "maxCatchUp": 3}, "maxCatchUp",
                 "only applies with misfirePolicy CATCH_UP_BOUNDED", id="max_without_bounded"),
    pytest.param({"start": "2026-01-01T00:00:00Z"}, "start", "carries an offset", id="start_with_offset"),
    pytest.param({"start": "2026-02-30T09:00:00"}, "start", "is not a real date-time", id="start_feb_30"),
    pytest.param({"start": "next monday"}, "start", "is not a local date-time", id="start_words"),
    pytest.param({"start": DROP}, "start", "required for a calendar schedule", id="start_missing"),
    pytest.param({"rule": DROP}, "rule", "required for a calendar schedule", id="rule_missing"),
    pytest.param({"end": "2025-12-31T00:00:00"}, "end", "is before start", id="end_before_start"),
    pytest.param({"exclude": ["2026-02-30"]}, "exclude[0]", "is not a real date", id="exclude_bad_date"),
    pytest.param({"exclude": ["2026-12-25", "Christmas"]}, "exclude[1]", "is not a local date or date-time",
                 id="exclude_second_entry"),
    pytest.param({"every": "PT15M"}, "every", "does not apply to a calendar schedule", id="every_on_calendar"),
    pytest.param({"revision": 0}, "revision", "greater than or equal to 1", id="revision_0"),
    pytest.param({"revision": "7"}, "revision", "valid integer", id="revision_text"),
    pytest.param({"scheduleId": "Daily Ops"}, "scheduleId", "lowercase letters, digits", id="schedule_id_bad"),
    pytest.param({"scheduleId": DROP}, "scheduleId", "required", id="schedule_id_missing"),
    pytest.param({"schema": "scheduleSpec.v2"}, "schema", "must be 'scheduleSpec.v1'", id="schema_wrong"),
    pytest.param({"schema": DROP}, "schema", "required", id="schema_missing"),
    pytest.param({"timeZone": DROP}, "timeZone", "required", id="zone_missing"),
    pytest.param({"kind": "cron"}, "kind", "'calendar', 'interval' or 'after_completion'", id="kind_unknown"),
    pytest.param({"businessPeriod": "{foo}"}, "businessPeriod", "unknown field(s) ['foo']", id="period_unknown_field"),
    pytest.param({"businessPeriod": "{nominal"}, "businessPeriod", "is not a valid period template",
                 id="period_unbalanced"),
    pytest.param({"task": {"argv": []}}, "task.argv", "at least 1 item", id="task_empty_argv"),
    pytest.param({"task": {"argv": ["x"], "env": {"BAD-NAME": "1"}}}, "task.env",
                 "not a valid environment variable name", id="task_env_name"),
    pytest.param({"task": {"argv": ["x"], "effect": "sometimes"}}, "task.effect", "'none', 'idempotent' or",
                 id="task_effect"),
    pytest.param({"task": {"argv": ["x"], "timeout": "ten minutes"}}, "task.timeout", "is not an ISO 8601 duration",
                 id="task_timeout"),
]  # fmt: skip


@pytest.mark.parametrize(("overrides", "key", "fragment"), SINGLE_PROBLEMS)
def test_one_problem_names_its_key(overrides: dict[str, Any], key: str, fragment: str) -> None:
    error = refuse(make_data(**overrides))
    assert isinstance(error, UserError)
    assert [p.key for p in error.problems] == [key]
    assert fragment in error.problems[0].message
    assert_plain(str(error))
    assert error.lines() == [f"{key}: {error.problems[0].message}"]


INTERVAL_PROBLEMS = [
    pytest.param({"anchor": "2026-01-01T00:00:00"}, "anchor", "has no offset", id="anchor_without_z"),
    pytest.param({"every": "P1M"}, "every", "uses years or months", id="every_months"),
    pytest.param({"every": "PT0S"}, "every", "must be longer than zero", id="every_zero"),
    pytest.param({"every": DROP}, "every", "required for an interval schedule", id="every_missing"),
    pytest.param({"gapPolicy": "SKIP"}, "gapPolicy", "does not apply to an interval schedule",
                 id="gap_policy_on_interval"),
    pytest.param({"rule": "FREQ=DAILY"}, "rule", "does not apply to an interval schedule", id="rule_on_interval"),
    pytest.param({"end": "2025-01-01T00:00:00Z"}, "end", "is before anchor", id="end_before_anchor"),
]  # fmt: skip


@pytest.mark.parametrize(("overrides", "key", "fragment"), INTERVAL_PROBLEMS)
def test_interval_problems(overrides: dict[str, Any], key: str, fragment: str) -> None:
    error = refuse(make_data(BASE_INTERVAL, **overrides))
    assert [p.key for p in error.problems] == [key]
    assert fragment in error.problems[0].message


def test_after_completion_needs_delay_and_start() -> None:
    data = make_data(kind="after_completion", rule=DROP, gapPolicy="SKIP", foldPolicy="FIRST_ONLY", start=DROP)
    error = refuse(data)
    assert {p.key: p.message for p in error.problems} == {
        "delay": "required for an after_completion schedule",
        "start": "required for an after_completion schedule",
    }


@pytest.mark.parametrize(
    ("path", "key", "suggestion"),
    [
        pytest.param(("timezone",), "timezone", "timeZone", id="top_level_case"),
        pytest.param(("gap_policy",), "gap_policy", "gapPolicy", id="top_level_snake_case"),
        pytest.param(("excludes",), "excludes", "exclude", id="top_level_plural"),
        pytest.param(("maxCatchup",), "maxCatchup", "maxCatchUp", id="top_level_capital"),
        pytest.param(("task", "arg"), "task.arg", "argv", id="task_argv"),
        pytest.param(("task", "timout"), "task.timout", "timeout", id="task_timeout"),
        pytest.param(("retry", "maxAttempt"), "retry.maxAttempt", "maxAttempts",
                     id="retry_max_attempts"),
        pytest.param(("retry", "multiplyer"), "retry.multiplyer", "multiplier", id="retry_multiplier"),
    ],
)  # fmt: skip
def test_unknown_keys_get_did_you_mean(path: tuple[str, ...], key: str, suggestion: str) -> None:
    data = make_data(task={"argv": ["/bin/true"]})
    target = data
    for part in path[:-1]:
        target[part] = dict(target.get(part) or {})
        target = target[part]
    target[path[-1]] = "PT1M" if path[0] != "task" else ["x"]
    error = refuse(data)
    assert [(p.key, p.message) for p in error.problems] == [(key, f"unknown key; did you mean {suggestion!r}?")]


def test_unknown_key_without_a_near_match() -> None:
    error = refuse(make_data(colour="red"))
    assert [(p.key, p.message) for p in error.problems] == [("colour", "unknown key")]


def test_every_problem_at_once() -> None:
    data = make_data(
        timeZone="EST",
        scheduleId="Daily Ops",
        revision=0,
        gapPolicy=DROP,
        latenessWindow="15 minutes",
        rule="FREQ=SECONDLY",
        colour="red",
        retry={"maxAttempt": 3, "initialBackoff": "soon"},
        task={"argv": ["x"], "timout": "PT1M"},
    )
    error = refuse(data)
    keys = [p.key for p in error.problems]
    assert sorted(keys) == sorted(
        [
            "timeZone",
            "scheduleId",
            "revision",
            "gapPolicy",
            "latenessWindow",
            "rule",
            "colour",
            "retry.maxAttempt",
            "retry.initialBackoff",
            "task.timout",
        ]
    )
    assert len(error.lines()) == len(keys)
    for line, problem in zip(error.lines(), error.problems, strict=True):
        assert line.startswith(problem.key + ": ")
        assert "\n" not in line
    assert_plain(str(error))


def test_rule_syntax_is_reported_alongside_other_problems() -> None:
    error = refuse(make_data(timeZone="EST", rule="FREQ=DAILY;BYHOUR=25"))
    assert {p.key for p in error.problems} == {"timeZone", "rule"}


def test_problems_are_not_repeated() -> None:
    error = refuse(make_data(timeZone="EST", gapPolicy=DROP))
    assert len(error.problems) == len({(p.key, p.message) for p in error.problems})


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(None, id="nothing"),
        pytest.param([1, 2], id="a_list"),
        pytest.param("schema: scheduleSpec.v1", id="a_string"),
    ],
)
def test_a_spec_must_be_a_mapping(data: Any) -> None:
    error = refuse(data)
    assert error.problems[0].message.startswith("a spec is a mapping of keys to values")


def test_a_valid_spec_passes() -> None:
    spec = parse_spec(make_data())
    assert isinstance(spec, ScheduleSpec)
    assert spec.time_zone == "America/New_York"


# --- canonical form -------------------------------------------------------------------------


def test_canonical_dict_has_every_default_explicit() -> None:
    canonical = canonical_dict(parse_spec(make_data()))
    assert canonical == {
        "schema": "scheduleSpec.v1",
        "scheduleId": "daily-ops-summary",
        "revision": 7,
        "title": None,
        "timeZone": "America/New_York",
        "tzdbVersion": tzdata.IANA_VERSION,
        "tzdbPolicy": "FOLLOW",
        "kind": "calendar",
        "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        "start": "2026-01-01T00:00:00",
        "end": None,
        "exclude": [],
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "invalidDatePolicy": "OMIT",
        "misfirePolicy": "CATCH_UP_BOUNDED",
        "maxCatchUp": 1,
        "latenessWindow": "PT15M",
        "catchUpWindow": None,
        "jitter": "PT0S",
        "overlapPolicy": "SKIP",
        "retry": {"maxAttempts": 3, "initialBackoff": "PT30S", "multiplier": 2.0, "maxBackoff": "PT10M"},
        "cutoverAt": None,
        "horizon": "P14D",
        "businessPeriod": None,
        "wakeSystem": False,
        "task": None,
    }


def test_tzdb_policy_is_follow_or_pin_and_written_out() -> None:
    assert canonical_dict(parse_spec(make_data(tzdbPolicy="PIN")))["tzdbPolicy"] == "PIN"
    assert list(canonical_dict(parse_spec(make_data())))[5:7] == ["tzdbVersion", "tzdbPolicy"]
    error = refuse(make_data(tzdbPolicy="KEEP"))
    assert [p.key for p in error.problems] == ["tzdbPolicy"]
    assert "FOLLOW" in error.problems[0].message and "PIN" in error.problems[0].message
    schema = json_schema()
    assert schema["properties"]["tzdbPolicy"]["default"] == "FOLLOW"


def test_canonical_dict_fills_cutover_and_keeps_given_values() -> None:
    data = make_data(
        tzdbVersion="2025b",
        rule="rrule:freq=daily;interval=1;byminute=30;byhour=2",
        misfirePolicy="CATCH_UP_BOUNDED",
        maxCatchUp=4,
        task={"argv": ["/bin/echo", "{period}"]},
    )
    canonical = canonical_dict(parse_spec(data), cutover_at=datetime(2026, 11, 1, 6, 0, tzinfo=UTC))
    assert canonical["cutoverAt"] == "2026-11-01T06:00:00Z"
    assert canonical["tzdbVersion"] == "2025b"
    assert canonical["rule"] == "FREQ=DAILY;BYHOUR=2;BYMINUTE=30"
    assert canonical["maxCatchUp"] == 4
    assert canonical["task"] == {
        "kind": "command",
        "argv": ["/bin/echo", "{period}"],
        "cwd": None,
        "env": {},
        "timeout": "PT10M",
        "effect": "non_idempotent",
        "verify": None,
    }


def test_canonical_interval_spec_leaves_out_what_does_not_apply() -> None:
    canonical = canonical_dict(parse_spec(make_data(BASE_INTERVAL)))
    for key in ("rule", "start", "delay", "gapPolicy", "foldPolicy", "invalidDatePolicy"):
        assert key not in canonical
    assert canonical["every"] == "PT15M"
    assert canonical["anchor"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(make_data(), id="calendar"),
        pytest.param(make_data(BASE_INTERVAL), id="interval"),
        pytest.param(make_data(misfirePolicy="SKIP", exclude=["2026-12-25", "2026-07-04T02:30:00"], end="2027-01-01",
                               businessPeriod="{nominal:%Y-%m}", task={"argv": ["x"], "env": {"A": "1"}}), id="full"),
    ],
)  # fmt: skip
def test_canonical_form_round_trips(data: dict[str, Any]) -> None:
    once = canonical_dict(parse_spec(data))
    twice = canonical_dict(parse_spec(once))
    assert once == twice
    # And through YAML text, as a published revision stores it.
    assert canonical_dict(parse_spec(load_text(dump_yaml(once)))) == once
    assert json.loads(json.dumps(once)) == once


# --- YAML: unquoted timestamps mean the same as quoted ones -----------------------------------

CALENDAR_YAML = """\
schema: scheduleSpec.v1
scheduleId: daily-ops-summary
revision: 7
timeZone: America/New_York
rule: FREQ=DAILY;BYHOUR=2;BYMINUTE=30
start: {start}
end: {end}
exclude: [{exclude}]
cutoverAt: {cutover}
gapPolicy: SKIP
foldPolicy: FIRST_ONLY
"""


@pytest.mark.parametrize(
    ("start", "end", "exclude", "cutover"),
    [
        pytest.param("2026-01-01T00:00:00", "2026-12-31", "2026-12-25", "2026-11-01T06:00:00Z", id="iso_t"),
        pytest.param("2026-01-01 00:00:00", "2026-12-31T23:59:59", "2026-07-04 02:30:00", "2026-11-01 06:00:00Z",
                     id="space_separated"),
        pytest.param("2026-01-01", "2026-12-31", "2026-12-25", "2026-11-01T01:00:00-05:00", id="bare_date_start"),
    ],
)  # fmt: skip
def test_unquoted_yaml_timestamps_mean_the_same_as_quoted(start: str, end: str, exclude: str, cutover: str) -> None:
    plain = CALENDAR_YAML.format(start=start, end=end, exclude=exclude, cutover=cutover)
    quoted = CALENDAR_YAML.format(start=f'"{start}"', end=f'"{end}"', exclude=f'"{exclude}"', cutover=f'"{cutover}"')
    a, b = load_text(plain), load_text(quoted)
    assert a == b
    assert isinstance(a["start"], str)
    assert canonical_dict(parse_spec(a)) == canonical_dict(parse_spec(b))


def test_unquoted_interval_anchor_is_an_instant() -> None:
    text = (
        "schema: scheduleSpec.v1\nscheduleId: q\nrevision: 1\ntimeZone: Europe/Berlin\n"
        "kind: interval\nevery: PT15M\nanchor: 2026-01-01T00:00:00Z\n"
    )
    spec = parse_spec(load_text(text))
    assert canonical_dict(spec)["anchor"] == "2026-01-01T00:00:00Z"


def test_unquoted_local_anchor_is_still_refused() -> None:
    # Without the text loader YAML would turn this into a naive datetime and
    # the offset check would see a different value; here it stays the user's text.
    text = (
        "schema: scheduleSpec.v1\nscheduleId: q\nrevision: 1\ntimeZone: Europe/Berlin\n"
        "kind: interval\nevery: PT15M\nanchor: 2026-01-01T00:00:00\n"
    )
    error = refuse(load_text(text))
    assert [(p.key, p.message) for p in error.problems] == [
        ("anchor", "'2026-01-01T00:00:00' has no offset; an instant needs one: end it with Z for UTC")
    ]


# --- files -------------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        pytest.param("empty.yaml", b"", "the file is empty", id="empty"),
        pytest.param("blank.yaml", b"  \n\n\t\n", "the file is empty", id="whitespace_only"),
        pytest.param("binary.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is a binary file", id="binary"),
        pytest.param("latin1.yaml", "title: caf\u00e9\n".encode("latin-1"), "is not UTF-8 text", id="not_utf8"),
        pytest.param("bad.yaml", b"schema: [unclosed\nscheduleId: x\n", "not valid YAML", id="invalid_yaml"),
        pytest.param(
            "tabs.yaml", b"schema: scheduleSpec.v1\n\tscheduleId: x\n", "not valid YAML", id="yaml_tab_indent"
        ),
        pytest.param("bad.json", b'{"schema": "scheduleSpec.v1",}', "not valid JSON", id="invalid_json"),
        pytest.param("dup.yaml", b"revision: 1\nrevision: 2\n", "appears twice", id="duplicate_key"),
        pytest.param("huge.yaml", b"#" * (MAX_SPEC_BYTES + 1), "a spec file is at most", id="too_big"),
    ],
)
def test_unreadable_files_raise_spec_file_error(tmp_path: Path, name: str, content: bytes, fragment: str) -> None:
    path = _write(tmp_path, name, content)
    with pytest.raises(SpecFileError) as info:
        load_spec(path)
    message = str(info.value)
    assert isinstance(info.value, UserError)
    assert message.startswith(str(path) + ": ")
    assert fragment in message
    assert_plain(message)
    assert "\n" not in message


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(SpecFileError, match="no such file"):
        load_spec(path)


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(SpecFileError, match="is a directory"):
        load_spec(tmp_path)


def test_yaml_error_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.yaml", b"schema: scheduleSpec.v1\nrevision: [1\n")
    with pytest.raises(SpecFileError, match=r"at line \d+, column \d+"):
        load_spec(path)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        pytest.param(b"- a\n- b\n", "holds list", id="a_list"),
        pytest.param(b"just text\n", "holds str", id="a_scalar"),
    ],
)
def test_file_that_is_not_a_mapping_is_a_spec_error(tmp_path: Path, content: bytes, fragment: str) -> None:
    path = _write(tmp_path, "list.yaml", content)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert fragment in str(info.value)


def test_spec_errors_from_a_file_name_the_file(tmp_path: Path) -> None:
    text = dump_yaml(make_data(timeZone="EST", colour="red"))
    path = _write(tmp_path, "spec.yaml", text.encode("utf-8"))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.source == str(path)
    lines = info.value.lines()
    assert all(line.startswith(f"{path}: ") for line in lines)
    assert sorted(line[len(str(path)) + 2 :].split(": ", 1)[0] for line in lines) == ["colour", "timeZone"]


@pytest.mark.parametrize(
    ("name", "content"),
    [
        pytest.param("spec.yaml", dump_yaml(make_data()).encode("utf-8"), id="yaml"),
        pytest.param("spec.json", json.dumps(make_data()).encode("utf-8"), id="json"),
        pytest.param("bom.yaml", b"\xef\xbb\xbf" + dump_yaml(make_data()).encode("utf-8"), id="utf8_bom"),
    ],
)
def test_valid_files_load(tmp_path: Path, name: str, content: bytes) -> None:
    spec = load_spec(_write(tmp_path, name, content))
    assert canonical_dict(spec) == canonical_dict(parse_spec(make_data()))


# --- bounded work -------------------------------------------------------------------------------


def test_an_expansion_that_hits_its_bound_is_a_user_error() -> None:
    compiled = compile_schedule(parse_spec(make_data(rule="FREQ=MINUTELY")))
    start = datetime(2026, 1, 1, 5, 0, tzinfo=UTC)  # the rule's start, 00:00 EST
    with pytest.raises(ComputeLimitError) as info:
        expand(compiled, start, start + timedelta(days=2), scan_limit=100)
    assert isinstance(info.value, UserError)
    assert str(info.value) == "the expansion visited 100 times without finishing; ask for a shorter range"
    # Within the bound the same call succeeds.
    assert len(expand(compiled, start, start + timedelta(minutes=30), scan_limit=10_000)) == 30


# --- runsOn: where a task runs ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("runs_on", "fragment"),
    [
        pytest.param("alpha", "'alpha' is not a map of label to value; write e.g. {host: alpha}", id="text"),
        pytest.param({}, "is empty; name the labels an engine must have", id="empty"),
        pytest.param({"host": 5}, "host: 5 is not a label value; values are non-empty text", id="number_value"),
        pytest.param({"host": " "}, "host: ' ' is not a label value", id="blank_value"),
        pytest.param({"host": True}, "host: True is not a label value", id="true_for_a_label"),
        pytest.param({"": "x"}, "label '' is not a name", id="empty_label"),
        pytest.param({"any": False}, "any: False; write {any: true} for any engine", id="any_false"),
        pytest.param({"any": "yes"}, "any: 'yes'; write {any: true}", id="any_text"),
        pytest.param({"any": True, "host": "alpha"}, "any: true stands alone (any engine)", id="any_with_labels"),
    ],
)  # fmt: skip
def test_runs_on_problems(runs_on: Any, fragment: str) -> None:
    error = refuse(make_data(runsOn=runs_on))
    [line] = error.lines()
    assert line.startswith("runsOn: ") and fragment in line, line
    assert_plain(line)


def test_runs_on_text_follows_the_os_text_rules() -> None:
    assert any("runsOn" in line for line in refuse(make_data(runsOn={"host": "al\x00pha"})).lines())


@pytest.mark.parametrize("runs_on", [None, {"any": True}, {"host": "beta"}, {"host": "beta", "gpu": "yes"}], ids=str)
def test_runs_on_in_the_canonical_form(runs_on: dict[str, Any] | None) -> None:
    data = make_data() if runs_on is None else make_data(runsOn=runs_on)
    canonical = canonical_dict(parse_spec(data))
    # Absent stays absent: the default is the publishing host, recorded with the revision.
    assert canonical.get("runsOn") == runs_on and ("runsOn" in canonical) is (runs_on is not None)
    assert list(canonical)[-3:-1] == (["runsOn", "wakeSystem"] if runs_on else ["businessPeriod", "wakeSystem"])
    assert canonical_dict(parse_spec(load_text(dump_yaml(canonical)))) == canonical


def test_runs_on_in_the_json_schema() -> None:
    schema = ScheduleSpec.model_json_schema(by_alias=True)
    runs_on = schema["properties"]["runsOn"]
    assert "absent: the host it was published from" in json.dumps(runs_on)


@pytest.mark.parametrize(
    ("given", "stored"), [(None, False), (False, False), (True, True)], ids=["absent", "false", "true"]
)
def test_wake_system_is_stored_explicitly_before_the_task(given: bool | None, stored: bool) -> None:
    data = make_data() if given is None else make_data(wakeSystem=given)
    canonical = canonical_dict(parse_spec(data))
    assert canonical["wakeSystem"] is stored
    assert list(canonical)[-2:] == ["wakeSystem", "task"]


@pytest.mark.parametrize("text", ["yes", "true", 1], ids=["yes", "quoted_true", "one"])
def test_wake_system_is_true_or_false_only(text: object) -> None:
    error = refuse(make_data(wakeSystem=text))
    assert [p.key for p in error.problems] == ["wakeSystem"]
    assert json_schema()["properties"]["wakeSystem"] == {"default": False, "title": "Wakesystem", "type": "boolean"}
