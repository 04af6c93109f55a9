"""``alerts:`` in scheduleSpec.v1: routes accepted, refused with their key named, and written canonically."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from helpers import make_data
from hypothesis import given
from hypothesis import strategies as st

from core.errors import SpecError
from core.exporting.crontab import export_crontab
from core.exporting.systemd import export_systemd
from core.spec.canonical import canonical_dict
from core.spec.files import dump_yaml, load_text
from core.spec.model import json_schema
from core.spec.validation import parse_spec
from core.team.alert_routes import is_loopback, route_problem

ALL = ["FAILED", "UNKNOWN_EFFECT", "MISFIRE_EXPIRED"]

ACCEPTED = [
    pytest.param(
        {"to": "mailto:ops@example.com"}, {"to": "mailto:ops@example.com", "on": ALL}, id="mail_on_defaults_to_all"
    ),
    pytest.param(
        {"to": "https://hooks.example.com/tm", "on": ["MISFIRE_EXPIRED", "FAILED"]},
        {"to": "https://hooks.example.com/tm", "on": ["FAILED", "MISFIRE_EXPIRED"]},
        id="https_on_in_contract_order",
    ),
    pytest.param({"to": {"secret": "TEAM_HOOK"}}, {"to": {"secret": "TEAM_HOOK"}, "on": ALL}, id="secret_route"),
    pytest.param(
        {"to": "http://127.0.0.1:8080/x"}, {"to": "http://127.0.0.1:8080/x", "on": ALL}, id="http_loopback_v4"
    ),
    pytest.param({"to": "http://localhost/x"}, {"to": "http://localhost/x", "on": ALL}, id="http_localhost"),
    pytest.param({"to": "http://[::1]:9/x"}, {"to": "http://[::1]:9/x", "on": ALL}, id="http_loopback_v6"),
]


@pytest.mark.parametrize(("route", "canonical"), ACCEPTED)
def test_a_route_is_accepted_and_written_in_full(route: dict[str, Any], canonical: dict[str, Any]) -> None:
    spec = parse_spec(make_data(alerts=[route]))
    assert canonical_dict(spec)["alerts"] == [canonical]


REFUSED = [
    pytest.param([{"to": "http://example.com/x"}], "alerts[0].to", "plain http", id="http_elsewhere"),
    pytest.param([{"to": "ftp://example.com/x"}], "alerts[0].to", "not a route", id="ftp"),
    pytest.param([{"to": "mailto:nobody"}], "alerts[0].to", "email address", id="mail_without_domain"),
    pytest.param([{"to": "mailto:a@b.com,c@d.com"}], "alerts[0].to", "email address", id="two_addresses"),
    pytest.param([{"to": "https://user:pw@example.com/"}], "alerts[0].to", "{secret: NAME}", id="password_in_url"),
    pytest.param([{"to": "https:///path"}], "alerts[0].to", "no host", id="no_host"),
    pytest.param([{"to": " https://example.com"}], "alerts[0].to", "spaces", id="spaces"),
    pytest.param([{"to": "https://example.com/\x1b[31mred"}], "alerts[0].to", "control character", id="escape"),
    pytest.param([{"to": "https://example.com/a b"}], "alerts[0].to", "%20", id="space_inside"),
    pytest.param([{"to": "mailto:ops@example.com\r\nBcc: x@y.z"}], "alerts[0].to", "control", id="header_injection"),
    pytest.param([{"to": 5}], "alerts[0].to", "not a route", id="number"),
    pytest.param([{"to": {"secret": "1bad"}}], "alerts[0].to", "secret name", id="bad_secret_name"),
    pytest.param([{"to": {"secret": "A", "x": 1}}], "alerts[0].to", "not a route", id="secret_with_more"),
    pytest.param([{"to": "https://e.com", "on": []}], "alerts[0].on", "is empty", id="empty_on"),
    pytest.param([{"to": "https://e.com", "on": ["FAILED", "FAILED"]}], "alerts[0].on", "twice", id="kind_twice"),
    pytest.param([{"to": "https://e.com", "on": ["FAILD"]}], "alerts[0].on[0]", "UNKNOWN_EFFECT", id="unknown_kind"),
    pytest.param([{"too": "https://e.com"}], "alerts[0].too", "did you mean 'to'", id="typo_key"),
    pytest.param([{"on": ["FAILED"]}], "alerts[0].to", "required", id="no_to"),
    pytest.param([{"to": "https://e.com"}, {"to": "https://e.com"}], "alerts", "listed twice", id="route_twice"),
    pytest.param("https://e.com", "alerts", "list", id="not_a_list"),
]


@pytest.mark.parametrize(("alerts", "key", "fragment"), REFUSED)
def test_a_bad_route_is_refused_naming_its_key(alerts: Any, key: str, fragment: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(make_data(alerts=alerts))
    named = [p for p in info.value.problems if p.key.startswith("alerts")]
    assert named[0].key == key
    assert fragment in named[0].message


def test_absent_alerts_stay_out_of_the_canonical_form_and_an_empty_list_stays() -> None:
    assert "alerts" not in canonical_dict(parse_spec(make_data()))
    assert canonical_dict(parse_spec(make_data(alerts=[])))["alerts"] == []


def test_alerts_go_before_the_task_and_survive_a_yaml_round_trip() -> None:
    spec = parse_spec(make_data(alerts=[{"to": {"secret": "HOOK"}, "on": ["UNKNOWN_EFFECT"]}]))
    canonical = canonical_dict(spec)
    keys = list(canonical)
    assert keys.index("alerts") == keys.index("task") - 1
    again = parse_spec(load_text(dump_yaml(canonical)))
    assert canonical_dict(again) == canonical


def test_the_json_schema_describes_a_route() -> None:
    route = json_schema()["$defs"]["AlertRoute"]
    assert route["required"] == ["to"]
    assert route["additionalProperties"] is False
    assert set(route["properties"]) == {"to", "on"}


def test_cron_and_systemd_exports_say_alerts_are_not_kept() -> None:
    data = make_data(alerts=[{"to": "mailto:ops@example.com"}], task={"argv": ["/bin/true"]})
    now = datetime(2026, 1, 1, tzinfo=UTC)
    exported = export_crontab(parse_spec(data), now)
    assert any(note.text.startswith("alerts:") for note in exported.notes)
    units = export_systemd(parse_spec(data), now)
    assert any(line.startswith("alerts:") for line in units.lost)


@given(st.sampled_from(["localhost", "127.0.0.1", "127.5.6.7", "::1"]))
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@given(st.from_regex(r"[a-z]{1,10}\.(com|org|net)", fullmatch=True))
def test_plain_http_to_a_named_host_is_refused_and_https_is_not(host: str) -> None:
    assert route_problem(f"http://{host}/hook") is not None
    assert route_problem(f"https://{host}/hook") is None


@pytest.mark.parametrize("key", ["on", "On", "ON"])
def test_on_written_plain_in_yaml_is_the_key_on_not_yaml_1_1s_true(key: str) -> None:
    text = dump_yaml(make_data()) + f"alerts:\n  - to: mailto:ops@example.com\n    {key}: [FAILED]\n"
    data = load_text(text)
    if key == "on":
        assert canonical_dict(parse_spec(data))["alerts"] == [{"to": "mailto:ops@example.com", "on": ["FAILED"]}]
    else:  # keys are case-sensitive: On is not on
        with pytest.raises(SpecError) as info:
            parse_spec(data)
        assert any(p.key == f"alerts[0].{key}" and "did you mean 'on'" in p.message for p in info.value.problems)


def test_a_new_file_quotes_on_for_yaml_1_1_readers_and_reads_it_back() -> None:
    spec = parse_spec(make_data(alerts=[{"to": "https://e.example/x", "on": ["FAILED"]}]))
    text = dump_yaml(canonical_dict(spec))
    assert "    'on': [FAILED]\n" in text
    assert canonical_dict(parse_spec(load_text(text))) == canonical_dict(spec)
