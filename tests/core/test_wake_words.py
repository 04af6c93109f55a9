"""What ``wakeSystem`` shows before anything is published: the line of ``schedctl explain``
(the machine wakes, or cannot and why) and the wake of each row in the preview."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.desktop.service_command import timed_runner
from core.desktop.wake import probe
from core.desktop.wake.alarms import CannotWake, WakeBackend
from core.desktop.wake.systemd_timer import SystemdTimers
from core.explain.summary import explain
from core.recurrence import preview as preview_module
from core.recurrence.preview import build_preview
from core.render.jsonfmt import render_json
from core.spec.validation import parse_spec
from tests.core.conftest import Run

NOW = datetime(2026, 12, 7, tzinfo=UTC)
NO_SESSION = CannotWake("there is no systemd user session (systemctl --user does not answer)")


def _spec(wake: bool = True) -> dict[str, object]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": "morning",
        "revision": 1,
        "timeZone": "America/New_York",
        "rule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
        "start": "2026-11-01T00:00:00",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "exclude": ["2026-12-08"],
        "wakeSystem": wake,
    }


@pytest.mark.parametrize(
    ("backend", "line"),
    [
        (
            NO_SESSION,
            "This machine cannot be woken for runs: there is no systemd user session (systemctl --user does not "
            "answer); missed runs follow the misfire policy.",
        ),
        (SystemdTimers(timed_runner(1)), "It wakes this machine 30 seconds before each run (systemd user timer)."),
        (None, "It asks to wake its machine 30 seconds before each run."),
    ],
    ids=["cannot", "systemd", "unknown_host"],
)
def test_explain_ends_with_the_wake_in_one_line(backend: WakeBackend | None, line: str) -> None:
    text = explain(parse_spec(_spec()), NOW, wake=backend)
    assert text.endswith(" " + line)
    assert "wake" not in explain(parse_spec(_spec(wake=False)), NOW, wake=NO_SESSION)


def test_schedctl_explain_says_the_machine_cannot_wake(
    run: Run, spec_file: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probe, "host_backend", lambda: NO_SESSION)
    status, out, err = run("explain", spec_file(json.dumps(_spec())), "--now", "2026-12-07T00:00:00Z")
    assert (status, err) == (0, "")
    assert out.count("This machine cannot be woken for runs: there is no systemd user session") == 1


def test_the_preview_table_says_when_the_machine_wakes(run: Run, spec_file: Callable[..., str]) -> None:
    path = spec_file(json.dumps(_spec()))
    status, out, _ = run("preview", path, "--from", "2026-12-07T00:00:00Z", "--count", "2")
    lines = out.splitlines()
    assert status == 0
    assert lines[2].endswith("✓ scheduled  wakes this machine at 08:59:30 EST")
    assert "wakes" not in lines[3]  # the excluded day never runs


def test_preview_json_has_wake_at_only_with_wake_system(run: Run, spec_file: Callable[..., str]) -> None:
    for wake, expected in ((True, ["2026-12-07T13:59:30Z", None]), (False, None)):
        path = spec_file(json.dumps(_spec(wake)))
        _, out, _ = run("preview", path, "--from", "2026-12-07", "--count", "2", "--format", "json")
        rows = json.loads(out)["occurrences"]
        assert [r.get("wakeAt") for r in rows] == (expected or [None, None])
        assert all(("wakeAt" in r) is wake for r in rows)


def test_the_written_json_is_the_previews_own() -> None:
    built = build_preview(parse_spec(_spec()), NOW, count=3)
    assert json.loads(render_json(built)) == built.to_json()
    assert preview_module.wake_time(built.rows[1]) is None


@settings(max_examples=60, deadline=None)
@given(
    start=st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2028, 12, 31), timezones=st.just(UTC)),
    zone=st.sampled_from(["America/New_York", "Australia/Lord_Howe", "Europe/London", "UTC"]),
    jitter=st.sampled_from(["PT0S", "PT7M"]),
)
def test_each_row_wakes_thirty_seconds_before_its_dispatch_or_not_at_all(
    start: datetime, zone: str, jitter: str
) -> None:
    """Read back from the JSON: a row that runs wakes the machine 30 s before its dispatchUtc; one that does
    not run (a skipped gap or fold, an excluded date) has no wake."""
    data = {**_spec(), "timeZone": zone, "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "jitter": jitter}
    built = build_preview(parse_spec(data), start, count=20)
    for row in json.loads(render_json(built))["occurrences"]:
        runs = row["status"] in ("SCHEDULED", "SHIFTED")
        if not runs:
            assert row["wakeAt"] is None
            continue
        dispatch = datetime.strptime(row["dispatchUtc"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert row["wakeAt"] == (dispatch - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
