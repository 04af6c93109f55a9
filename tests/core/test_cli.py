"""schedctl validate / preview / explain / schema: output, exit codes, one line per problem."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import icalendar
import pytest

from core import cli
from core.cli import use_colour
from tests.core.conftest import Run

NOW = ["--now", "2026-03-05T12:00:00Z"]
VALID = """\
schema: scheduleSpec.v1
scheduleId: nightly
revision: 1
timeZone: America/New_York
rule: FREQ=DAILY;BYHOUR=2;BYMINUTE=30
start: 2026-01-01T00:00:00
gapPolicy: SKIP
foldPolicy: FIRST_ONLY
"""
ROW_KEYS = [
    "occurrenceId",
    "logicalSlotId",
    "nominalLocal",
    "foldOrdinal",
    "status",
    "resolvedUtc",
    "resolvedLocal",
    "utcOffset",
    "positionUtc",
    "reason",
    "businessPeriod",
    "dispatchUtc",
]


# --- validate -------------------------------------------------------------------------------


def test_validate_ok(run: Run, spec_file: Callable[..., str]) -> None:
    assert run("validate", spec_file(VALID)) == (0, "ok\n", "")


def test_validate_every_demo(run: Run, demo: Callable[[str], str]) -> None:
    stems = ["daily-ops-summary", "hourly-fallback", "interval-15min", "invoice-month-end", "mel-sync"]
    assert run("validate", *[demo(s) for s in stems]) == (0, "ok\n" * 5, "")


def test_validate_names_the_key(run: Run, spec_file: Callable[..., str]) -> None:
    path = spec_file(VALID.replace("America/New_York", "EST").replace("revision: 1", "revision: 0"))
    status, out, err = run("validate", path)
    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert len(lines) == 2
    assert any(line.startswith(f"{path}: timeZone: 'EST' is an abbreviation") for line in lines)
    assert any(line.startswith(f"{path}: revision: ") for line in lines)
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("", "the file is empty", id="empty"),
        pytest.param("   \n\n", "the file is empty", id="blank"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is a binary file", id="binary"),
        pytest.param("schema: [unclosed\n", "not valid YAML", id="bad_yaml"),
        pytest.param("- a\n- b\n", "a spec is a mapping of keys to values", id="a_list"),
        pytest.param(VALID + "gapPolcy: SKIP\n", "gapPolcy: unknown key; did you mean 'gapPolicy'?", id="typo_key"),
    ],
)
def test_validate_bad_file(run: Run, spec_file: Callable[..., str], content: str | bytes, message: str) -> None:
    path = spec_file(content)
    status, out, err = run("validate", path)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith(f"{path}: ")
    assert message in err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        pytest.param("missing.yaml", "no such file", id="missing"),
        pytest.param(".", "is a directory", id="directory"),
    ],
)
def test_validate_unreadable(run: Run, tmp_path: Path, target: str, message: str) -> None:
    path = str(tmp_path / target)
    status, out, err = run("validate", path)
    assert (status, out) == (2, "")
    assert err.startswith(f"{path}: {message}")
    assert err.count("\n") == 1


def test_validate_checks_every_file(run: Run, spec_file: Callable[..., str]) -> None:
    good = spec_file(VALID, "good.yaml")
    bad = spec_file(VALID.replace("SKIP", "JUMP"), "bad.yaml")
    also_good = spec_file(VALID, "also.yaml")
    status, out, err = run("validate", good, bad, also_good)
    assert (status, out) == (2, "ok\nok\n")
    assert err.startswith(f"{bad}: gapPolicy: ")
    assert err.count("\n") == 1


def test_validate_stdin(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(VALID.replace("revision: 1", "revision: x")))
    status, out, err = run("validate", "-")
    assert (status, out) == (2, "")
    assert err.startswith("<stdin>: revision: ")


# --- preview --------------------------------------------------------------------------------


def test_preview_json_contract_shape(run: Run, demo: Callable[[str], str]) -> None:
    status, out, err = run("preview", demo("daily-ops-summary"), *NOW, "--count", "4", "--format", "json")
    assert (status, err) == (0, "")
    data = json.loads(out)
    assert list(data) == ["schema", "scheduleId", "revision", "timeZone", "tzdbVersion", "occurrences", "transitions"]
    assert (data["schema"], data["scheduleId"], data["revision"], data["timeZone"]) == (
        "preview.v1",
        "daily-ops-summary",
        1,
        "America/New_York",
    )
    assert all(list(row) == ROW_KEYS for row in data["occurrences"])
    gap = data["occurrences"][2]
    assert gap == {
        "occurrenceId": gap["occurrenceId"],
        "logicalSlotId": None,
        "nominalLocal": "2026-03-08T02:30:00",
        "foldOrdinal": 0,
        "status": "SKIPPED_GAP",
        "resolvedUtc": None,
        "resolvedLocal": None,
        "utcOffset": None,
        "positionUtc": "2026-03-08T07:30:00Z",
        "reason": "02:30 does not exist on 2026-03-08 in America/New_York: clocks jump from 02:00 EST to 03:00 EDT",
        "businessPeriod": "2026-03-08",
        "dispatchUtc": None,
    }
    assert gap["occurrenceId"].startswith("occ-") and len(gap["occurrenceId"]) == 36
    assert data["transitions"] == [
        {
            "utc": "2026-03-08T07:00:00Z",
            "offsetBefore": "-05:00",
            "offsetAfter": "-04:00",
            "kind": "gap",
            "seconds": 3600,
        }
    ]
    assert out.startswith('{\n  "schema": "preview.v1",\n')


def test_preview_table_default(run: Run, demo: Callable[[str], str]) -> None:
    status, out, err = run("preview", demo("daily-ops-summary"), *NOW)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 2 + 10 + 1  # title, header, ten rows (the default), one clock change
    assert "── clocks jump forward 1 h · 2026-03-08 07:00Z · EST→EDT ──" in lines
    assert lines[2].startswith("Fri 2026-03-06 02:30 EST")
    assert "\x1b[" not in out  # captured output is not a terminal


def test_preview_table_fold(run: Run, demo: Callable[[str], str]) -> None:
    status, out, _ = run("preview", demo("hourly-fallback"), "--from", "2026-10-25T01:00", "--count", "4", *NOW)
    lines = out.splitlines()
    assert status == 0
    assert lines[3].startswith("Sun 2026-10-25 02:15 CEST  2026-10-25 00:15Z  +02:00  ✓ scheduled")
    assert lines[4] == "── clocks fall back 1 h · 2026-10-25 01:00Z · CEST→CET ──"
    assert lines[5].startswith("Sun 2026-10-25 02:15 CET   2026-10-25 01:15Z  +01:00  ② scheduled")


def test_preview_csv(run: Run, demo: Callable[[str], str]) -> None:
    status, out, _ = run("preview", demo("mel-sync"), "--from", "2026-10-01", "--count", "2", "--format", "csv", *NOW)
    lines = out.splitlines()
    assert status == 0
    assert lines[0] == ",".join(ROW_KEYS)
    assert len(lines) == 3
    assert ",SHIFTED,2026-10-03T16:00:00Z,2026-10-04T03:00:00+11:00,+11:00," in lines[1]


def test_preview_ics_parses_back(run: Run, demo: Callable[[str], str]) -> None:
    status, out, _ = run("preview", demo("daily-ops-summary"), *NOW, "--count", "4", "--format", "ics")
    assert status == 0
    cal = icalendar.Calendar.from_ical(out)
    assert str(cal["PRODID"]) == "-//Tidemark//schedctl//EN"
    starts = [e.decoded("DTSTART").strftime("%Y-%m-%dT%H:%MZ") for e in cal.walk("VEVENT")]
    assert starts == ["2026-03-06T07:30Z", "2026-03-07T07:30Z", "2026-03-09T06:30Z"]


def test_preview_from_defaults_to_now(run: Run, demo: Callable[[str], str]) -> None:
    _, out, _ = run(
        "preview", demo("daily-ops-summary"), "--now", "2026-03-07T08:00:00Z", "--count", "1", "--format", "json"
    )
    assert json.loads(out)["occurrences"][0]["nominalLocal"] == "2026-03-08T02:30:00"


@pytest.mark.parametrize(
    ("from_", "first_nominal", "first_fold"),
    [
        pytest.param("2026-03-08T07:30:00Z", "2026-03-08T02:30:00", 0, id="instant_z"),
        pytest.param("2026-03-08T02:30:00-05:00", "2026-03-08T02:30:00", 0, id="instant_offset"),
        pytest.param("2026-03-08", "2026-03-08T02:30:00", 0, id="local_date"),
        pytest.param("2026-03-08T02:15", "2026-03-08T02:30:00", 0, id="local_in_gap_means_the_jump"),
        # 03:00 EDT is 07:00Z, before the skipped row's position (02:30 read as EST, 07:30Z).
        pytest.param("2026-03-08T03:00", "2026-03-08T02:30:00", 0, id="local_at_gap_end"),
        pytest.param("2026-03-08T03:31", "2026-03-09T02:30:00", 0, id="local_after_gap_row"),
    ],
)
def test_preview_from_forms(
    run: Run, demo: Callable[[str], str], from_: str, first_nominal: str, first_fold: int
) -> None:
    status, out, err = run(
        "preview", demo("daily-ops-summary"), "--from", from_, "--count", "1", "--format", "json", *NOW
    )
    assert (status, err) == (0, "")
    row = json.loads(out)["occurrences"][0]
    assert (row["nominalLocal"], row["foldOrdinal"]) == (first_nominal, first_fold)


def test_preview_local_fold_time_means_first_reading(run: Run, demo: Callable[[str], str]) -> None:
    _, out, _ = run(
        "preview", demo("hourly-fallback"), "--from", "2026-10-25T02:15", "--count", "2", "--format", "json", *NOW
    )
    rows = json.loads(out)["occurrences"]
    assert [(r["nominalLocal"], r["foldOrdinal"]) for r in rows] == [
        ("2026-10-25T02:15:00", 0),
        ("2026-10-25T02:15:00", 1),
    ]


def test_preview_until_is_exclusive(run: Run, demo: Callable[[str], str]) -> None:
    status, out, _ = run(
        "preview",
        demo("daily-ops-summary"),
        "--from",
        "2026-03-06T00:00:00Z",
        "--until",
        "2026-03-09T06:30:00Z",
        "--format",
        "json",
        *NOW,
    )
    rows = json.loads(out)["occurrences"]
    assert status == 0
    assert [r["positionUtc"] for r in rows] == ["2026-03-06T07:30:00Z", "2026-03-07T07:30:00Z", "2026-03-08T07:30:00Z"]


def test_preview_stdin(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(VALID))
    status, out, _ = run("preview", "-", "--count", "1", "--format", "json", *NOW)
    assert status == 0
    assert json.loads(out)["scheduleId"] == "nightly"


def test_preview_invalid_spec(run: Run, spec_file: Callable[..., str]) -> None:
    path = spec_file(VALID.replace("FREQ=DAILY", "FREQ=FORTNIGHTLY"))
    status, out, err = run("preview", path, *NOW)
    assert (status, out) == (2, "")
    assert err.startswith(f"{path}: rule: FREQ=FORTNIGHTLY is not one of")
    assert err.count("\n") == 1


# --- bad command lines: exit 2, one line, no traceback ----------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["preview", "{spec}", "--count", "-3"], "argument --count: must be at least 1, got -3", id="count_negative"
        ),
        pytest.param(
            ["preview", "{spec}", "--count", "0"], "argument --count: must be at least 1, got 0", id="count_zero"
        ),
        pytest.param(
            ["preview", "{spec}", "--count", "ten"], "argument --count: 'ten' is not a whole number", id="count_word"
        ),
        pytest.param(["preview", "{spec}", "--count", "2000000"], "--count: at most 1,000,000 rows", id="count_huge"),
        pytest.param(
            ["preview", "{spec}", "--from", "notadate"], "--from: 'notadate' is not a date-time", id="from_garbage"
        ),
        pytest.param(
            ["preview", "{spec}", "--from", "2026-02-30"],
            "--from: '2026-02-30' is not a real date-time",
            id="from_not_real",
        ),
        pytest.param(["preview", "{spec}", "--from", ""], "argument --from: is empty", id="from_empty"),
        pytest.param(["preview", "{spec}", "--now", "soon"], "--now: 'soon' is not a date-time", id="now_garbage"),
        pytest.param(
            ["preview", "{spec}", "--count", "3", "--until", "2027-01-01"],
            "argument --until: not allowed with argument --count",
            id="count_with_until",
        ),
        pytest.param(
            ["preview", "{spec}", "--from", "2027-01-01", "--until", "2026-01-01"],
            "--until: '2026-01-01' is not after the start of the preview (2027-01-01T05:00:00Z)",
            id="until_before_from",
        ),
        pytest.param(
            ["preview", "{spec}", "--format", "xml"], "argument --format: invalid choice: 'xml'", id="bad_format"
        ),
        pytest.param(["preview"], "the following arguments are required: SPEC", id="preview_without_spec"),
        pytest.param(
            ["explain", "{spec}", "--from", "tomorrow"], "--from: 'tomorrow' is not a date-time", id="explain_bad_from"
        ),
        pytest.param(["frobnicate"], "argument COMMAND: invalid choice: 'frobnicate'", id="unknown_command"),
        pytest.param([], "choose a command", id="no_command"),
        pytest.param(["validate"], "the following arguments are required: SPEC", id="validate_without_spec"),
        pytest.param(["preview", "{spec}", "--colour"], "unrecognized arguments: --colour", id="unknown_option"),
    ],
)
def test_bad_command_line(run: Run, spec_file: Callable[..., str], argv: list[str], message: str) -> None:
    path = spec_file(VALID)
    status, out, err = run(*[a.replace("{spec}", path) for a in argv])
    assert (status, out) == (2, "")
    assert err.count("\n") == 1, err
    assert message in err
    assert err.startswith("schedctl")
    assert "Traceback" not in err


# --- explain, schema, help, internal errors ---------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        pytest.param(
            "daily-ops-summary",
            "Next gap: Sun 2027-03-14, clocks jump from 02:00 EST to 03:00 EDT; 02:30 does not exist that day and "
            "this schedule skips it (gapPolicy SKIP).",
            id="new_york_skip",
        ),
        pytest.param("mel-sync", "runs it at 03:00 AEDT instead (gapPolicy SHIFT_FORWARD)", id="melbourne"),
        pytest.param("invoice-month-end", "2026-06-31 runs on 2026-06-30 (invalidDatePolicy BACKWARD)", id="invoice"),
        pytest.param("interval-15min", "Every 15 minutes of elapsed time from 2026-01-01T00:00:00Z", id="interval"),
    ],
)
def test_explain(run: Run, demo: Callable[[str], str], stem: str, expected: str) -> None:
    status, out, err = run("explain", demo(stem), "--now", "2026-06-01T00:00:00Z")
    assert (status, err) == (0, "")
    assert expected in out
    assert out.count("\n") == 1  # one paragraph; wrapped only on a terminal


def test_explain_from_overrides_now(run: Run, demo: Callable[[str], str]) -> None:
    _, out, _ = run("explain", demo("daily-ops-summary"), "--now", "2026-06-01T00:00:00Z", "--from", "2026-01-15")
    assert "Next gap: Sun 2026-03-08," in out


def test_schema(run: Run) -> None:
    status, out, err = run("schema")
    assert (status, err) == (0, "")
    schema = json.loads(out)
    assert schema["title"] == "scheduleSpec.v1"
    assert {"timeZone", "gapPolicy", "foldPolicy"} <= set(schema["properties"])
    assert out.startswith("{\n  ")


@pytest.mark.parametrize(
    "argv", [pytest.param(["--help"], id="top"), pytest.param(["preview", "--help"], id="preview")]
)
def test_help(run: Run, argv: list[str]) -> None:
    status, out, err = run(*argv)
    assert (status, err) == (0, "")
    assert out.startswith("usage: schedctl")


def test_preview_help_documents_local_times(run: Run) -> None:
    _, out, _ = run("preview", "--help")
    assert "read on the wall clock of the schedule's" in out


def test_internal_error_reports_a_bug(run: Run, demo: Callable[[str], str], monkeypatch: pytest.MonkeyPatch) -> None:
    import core.explain.summary

    def broken(*_: object, **__: object) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(core.explain.summary, "explain", broken)
    status, out, err = run("explain", demo("mel-sync"), *NOW)
    assert (status, out) == (1, "")
    assert err.splitlines()[0] == "schedctl: internal error: RuntimeError: boom (this is a bug; please report it)"
    assert "Traceback (most recent call last)" in err


@pytest.mark.parametrize(
    ("tty", "env", "expected"),
    [
        pytest.param(True, {}, True, id="terminal"),
        pytest.param(False, {}, False, id="pipe"),
        pytest.param(True, {"NO_COLOR": "1"}, False, id="no_color"),
        pytest.param(True, {"NO_COLOR": ""}, True, id="no_color_empty_is_unset"),
        pytest.param(True, {"TERM": "dumb"}, False, id="dumb_terminal"),
    ],
)
def test_use_colour(tty: bool, env: dict[str, str], expected: bool) -> None:
    assert use_colour(env, tty=tty) is expected


# --- as a process ---------------------------------------------------------------------------

HEAVY = (
    "pydantic",
    "dateutil",
    "yaml",
    "icalendar",
    "sqlalchemy",
    "PySide6",
    "core.spec.model",
    "core.spec.validation",
    "core.spec.canonical",
)


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60, check=False)


def test_importing_cli_stays_light() -> None:
    code = (
        "import sys, core.cli\n"
        "core.cli.build_parser()\n"
        f"print(sorted(m for m in sys.modules if m in {HEAVY!r} or m.split('.')[0] in {HEAVY!r}))"
    )
    done = _python("-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_module_runs_as_a_program(demo: Callable[[str], str]) -> None:
    done = _python("-m", "core.cli", "validate", demo("mel-sync"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


def test_console_script_bad_input(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("schedctl")
    if not script.exists():
        pytest.skip("the schedctl console script is not installed next to this interpreter")
    done = subprocess.run(
        [str(script), "validate", str(tmp_path / "nope.yaml")], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"{tmp_path / 'nope.yaml'}: no such file\n"


def test_console_script_preview(demo: Callable[[str], str]) -> None:
    script = Path(sys.executable).with_name("schedctl")
    if not script.exists():
        pytest.skip("the schedctl console script is not installed next to this interpreter")
    done = subprocess.run(
        [str(script), "preview", demo("daily-ops-summary"), *NOW, "--count", "3", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert [r["status"] for r in json.loads(done.stdout)["occurrences"]] == ["SCHEDULED", "SCHEDULED", "SKIPPED_GAP"]


@pytest.mark.parametrize(
    ("env", "coloured"),
    [pytest.param({}, True, id="terminal_colours"), pytest.param({"NO_COLOR": "1"}, False, id="no_color_on_terminal")],
)
def test_colour_on_a_terminal(demo: Callable[[str], str], env: dict[str, str], coloured: bool) -> None:
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "core.cli",
                "preview",
                demo("mel-sync"),
                "--from",
                "2026-10-01",
                "--count",
                "1",
                *NOW,
            ],
            stdout=follower,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
            env={"PATH": os.environ.get("PATH", ""), "TERM": "xterm", **env},
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal reports EIO once the writer is gone
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    text = b"".join(chunks).decode("utf-8")
    assert done.returncode == 0, done.stderr
    assert "↷ shifted" in text
    assert ("\x1b[38;5;214m↷ shifted" in text) is coloured
    assert ("\x1b[" in text) is coloured


def test_exit_codes_are_the_contract() -> None:
    assert (cli.EXIT_OK, cli.EXIT_INTERNAL, cli.EXIT_INVALID) == (0, 1, 2)
