"""The engine as a launchd agent on macOS (core.desktop.launchd and ``schedctl engine install-service`` there):
the plist read back with plistlib, on any platform, with the platform given rather than guessed."""

from __future__ import annotations

import plistlib
from collections.abc import Sequence
from pathlib import Path

import pytest

from core import cli
from core.desktop import service
from core.desktop.launchd import (
    LABEL,
    LaunchAgentSetup,
    agent_installed,
    install_agent,
    start_installed_agent,
    uninstall_agent,
)
from core.desktop.service import Ran, ServiceSetup, engine_argv, install_service, team_options

SCHEDCTL = ("/Users/ada/Tidemark app/.venv/bin/schedctl",)


class Recorder:
    def __init__(self, answer: Ran | None = None) -> None:
        self.answer = answer or Ran(0)
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str]) -> Ran:
        self.calls.append(tuple(argv))
        return self.answer


def setup(tmp_path: Path, runner: Recorder | None = None) -> LaunchAgentSetup:
    return LaunchAgentSetup(
        agent_dir=tmp_path / "Library" / "LaunchAgents",
        log_dir=tmp_path / "Library" / "Logs" / "Tidemark",
        schedctl=SCHEDCTL,
        runner=runner or Recorder(),
        uid=501,
    )


def load(path: Path) -> dict[str, object]:
    with path.open("rb") as f:
        loaded = plistlib.load(f)
    assert isinstance(loaded, dict)
    return loaded


def test_the_agent_runs_the_engine_at_login_and_keeps_it_alive(tmp_path: Path) -> None:
    where = setup(tmp_path)
    result = install_agent("postgresql+psycopg://ops@db.internal/tidemark", where)
    assert result.ok and result.written
    assert result.unit_path == tmp_path / "Library" / "LaunchAgents" / "io.github.tidemark.Tidemark.engine.plist"
    agent = load(result.unit_path)
    assert agent["Label"] == LABEL == "io.github.tidemark.Tidemark.engine"
    assert agent["ProgramArguments"] == [*SCHEDCTL, "engine", "run"]
    assert agent["EnvironmentVariables"] == {"SCHEDULER_DB_URL": "postgresql+psycopg://ops@db.internal/tidemark"}
    assert agent["RunAtLoad"] is True and agent["KeepAlive"] is True
    logs = tmp_path / "Library" / "Logs" / "Tidemark"
    assert agent["StandardOutPath"] == str(logs / "engine.log")
    assert agent["StandardErrorPath"] == str(logs / "engine.err.log")
    assert isinstance(agent["ThrottleInterval"], int) and isinstance(agent["ExitTimeOut"], int)
    assert logs.is_dir()
    assert result.unit_path.stat().st_mode & 0o777 == 0o600
    assert result.lines[0] == f"installed {result.unit_path}"
    assert result.lines[-1] == f"start it now with: launchctl bootstrap gui/501 {result.unit_path}"
    assert where.runner.calls == []  # type: ignore[attr-defined]  # nothing is started behind the person's back
    assert agent_installed(where)


@pytest.mark.parametrize(
    "label",
    [
        pytest.param("team=night shift", id="space"),
        pytest.param("""quote=it's "on" """, id="quotes"),
        pytest.param("path=C:\\Tidemark\\%d & <x>", id="backslash_percent_markup"),
    ],
)
def test_program_arguments_round_trip_exactly(tmp_path: Path, label: str) -> None:
    """No shell and no systemd quoting: what engine run gets is what was given."""
    options = team_options(allow_second=True, labels=[tuple(label.split("=", 1))], trusts=["o'brien", "ada lovelace"])
    where = setup(tmp_path)
    result = install_agent("/Users/ada/My Ledgers/100%.db", where, options)
    agent = load(result.unit_path)
    expected = engine_argv(where, options)
    assert agent["ProgramArguments"] == expected
    assert agent["EnvironmentVariables"] == {"SCHEDULER_DB_URL": "/Users/ada/My Ledgers/100%.db"}
    assert expected[-7:] == ["--allow-second", "--label", label, "--trust", "o'brien", "--trust", "ada lovelace"]


