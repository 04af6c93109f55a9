"""The systemd user service (core.desktop.service and ``schedctl engine install-service``):
the unit text and the systemctl calls, with a recording runner instead of systemd."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from core import cli
from core.desktop.service import (
    UNIT_NAME,
    Ran,
    ServiceSetup,
    install_service,
    pinned_db,
    service_installed,
    uninstall_service,
)

SCHEDCTL = ("/opt/tidemark/.venv/bin/schedctl",)


class Recorder:
    """Plays systemctl: answers from a table by subcommand, records every call."""

    def __init__(self, answers: dict[str, Ran] | None = None) -> None:
        self.answers = answers or {}
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str]) -> Ran:
        self.calls.append(tuple(argv))
        return self.answers.get(argv[2], Ran(0, "running\n" if argv[2] == "is-system-running" else ""))


def setup(tmp_path: Path, runner: Recorder, has_systemctl: bool = True) -> ServiceSetup:
    return ServiceSetup(
        unit_dir=tmp_path / "systemd" / "user", schedctl=SCHEDCTL, runner=runner, has_systemctl=has_systemctl
    )


def test_install_writes_the_unit_and_enables_it(tmp_path: Path) -> None:
    runner = Recorder()
    result = install_service("postgresql+psycopg://ops@db.internal/tidemark", setup(tmp_path, runner))
    assert result.ok and result.written
    assert runner.calls == [
        ("systemctl", "--user", "is-system-running"),
        ("systemctl", "--user", "daemon-reload"),
        ("systemctl", "--user", "enable", "--now", UNIT_NAME),
    ]
    text = result.unit_path.read_text()
    assert result.unit_path == tmp_path / "systemd" / "user" / "tidemark-engine.service"
    assert "ExecStart=/opt/tidemark/.venv/bin/schedctl engine run\n" in text
    assert "Environment=SCHEDULER_DB_URL=postgresql+psycopg://ops@db.internal/tidemark\n" in text
    assert "Restart=on-failure\n" in text and "WantedBy=default.target\n" in text
    assert result.unit_path.stat().st_mode & 0o777 == 0o600
    assert result.lines[0] == f"installed {result.unit_path}"
    assert service_installed(setup(tmp_path, runner))


@pytest.mark.parametrize(
    ("db", "expected"),
    [
        pytest.param(
            "/srv/my ledgers/100%.db", 'Environment="SCHEDULER_DB_URL=/srv/my ledgers/100%%.db"', id="space_and_percent"
        ),
        pytest.param("sqlite:////srv/t.db", "Environment=SCHEDULER_DB_URL=sqlite:////srv/t.db", id="sqlite_url"),
        pytest.param(
            '/srv/a "b" \\c $HOME.db',
            'Environment="SCHEDULER_DB_URL=/srv/a \\"b\\" \\\\c $HOME.db"',
            id="quote_backslash_dollar",
        ),
    ],
)
def test_the_ledger_is_quoted_for_systemd(tmp_path: Path, db: str, expected: str) -> None:
    result = install_service(db, setup(tmp_path, Recorder()))
    assert expected + "\n" in result.unit_path.read_text()


def test_a_password_is_never_on_the_service_command_line(tmp_path: Path) -> None:
    """ExecStart is what ``ps`` shows every user; the ledger (and its password) is in the unit's
    environment, which only this user and root read."""
    result = install_service("postgresql+psycopg://ops:s3cret@db.internal/tidemark", setup(tmp_path, Recorder()))
    text = result.unit_path.read_text()
    [exec_start] = [line for line in text.splitlines() if line.startswith("ExecStart=")]
    [description] = [line for line in text.splitlines() if line.startswith("Description=")]
    assert "s3cret" not in exec_start and "s3cret" not in description
    assert "SCHEDULER_DB_URL=postgresql+psycopg://ops:s3cret@db.internal/tidemark" in text


def test_relative_and_default_ledgers_are_pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert pinned_db("ledger.db") == str(tmp_path / "ledger.db")
    assert pinned_db("sqlite:///rel.db") == f"sqlite:///{tmp_path / 'rel.db'}"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert Path(pinned_db(None)).is_absolute()


@pytest.mark.parametrize(
    ("has_systemctl", "answers", "why"),
    [
        pytest.param(False, {}, "systemd is not available on this machine (no systemctl)", id="no_systemd"),
        pytest.param(
            True,
            {"is-system-running": Ran(1, "", "Failed to connect to bus: No medium found\n")},
            "there is no systemd user session here (Failed to connect to bus: No medium found)",
            id="no_user_bus",
        ),
        pytest.param(
            True,
            {"is-system-running": Ran(1, "offline\n", "")},
            "there is no systemd user session here (offline)",
            id="user_manager_offline",
        ),
    ],
)
def test_without_systemd_nothing_is_written_and_the_command_is_offered(
    tmp_path: Path, has_systemctl: bool, answers: dict[str, Ran], why: str
) -> None:
    runner = Recorder(answers)
    result = install_service("/srv/t.db", setup(tmp_path, runner, has_systemctl))
    assert not result.ok and not result.written
    assert result.lines == (f"{why}; nothing was installed",)
    assert (
        result.instead
        == "SCHEDULER_DB_URL=/srv/t.db nohup /opt/tidemark/.venv/bin/schedctl engine run >>tidemark-engine.log 2>&1 &"
    )
    assert not result.unit_path.exists()
    assert all(call[2] == "is-system-running" for call in runner.calls)


def test_a_degraded_session_still_counts(tmp_path: Path) -> None:
    runner = Recorder({"is-system-running": Ran(1, "degraded\n", "")})
    assert install_service("/srv/t.db", setup(tmp_path, runner)).ok


def test_enable_failing_is_reported_and_leaves_no_unit(tmp_path: Path) -> None:
    runner = Recorder({"enable": Ran(1, "", "Failed to enable unit: Access denied\n")})
    result = install_service("/srv/t.db", setup(tmp_path, runner))
    assert not result.ok and not result.written
    assert result.lines == (
        f"`systemctl --user enable --now {UNIT_NAME}` failed: "
        "Failed to enable unit: Access denied; nothing was installed",
    )
    assert not result.unit_path.exists()


def test_a_failed_reinstall_keeps_the_unit_that_was_there(tmp_path: Path) -> None:
    assert install_service("/srv/old.db", setup(tmp_path, Recorder())).ok
    unit = setup(tmp_path, Recorder()).unit_path
    before = unit.read_text(encoding="utf-8")
    failing = Recorder({"daemon-reload": Ran(1, "", "Failed to reload\n")})
    result = install_service("/srv/new.db", setup(tmp_path, failing))
    assert not result.ok
    assert unit.read_text(encoding="utf-8") == before and "/srv/old.db" in before


def test_uninstall_stops_removes_and_reloads(tmp_path: Path) -> None:
    runner = Recorder()
    install_service("/srv/t.db", setup(tmp_path, runner))
    runner.calls.clear()
    result = uninstall_service(setup(tmp_path, runner))
    assert result.ok and not result.unit_path.exists()
    assert runner.calls == [
        ("systemctl", "--user", "is-system-running"),
        ("systemctl", "--user", "disable", "--now", UNIT_NAME),
        ("systemctl", "--user", "daemon-reload"),
    ]
    again = uninstall_service(setup(tmp_path, runner))
    assert again.ok and again.lines == (f"nothing to remove: {result.unit_path} does not exist",)


def test_cli_install_service_without_systemd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no systemctl on PATH
    status = cli.main(["engine", "install-service", "--db", str(tmp_path / "t.db")])
    out, err = capsys.readouterr()
    assert status == 1
    assert err.splitlines() == [
        "schedctl engine install-service: systemd is not available on this machine (no systemctl); "
        "nothing was installed"
    ]
    assert out.startswith(f"run the engine yourself instead:\n  SCHEDULER_DB_URL={tmp_path / 't.db'} nohup ")
    assert "engine run >>" in out
    assert not (tmp_path / "config" / "systemd" / "user" / UNIT_NAME).exists()


def test_cli_uninstall_service_when_nothing_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    status = cli.main(["engine", "uninstall-service"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    assert out == f"nothing to remove: {tmp_path / 'config' / 'systemd' / 'user' / UNIT_NAME} does not exist\n"


def test_reinstalling_for_another_ledger_restarts_the_service(tmp_path: Path) -> None:
    runner = Recorder()
    install_service("/srv/a.db", setup(tmp_path, runner))
    runner.calls.clear()
    install_service("/srv/a.db", setup(tmp_path, runner))
    assert ("systemctl", "--user", "try-restart", UNIT_NAME) not in runner.calls, "same unit: nothing to restart"
    result = install_service("/srv/b.db", setup(tmp_path, runner))
    assert runner.calls[-1] == ("systemctl", "--user", "try-restart", UNIT_NAME)
    assert "Environment=SCHEDULER_DB_URL=/srv/b.db\n" in result.unit_path.read_text()


def test_a_team_engine_service_runs_with_its_labels_and_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a team ledger another engine is always live: the service's engine needs --allow-second,
    and keeps its labels and whom it trusts (docs/ledger.md, "Teams")."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no systemctl: the command is printed instead
    argv = ["engine", "install-service", "--db", "/srv/t.db", "--allow-second", "--label", "gpu=yes"]
    status = cli.main([*argv, "--trust", "alice", "--trust", "bob"])
    out, _ = capsys.readouterr()
    assert status == 1
    assert "SCHEDULER_DB_URL=/srv/t.db nohup " in out
    assert "engine run --allow-second --label gpu=yes --trust alice --trust bob " in out
    result = install_service("/srv/t.db", setup(tmp_path, Recorder()), options=["--allow-second", "--label", "a b=1"])
    assert 'engine run --allow-second --label "a b=1"\n' in result.unit_path.read_text()


def test_a_bad_label_for_the_service_is_refused_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    status = cli.main(["engine", "install-service", "--db", "/srv/t.db", "--label", "host=other"])
    _, err = capsys.readouterr()
    assert status == 2 and len(err.strip().splitlines()) == 1 and "host" in err
    assert not (tmp_path / "config" / "systemd").exists()
