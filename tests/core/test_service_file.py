"""``schedctl engine install-service`` and what it writes and says about the ledger's password:
the service's file is 0600 from its first byte (never made readable and chmod-ed after), no line
it prints shows the password, every value reaches systemd exactly, and a value with a line break
(which would start a setting of its own in the unit) is refused before anything is written."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from core import cli
from core.desktop import service
from core.desktop.launchd import LaunchAgentSetup, install_agent
from core.desktop.service import UNIT_NAME, Ran, ServiceSetup, install_service, team_options
from tests.core import systemd_reader

PASSWORD = "S3cretPW"
URL = f"postgresql+psycopg://alice:{PASSWORD}@db.internal/tidemark"
ROOT = Path(__file__).resolve().parents[2]


def _runner(answers: dict[str, Ran] | None = None) -> service.Runner:
    def run(argv: Sequence[str]) -> Ran:
        return (answers or {}).get(argv[2], Ran(0, "running\n" if argv[2] == "is-system-running" else ""))

    return run


def _setup(
    tmp_path: Path, runner: service.Runner, schedctl: str = "/opt/t/schedctl", has_systemctl: bool = True
) -> ServiceSetup:
    return ServiceSetup(tmp_path / "systemd" / "user", (schedctl,), runner, has_systemctl)


# Runs in a process of its own: an audit hook sees every open, chmod and rename, and notes the
# mode of any file in the folder at that moment; umask 022 makes a plainly created file 0644.
_WATCH = """
import json, os, stat, sys
from pathlib import Path

folder, kind, url = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
os.umask(0o022)
seen = []

def hook(event, args):
    if event not in ("open", "os.chmod", "os.rename"):
        return
    for arg in args[: 2 if event == "os.rename" else 1]:  # the paths (or the fd of a chmod)
        if isinstance(arg, int):
            seen.append(stat.S_IMODE(os.fstat(arg).st_mode))
        elif isinstance(arg, (str, os.PathLike)) and str(arg).startswith(str(folder)) and os.path.isfile(arg):
            seen.append(stat.S_IMODE(os.stat(arg).st_mode))

sys.addaudithook(hook)
from core.desktop.launchd import LaunchAgentSetup, install_agent
from core.desktop.service import Ran, ServiceSetup, install_service

def systemctl(fail):
    return lambda argv: Ran(1 if argv[2] == fail else 0, "running\\n" if argv[2] == "is-system-running" else "")

units = ServiceSetup(unit_dir=folder, schedctl=("/opt/t/schedctl",), has_systemctl=True, runner=systemctl(""))
if kind == "systemd":
    install_service(url, units)
elif kind == "systemd_rollback":
    install_service(url, units)
    install_service(url + "2", ServiceSetup(folder, ("/opt/t/schedctl",), systemctl("daemon-reload"), True))
else:
    install_agent(url, LaunchAgentSetup(folder, folder / "logs", ("/opt/t/schedctl",), uid=501))