def test_the_agent_gets_the_same_command_as_the_systemd_unit(tmp_path: Path) -> None:
    options = team_options(labels=[("gpu", "yes")], trusts=["alice"])
    unit = ServiceSetup(unit_dir=tmp_path / "systemd", schedctl=SCHEDCTL, runner=Recorder(Ran(0, "running\n")))
    install_service("/srv/t.db", unit, options)
    agent = load(install_agent("/srv/t.db", setup(tmp_path), options).unit_path)
    assert agent["ProgramArguments"] == engine_argv(unit, options)
    assert "--label gpu=yes --trust alice\n" in unit.unit_path.read_text()


def test_reinstalling_another_command_says_how_to_restart(tmp_path: Path) -> None:
    where = setup(tmp_path)
    install_agent("/srv/a.db", where)
    same = install_agent("/srv/a.db", where)
    assert not any("restart" in line for line in same.lines)
    other = install_agent("/srv/b.db", where)
    assert "to restart a running agent with the new command: launchctl bootout gui/501/" + LABEL in other.lines
    assert load(other.unit_path)["EnvironmentVariables"] == {"SCHEDULER_DB_URL": "/srv/b.db"}


def test_uninstall_removes_the_plist_and_says_how_to_stop_it(tmp_path: Path) -> None:
    where = setup(tmp_path)
    path = install_agent("/srv/a.db", where).unit_path
    result = uninstall_agent(where)
    assert result.ok and not path.exists() and not agent_installed(where)
    assert result.lines == (f"removed {path}", f"stop a running agent with: launchctl bootout gui/501/{LABEL}")
    assert uninstall_agent(where).lines == (f"nothing to remove: {path} does not exist",)


def test_the_window_hands_over_by_loading_and_kickstarting_the_agent(tmp_path: Path) -> None:
    """Installed from the window's close question, the agent is not loaded before the next login."""
    runner = Recorder()
    where = setup(tmp_path, runner)
    assert start_installed_agent(where).ok
    assert runner.calls == [
        ("launchctl", "bootstrap", "gui/501", str(where.unit_path)),
        ("launchctl", "kickstart", f"gui/501/{LABEL}"),
    ]
    refused = start_installed_agent(setup(tmp_path, Recorder(Ran(113, "", "Could not find service\n"))))
    assert not refused.ok
    assert refused.lines == (f"`launchctl kickstart gui/501/{LABEL}` failed: Could not find service",)


@pytest.fixture
def on_macos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """schedctl as on a Mac: the service module's platform answer, and a home folder of the test's own."""
    monkeypatch.setattr(service, "running_on", lambda: "darwin")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path


def test_cli_install_service_on_macos_writes_the_agent(on_macos: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["engine", "install-service", "--db", str(on_macos / "t.db"), "--label", "site=home office"]
    status = cli.main([*argv, "--trust", "bob"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    plist = on_macos / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    lines = out.splitlines()
    assert lines[0] == f"installed {plist}"
    assert lines[-1].startswith("start it now with: launchctl bootstrap gui/")
    program = load(plist)["ProgramArguments"]
    assert isinstance(program, list)
    db = str(on_macos / "t.db")
    assert program[-6:] == ["engine", "run", "--label", "site=home office", "--trust", "bob"]
    assert load(plist)["EnvironmentVariables"] == {"SCHEDULER_DB_URL": db}
    assert not (on_macos / "config" / "systemd").exists()
    assert service.service_installed()
    assert cli.main(["engine", "uninstall-service"]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines()[0] == f"removed {plist}"
    assert not plist.exists() and not service.service_installed()


def test_a_service_can_serve_metrics(on_macos: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/metrics.md: Prometheus scrapes the engine the service runs; its port goes into the command."""
    assert cli.main(["engine", "install-service", "--db", "/srv/t.db", "--metrics-port", "9464", "--allow-second"]) == 0
    capsys.readouterr()
    program = load(on_macos / "Library" / "LaunchAgents" / f"{LABEL}.plist")["ProgramArguments"]
    assert isinstance(program, list)
    assert program[-3:] == ["--metrics-port", "9464", "--allow-second"]
    assert cli.main(["engine", "install-service", "--metrics-port", "http"]) == 2
    assert "--metrics-port" in capsys.readouterr().err
