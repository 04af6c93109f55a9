"""``schedctl alerts set|list|test`` (both databases): default routes and SMTP settings set and
listed, bad input refused in one line with exit 2 and nothing changed, and a test alert sent to
real servers on 127.0.0.1 with what came back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.team import secrets
from tests.alert_servers import HookServer, hook_server, smtp_server
from tests.secret_stores import schedctl, secret_store


@pytest.fixture
def hook() -> Iterator[HookServer]:
    with hook_server() as server:
        yield server


def _listing(capsys: pytest.CaptureFixture[str], url: str) -> dict[str, object]:
    status, out, err = schedctl(capsys, "alerts", "list", "--db", url, "--format", "json")
    assert (status, err) == (0, "")
    listed: dict[str, object] = json.loads(out)
    return listed


def test_set_then_list_routes_and_smtp(capsys: pytest.CaptureFixture[str], ledger_url: str) -> None:
    status, out, err = schedctl(
        capsys,
        "alerts",
        "set",
        "https://hooks.example.com/tm",
        "secret:TEAM_HOOK",
        "--on",
        "failed",
        "--db",
        ledger_url,
    )
    assert (status, err) == (0, "")
    assert out == "default routes: 2\n  https://hooks.example.com/tm  on FAILED\n  {secret: TEAM_HOOK}  on FAILED\n"
    args = ("--smtp-host", "smtp.example.com", "--smtp-user", "tm", "--smtp-password-secret", "SMTP_PW")
    status, out, err = schedctl(capsys, "alerts", "set", *args, "--smtp-from", "tm@example.com", "--db", ledger_url)
    assert (status, err) == (0, "")
    assert out == "SMTP: smtp.example.com:587 (starttls, user tm, password from secret SMTP_PW), from tm@example.com\n"
    assert _listing(capsys, ledger_url) == {
        "routes": [
            {"to": "https://hooks.example.com/tm", "on": ["FAILED"]},
            {"to": "{secret: TEAM_HOOK}", "on": ["FAILED"]},
        ],
        "smtp": {
            "host": "smtp.example.com",
            "port": 587,
            "security": "starttls",
            "user": "tm",
            "passwordSecret": "SMTP_PW",
            "from": "tm@example.com",
        },
        "pending": 0,
        "failing": [],
    }
    assert schedctl(capsys, "alerts", "set", "--clear", "--db", ledger_url)[:2] == (0, "default routes: 0\n")
    assert _listing(capsys, ledger_url)["routes"] == []


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        pytest.param(["ftp://x"], "route 'ftp://x': 'ftp://x' is not a route", id="not_a_route"),
        pytest.param(["http://example.com/x"], "plain http to another machine", id="plain_http"),
        pytest.param(["https://a.example/x", "--on", "FAILD"], "--on: unknown state 'FAILD'", id="unknown_state"),
        pytest.param(["https://a.example/x", "https://a.example/x"], "given twice", id="route_twice"),
        pytest.param(["--smtp-port", "25"], "--smtp-host is needed first", id="smtp_without_host"),
        pytest.param(
            ["--smtp-host", "smtp.example.com", "--smtp-security", "none"], "only to this machine", id="smtp_clear"
        ),
        pytest.param(["--smtp-host", "h", "--smtp-password-secret", "PW"], "--smtp-user: a password", id="no_user"),
        pytest.param(["https://a.example/\x1b[2J"], "control character", id="escape_in_route"),
        pytest.param(["--smtp-host", "evil\x1b[2Jhost"], "is not a host name", id="escape_in_smtp_host"),
        pytest.param([], "nothing to set", id="nothing"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], ledger_url: str, argv: list[str], said: str
) -> None:
    assert schedctl(capsys, "alerts", "set", "https://keep.example/x", "--db", ledger_url)[0] == 0
    status, out, err = schedctl(capsys, "alerts", "set", *argv, "--db", ledger_url)
    assert (status, out) == (2, "")
    assert err.startswith("schedctl alerts set: ") and said in err and err.count("\n") == 1
    listed = _listing(capsys, ledger_url)
    assert listed["routes"] == [{"to": "https://keep.example/x", "on": ["FAILED", "UNKNOWN_EFFECT", "MISFIRE_EXPIRED"]}]
    assert listed["smtp"] is None


def test_a_test_alert_says_what_came_back(
    capsys: pytest.CaptureFixture[str], ledger_url: str, hook: HookServer
) -> None:
    status, out, err = schedctl(capsys, "alerts", "test", hook.url, "--db", ledger_url)
    assert (status, out, err) == (0, f"delivered to {hook.url}: HTTP 200 OK\n", "")
    [got] = hook.received
    assert got.body["state"] == "TEST" and got.key is not None and got.key.endswith(":TEST")
    hook.status = 500
    status, out, err = schedctl(capsys, "alerts", "test", hook.url, "--db", ledger_url)
    assert (status, out) == (1, f"not delivered to {hook.url}: HTTP 500 Internal Server Error\n")
    hook.hang = True
    status, out, err = schedctl(capsys, "alerts", "test", hook.url, "--timeout", "0.3", "--db", ledger_url)
    assert (status, out) == (1, f"not delivered to {hook.url}: timed out after 0.3 s\n")


def test_a_test_mail_goes_through_the_ledgers_smtp_settings(
    capsys: pytest.CaptureFixture[str], ledger_url: str
) -> None:
    with smtp_server() as box:
        args = ("--smtp-host", "127.0.0.1", "--smtp-port", str(box.port), "--smtp-security", "none")
        assert schedctl(capsys, "alerts", "set", *args, "--db", ledger_url)[0] == 0
        status, out, err = schedctl(capsys, "alerts", "test", "mailto:ops@example.com", "--db", ledger_url)
        assert (status, err) == (0, "")
        assert out.startswith("delivered to mailto:ops@example.com: SMTP 250")
        [message] = box.messages
        assert message["Subject"] == "Tidemark: a test alert"


def test_a_test_to_a_secret_route_never_prints_its_value(
    capsys: pytest.CaptureFixture[str],
    ledger_url: str,
    hook: HookServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with secret_store("file", tmp_path / "config", monkeypatch):
        status, out, _ = schedctl(capsys, "alerts", "test", "secret:TEAM_HOOK", "--db", ledger_url)
        assert status == 1 and out.startswith("not delivered to {secret: TEAM_HOOK}: secret TEAM_HOOK is not set")
        secrets.store("TEAM_HOOK", hook.url + "?token=s3cr3t")
        hook.status = 500
        status, out, err = schedctl(capsys, "alerts", "test", "secret:TEAM_HOOK", "--db", ledger_url)
    assert (status, out) == (1, "not delivered to {secret: TEAM_HOOK}: HTTP 500 Internal Server Error\n")
    assert "s3cr3t" not in out + err
    assert hook.received[0].path == "/hook?token=s3cr3t"
