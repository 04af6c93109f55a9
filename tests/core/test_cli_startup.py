"""``schedctl`` imports what the command needs and nothing else: checking a spec, previewing it or
explaining it loads neither the ledger (SQLAlchemy), the engine, the holidays data (for a spec
without a business calendar), the calendar writer nor Qt; ``--help`` not even the spec model.
Counted by the modules a fresh process holds after the command, not by timing it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "startup",
    "revision": 1,
    "timeZone": "America/New_York",
    "rule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0",
    "start": "2026-01-01T00:00:00",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
}
#: A command's modules are listed after this line of the child's output.
MARK = "--- modules ---"
CHILD = f"""
import sys
from core.cli.app import main
status = main(sys.argv[1:])
print({MARK!r})
print("\\n".join(sorted(sys.modules)))
sys.exit(status)
"""
HEAVY = ("sqlalchemy", "alembic", "holidays", "icalendar", "PySide6", "core.ledger", "core.engine")
#: Not needed to check a JSON spec: PyYAML (and its writer), the secrets file's folder, a traceback
#: and the masking of its URLs, the near-match finder (for a wrong name), the alert routes' rules
#: (for a spec without alerts), the check of pinned zone bytes, the wake backends and subprocess
#: (for a spec without wakeSystem), the settling of business periods (for a spec without businessPeriod).
UNUSED = (
    "yaml",
    "core.spec.yaml_text",
    "ruamel",
    "platformdirs",
    "traceback",
    "core.team.redact",
    "difflib",
    "core.team.alert_routes",
    "core.time.tzif_check",
    "core.desktop.wake",
    "subprocess",
    "core.recurrence.periods",
)


def _modules(*argv: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split(MARK + "\n", 1)[1].split())


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in names or any(m.startswith(n + ".") for n in names))


@pytest.mark.parametrize(
    ("argv", "absent"),
    [
        pytest.param(
            ["validate", "{spec}"],
            (
                *HEAVY,
                *UNUSED,
                "core.render.jsonfmt",
                "core.render.table",
                "core.recurrence.preview",
                "core.cli.ledger_commands",
            ),
            id="validate",
        ),
        pytest.param(
            ["preview", "{spec}", "--count", "5", "--format", "json", "--now", "2026-03-05T12:00:00Z"],
            (*HEAVY, *UNUSED, "core.render.ics", "core.render.table", "core.cli.import_commands"),
            id="preview_json",
        ),
        pytest.param(
            ["preview", "{spec}", "--count", "5", "--now", "2026-03-05T12:00:00Z"],
            (*HEAVY, *UNUSED, "core.render.ics", "core.cli.engine_commands"),
            id="preview_table",
        ),
        pytest.param(["explain", "{spec}", "--now", "2026-03-05T12:00:00Z"], (*HEAVY, *UNUSED), id="explain"),
        pytest.param(
            ["--help"],
            (*HEAVY, *UNUSED, "pydantic", "dateutil", "core.spec.model", "core.cli.spec_commands"),
            id="help",
        ),
    ],
)
def test_a_command_imports_only_what_it_needs(tmp_path: Path, argv: list[str], absent: tuple[str, ...]) -> None:
    path = tmp_path / "startup.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    modules = _modules(*(a.format(spec=path) for a in argv))
    assert _loaded(modules, absent) == []


def test_a_business_calendar_brings_the_holidays_data(tmp_path: Path) -> None:
    """The counting sees what a command does load: a spec with a calendar reads the holidays."""
    path = tmp_path / "business.json"
    path.write_text(
        json.dumps(SPEC | {"businessCalendar": {"holidays": ["US-NY"]}, "holidayPolicy": "SKIP"}), encoding="utf-8"
    )
    assert "holidays" in _modules("validate", str(path))


def test_a_yaml_spec_brings_the_yaml_reader(tmp_path: Path) -> None:
    """The same spec written as YAML is read by PyYAML, and checks the same."""
    path = tmp_path / "startup.yaml"
    path.write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in SPEC.items()), encoding="utf-8")
    modules = _modules("validate", str(path))
    assert {"yaml", "core.spec.yaml_text"} <= modules


def test_only_the_program_freezes_what_it_holds(tmp_path: Path) -> None:
    """Run as the program (no argv given), main hands its objects to the collector's permanent
    generation, as the process ends next; called with a line, as the tests and the window do, never."""
    path = tmp_path / "startup.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    child = (
        "import gc, sys\n"
        "from core.cli.app import main\n"
        f"given = main(['validate', {str(path)!r}])\n"
        "frozen_after_given = gc.get_freeze_count()\n"
        f"sys.argv[1:] = ['validate', {str(path)!r}]\n"
        "own = main()\n"
        "print(given, frozen_after_given, own, gc.get_freeze_count() > 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ok", "ok", "0 0 0 True"]


def _child(*lines: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", "\n".join(lines)], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize(
    ("extra", "built"),
    [
        pytest.param({}, "False False False", id="plain"),
        pytest.param({"task": {"argv": ["/bin/true"]}}, "True False False", id="task"),
        pytest.param(
            {"businessCalendar": {"weekend": ["SU"]}, "holidayPolicy": "SKIP"}, "False True False", id="calendar"
        ),
        pytest.param({"alerts": [{"to": "mailto:ops@example.com"}]}, "False False True", id="alerts"),
    ],
)
def test_a_nested_model_is_built_when_a_spec_holds_its_key(
    tmp_path: Path, extra: dict[str, object], built: str
) -> None:
    """The validators of task, businessCalendar and alerts are built the first time a spec holds
    the key, not when the spec model loads."""
    path = tmp_path / "nested.json"
    path.write_text(json.dumps(SPEC | extra), encoding="utf-8")
    printed = _child(
        "from core.cli.app import main",
        f"assert main(['validate', {str(path)!r}]) == 0",
        "from core.spec.model import ScheduleSpec",
        "fields = [ScheduleSpec.model_fields[name].metadata for name in ('task', 'business_calendar', 'alerts')]",
        "print(*(any(getattr(m, 'built', False) for m in meta) for meta in fields))",
    )
    assert printed == ["ok", built]


@pytest.mark.parametrize(
    ("argv", "gen0"),
    [
        pytest.param(["validate", "{spec}"], 50_000, id="validate"),
        pytest.param(["preview", "{spec}", "--count", "2", "--now", "2026-03-05T12:00:00Z"], 50_000, id="preview"),
        pytest.param(["engine"], 700, id="engine"),
    ],
)
def test_a_spec_command_collects_young_objects_seldom(tmp_path: Path, argv: list[str], gen0: int) -> None:
    """Run as the program, a spec command raises the young generation's threshold for its run;
    another command (here one that only names its subcommands) keeps Python's own."""
    path = tmp_path / "startup.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    printed = _child(
        "import gc, sys",
        "from core.cli.app import main",
        f"sys.argv[1:] = {[a.format(spec=path) for a in argv]!r}",
        "main()",
        "print(gc.get_threshold()[0])",
    )
    assert printed[-1] == str(gen0)