final = [stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir() if p.is_file()]
print(json.dumps({"seen": seen, "final": final}))
"""


@pytest.mark.parametrize("kind", ["systemd", "systemd_rollback", "launchd"])
def test_the_service_file_is_never_readable_by_others(tmp_path: Path, kind: str) -> None:
    """Another user read the password from a unit made 0644 and chmod-ed after, in 5 of 8 tries:
    at every open, chmod and rename of a file in the folder, it is already 0600."""
    folder = tmp_path / "units"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _WATCH, str(folder), kind, URL],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["seen"], "the hook saw no file of the folder"
    assert {oct(mode) for mode in found["seen"]} == {"0o600"}
    assert [oct(mode) for mode in found["final"]] == ["0o600"], "one file, no temporary left"


def test_no_line_install_service_prints_shows_the_password(tmp_path: Path) -> None:
    systemd = install_service(URL, _setup(tmp_path, _runner()))
    failed = install_service(URL, _setup(tmp_path / "b", _runner({"enable": Ran(1, "", "denied\n")})))
    without = install_service(URL, _setup(tmp_path / "c", _runner(), has_systemctl=False))
    launchd = install_agent(URL, LaunchAgentSetup(tmp_path / "d", tmp_path / "logs", ("/opt/t/schedctl",), uid=501))
    for result in (systemd, failed, without, launchd):
        shown = "\n".join([*result.lines, result.instead or ""])
        assert PASSWORD not in shown, shown
    assert systemd.lines[1] == (
        "the engine for postgresql+psycopg://alice:***@db.internal/tidemark is enabled and started: "
        "it runs whenever you are logged in"
    )
    assert without.instead is not None
    assert without.instead.startswith(
        "SCHEDULER_DB_URL='postgresql+psycopg://alice:***@db.internal/tidemark' nohup /opt/t/schedctl engine run "
    )
    assert failed.instead == without.instead
    # The files themselves hold it: the service needs it.
    assert PASSWORD in systemd.unit_path.read_text(encoding="utf-8")


def test_the_cli_never_prints_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no systemctl: the fallback lines
    assert cli.main(["engine", "install-service", "--db", URL]) == 1
    monkeypatch.setattr(service, "running_on", lambda: "darwin")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cli.main(["engine", "install-service", "--db", URL]) == 0
    out, err = capsys.readouterr()
    assert "alice:***@db.internal" in out and PASSWORD not in out + err


@pytest.mark.parametrize(
    "labels",
    [
        pytest.param([("site", "100% $HOME %h")], id="percent_and_dollar"),
        pytest.param([("room", "a \"b\" \\c 'd'")], id="quotes_and_backslash"),
        pytest.param([("path", "/srv/${USER}/x;y")], id="braces_and_semicolon"),
    ],
)
def test_the_service_runs_exactly_the_command_and_ledger_given(tmp_path: Path, labels: list[tuple[str, str]]) -> None:
    db = '/srv/my ledgers/100% $HOME \\ "x".db'
    options = team_options(labels=labels, trusts=["bob"])
    result = install_service(db, _setup(tmp_path, _runner(), "/bin/echo"), options=options)
    assert result.ok, result.lines
    unit = systemd_reader.settings(result.unit_path.read_text(encoding="utf-8"))
    argv = ["/bin/echo", "engine", "run", *options]
    [exec_start] = unit["Service.ExecStart"]
    assert systemd_reader.command(exec_start, {"HOME": "/home/ada", "USER": "ada"}) == argv
    assert systemd_reader.environment(unit["Service.Environment"]) == {"SCHEDULER_DB_URL": db}
    loaded = systemd_reader.analyzed(result.unit_path.parent, UNIT_NAME)
    if loaded is not None:
        assert [systemd_reader.dumped_command(line) for line in loaded[UNIT_NAME]["Command Line"]] == [argv]
        assert loaded[UNIT_NAME]["Environment"] == [f"SCHEDULER_DB_URL={db}"]
        assert loaded[UNIT_NAME]["Description"] == [f"Tidemark engine for {db}"]


_CANNOT = "a service's file cannot hold one; nothing was installed"


@pytest.mark.parametrize(
    ("argv", "env_db", "said"),
    [
        pytest.param(
            ["--db", "/srv/t.db\nExecStartPre=/bin/sh -c id\nUser=root"],
            None,
            f"--db has a line break: {_CANNOT}",
            id="db_line_break",
        ),
        pytest.param([], "/srv/t.db\rUser=root", f"SCHEDULER_DB_URL has a line break: {_CANNOT}", id="env_db"),
        pytest.param(
            ["--db", "/srv/t.db", "--label", "gpu=yes\nUser=root"],
            None,
            "argument --label: 'gpu=yes\\nUser=root' has a line break: a label or a name is one line of text "
            "(see schedctl engine install-service --help)",
            id="label_line_break",
        ),
        pytest.param(
            ["--db", "/srv/t.db", "--trust", "bob\x1b"],
            None,
            "argument --trust: 'bob\\x1b' has a control character (U+001B): a label or a name is one line of "
            "text (see schedctl engine install-service --help)",
            id="trust_escape",
        ),
    ],
)
def test_a_value_with_a_line_break_is_refused_before_anything_is_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    env_db: str | None,
    said: str,
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path))
    if env_db is None:
        monkeypatch.delenv("SCHEDULER_DB_URL", raising=False)
    else:
        monkeypatch.setenv("SCHEDULER_DB_URL", env_db)
    for platform in ("linux", "darwin"):
        monkeypatch.setattr(service, "running_on", lambda platform=platform: platform)
        status = cli.main(["engine", "install-service", *argv])
        out, err = capsys.readouterr()
        assert (status, out, err) == (2, "", f"schedctl engine install-service: {said}\n")
    assert list(tmp_path.iterdir()) == []


def test_a_caller_of_install_service_gets_the_refusal_and_nothing_is_written(tmp_path: Path) -> None:
    """The window's close dialog calls install_service itself: the same refusal, as its result."""
    result = install_service("/srv/t.db", _setup(tmp_path, _runner()), options=["--label", "a=b\nc"])
    assert not result.ok and not result.written
    assert result.lines == (f"--label 'a=b\\nc' has a line break: {_CANNOT}",)
    assert not (tmp_path / "systemd").exists()
