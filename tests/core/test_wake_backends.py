"""Which wake backend a host gets, and what each one asks of the OS (fakes on PATH
and recorded runners; a real transient timer only where a user session exists)."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.desktop.service_command import Ran, timed_runner
from core.desktop.wake.alarms import Alarm, CannotWake, WakeError, cannot_line
from core.desktop.wake.pmset import PmsetWakes, stamp
from core.desktop.wake.probe import choose, linux_backend
from core.desktop.wake.systemd_timer import SystemdTimers, calendar, parse_listing
from tests.fake_systemd import install

AT = datetime(2026, 12, 7, 13, 59, 30, tzinfo=UTC)


def _on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tools = install(tmp_path / "fake")
    monkeypatch.setenv("PATH", f"{tools.folder}:/usr/bin:/bin")
    return tools.folder


@pytest.mark.parametrize(
    ("version", "session", "reason"),
    [
        ("256", True, None),
        ("254", True, None),
        ("253", True, "systemd 253 is older than 254 and its user session lacks CAP_WAKE_ALARM"),
        ("256", False, "there is no systemd user session (systemctl --user does not answer)"),
    ],
    ids=["systemd_256", "systemd_254", "systemd_253_without_capability", "no_user_session"],
)
def test_linux_gets_user_timers_from_systemd_254_with_a_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str, session: bool, reason: str | None
) -> None:
    folder = _on_path(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_SYSTEMD_VERSION", version)
    if not session:
        (folder / "no-session").touch()
    backend = linux_backend(timed_runner(10), shutil.which)
    assert backend.cannot == reason
    assert isinstance(backend, SystemdTimers) is (reason is None)


def test_without_systemd_or_on_other_systems_the_reason_is_said() -> None:
    never = timed_runner(1)
    assert linux_backend(never, lambda _name: None).cannot == "systemd is not installed"
    assert choose("win32", never, 1000).cannot == "Tidemark cannot wake a machine on win32"
    assert choose("darwin", never, 501).cannot == "pmset schedule wake is not permitted without administrator rights"
    assert isinstance(choose("darwin", never, 0), PmsetWakes)
    assert cannot_line("systemd is not installed") == (
        "This machine cannot be woken for runs: systemd is not installed; missed runs follow the misfire policy."
    )


def test_a_cannot_backend_arms_nothing() -> None:
    backend = CannotWake("not permitted")
    backend.arm("x", AT)
    backend.disarm("x")
    assert (backend.cannot, backend.listing()) == ("not permitted", [])


def test_systemd_timers_arm_list_and_disarm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _on_path(tmp_path, monkeypatch)
    timers = SystemdTimers(timed_runner(10))
    timers.arm("daily", AT)
    timers.arm("daily", AT + timedelta(days=1))  # moved: stopped, then set again
    timers.arm("hourly", AT)
    assert timers.listing() == [
        Alarm("hourly", AT, "tidemark-wake-hourly"),
        Alarm("daily", AT + timedelta(days=1), "tidemark-wake-daily"),
    ]
    timers.disarm("hourly")
    assert [a.schedule_id for a in timers.listing()] == ["daily"]
    assert calendar(AT) == "2026-12-07 13:59:30 UTC"


def test_a_refused_timer_is_one_clear_error() -> None:
    def refusing(argv: Sequence[str]) -> Ran:
        denied = Ran(1, "", "Failed to start transient timer unit: Access denied\n")
        return denied if argv[0] == "systemd-run" else Ran(0)

    with pytest.raises(WakeError, match="could not set the wake timer of daily: Failed to start transient timer"):
        SystemdTimers(refusing).arm("daily", AT)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[]", []),
        ('[{"next": 0, "unit": "tidemark-wake-a.timer"}]', []),
        ('[{"next": 1796651970000000, "unit": "other.timer"}]', []),
        ('[{"next": 1796651970000000, "unit": "tidemark-wake-a.timer"}]', [Alarm("a", AT, "tidemark-wake-a")]),
    ],
    ids=["none", "elapsed", "not_ours", "one"],
)
def test_the_listing_reads_systemds_json(text: str, expected: list[Alarm]) -> None:
    assert parse_listing(text) == expected


def test_a_listing_not_understood_is_an_error() -> None:
    with pytest.raises(WakeError, match="not understood"):
        parse_listing("list-timers: unknown option")


def test_pmset_schedules_cancels_and_lists_in_local_time() -> None:
    calls: list[list[str]] = []
    when = stamp(AT)

    def pmset(argv: Sequence[str]) -> Ran:
        calls.append(list(argv))
        return Ran(0, f"Scheduled power events:\n [0]  wake at {when} by 'pmset'\n")

    wakes = PmsetWakes(pmset)
    wakes.arm("daily", AT)
    assert calls == [["pmset", "schedule", "wake", when]]
    assert wakes.listing() == [Alarm("daily", AT, f"pmset {when}")]
    wakes.disarm("daily")
    assert calls[-1] == ["pmset", "schedule", "cancel", "wake", when]


def _user_session() -> str | None:
    """Why a real timer cannot be tried here, or None when it can."""
    if shutil.which("systemd-run") is None or shutil.which("systemctl") is None:
        return "systemd is not installed"
    done = subprocess.run(["systemctl", "--user", "show-environment"], capture_output=True, timeout=10, check=False)
    if done.returncode != 0:
        return "no systemd user session here (CI runs as root without one)"
    return None


@pytest.mark.skipif(_user_session() is not None, reason=str(_user_session()))
def test_a_real_transient_timer_in_this_user_session() -> None:
    """A real timer a year ahead, listed and then removed (WakeSystem= needs CAP_WAKE_ALARM: systemd >= 254)."""
    backend = linux_backend(timed_runner(10))
    if backend.cannot is not None:
        pytest.skip(backend.cannot)
    sid = f"test-{uuid.uuid4().hex[:8]}"
    at = datetime.now(UTC).replace(microsecond=0) + timedelta(days=365)
    try:
        backend.arm(sid, at)
        assert Alarm(sid, at, f"tidemark-wake-{sid}") in backend.listing()
    finally:
        backend.disarm(sid)
    assert sid not in [a.schedule_id for a in backend.listing()]