#: A child that counts importlib.metadata's scans of the installed distributions during one command.
SCANS = (
    "import importlib.metadata as metadata, os, sys",
    "scans = []",
    "discover = metadata.Distribution.discover",
    "metadata.Distribution.discover = classmethod(lambda cls, **kw: scans.append(1) or discover(**kw))",
    "from core.cli.app import main",
)


@pytest.mark.parametrize(
    ("environ", "as_program", "expected"),
    [
        pytest.param({}, True, "0 __all__", id="program"),
        pytest.param({"PYDANTIC_DISABLE_PLUGINS": ""}, True, "1 ", id="plugins_asked_for"),
        pytest.param({}, False, "1 None", id="called_with_a_line"),
    ],
)
def test_a_spec_command_does_not_look_for_pydantic_plugins(
    tmp_path: Path, environ: dict[str, str], as_program: bool, expected: str
) -> None:
    """Tidemark uses no pydantic plugin: run as the program, a spec command switches pydantic's
    plugin lookup off (no scan of every installed distribution) unless the variable says otherwise;
    ``main([...])``, as the tests and the window call it, leaves the environment alone."""
    path = tmp_path / "startup.json"
    path.write_text(json.dumps(SPEC), encoding="utf-8")
    argv = ["validate", str(path)]
    run = f"sys.argv[1:] = {argv!r}\nmain()" if as_program else f"main({argv!r})"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "\n".join([*SCANS, run, "print(len(scans), os.environ.get('PYDANTIC_DISABLE_PLUGINS'))"]),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"} | environ,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ok", expected]
