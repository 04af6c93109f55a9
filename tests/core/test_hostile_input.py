"""A spec that could never be run is refused where it enters: text no program or
ledger can take (a NUL byte, a lone surrogate, an argument longer than the
operating system passes, a period longer than the ledger stores), each naming
its key, once; through ``schedctl validate`` and ``preview`` in one line and exit 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import BASE_INTERVAL, make_data

from core.cli import main
from core.errors import SpecError
from core.os_text import MAX_ARG_BYTES, MAX_PATH_BYTES, shown
from core.recurrence.compile import compile_schedule
from core.recurrence.expand import expand
from core.spec.files import MAX_SPEC_BYTES, load_text
from core.spec.model import MAX_PERIOD_CHARS
from core.spec.validation import parse_spec

TASK = {"argv": ["/bin/echo", "hello"]}
NUL = "contains a NUL byte"
SURROGATE = "a lone surrogate"


def task(**overrides: Any) -> dict[str, Any]:
    return TASK | overrides


# overrides of a valid spec, the key named, a fragment of its one problem
HOSTILE = [
    pytest.param({"task": task(argv=["/bin/echo", "a", "b\x00c"])}, "task.argv[2]", NUL, id="nul_in_argv"),
    pytest.param({"task": task(argv=["/bin/ec\x00ho"])}, "task.argv[0]", NUL, id="nul_in_program"),
    pytest.param({"task": task(env={"PIN": "48\x0021"})}, "task.env.PIN", NUL, id="nul_in_env_value"),
    pytest.param(
        {"task": task(env={"P\x00N": "1"})}, "task.env", "the key 'P\\x00N' contains a NUL", id="nul_in_env_name"
    ),
    pytest.param(
        {"task": task(env={"A=B": "1"})},
        "task.env",
        "'A=B' is not a valid environment variable name",
        id="equals_in_env_name",
    ),
    pytest.param(
        {"task": task(env={"": "1"})}, "task.env", "'' is not a valid environment variable name", id="empty_env_name"
    ),
    pytest.param({"task": task(cwd="/tmp\x00/x")}, "task.cwd", NUL, id="nul_in_cwd"),
    pytest.param({"task": task(verify=["/bin/test", "-e", "/x\x00"])}, "task.verify[2]", NUL, id="nul_in_verify"),
    pytest.param({"businessPeriod": "{nominal:%Y}\x00"}, "businessPeriod", NUL, id="nul_in_business_period"),
    pytest.param({"title": "Nightly\x00"}, "title", NUL, id="nul_in_title"),
    pytest.param({"rule": "FREQ=DAILY\x00"}, "rule", NUL, id="nul_in_rule"),
    pytest.param({"scheduleId": "nightly\x00"}, "scheduleId", NUL, id="nul_in_schedule_id"),
    pytest.param({"timeZone": "UTC\x00"}, "timeZone", NUL, id="nul_in_time_zone"),
    pytest.param({"exclude": ["2026-12-25\x00"]}, "exclude[0]", NUL, id="nul_in_exclusion"),
    pytest.param({"tzdbVersion": "2025b\x00"}, "tzdbVersion", NUL, id="nul_in_tzdb_version"),
    pytest.param(
        {"task": task(argv=["/bin/echo", "\ud800"])}, "task.argv[1]", "U+D800, a lone surrogate", id="surrogate_in_argv"
    ),
    pytest.param({"task": task(env={"X": "a\udcff"})}, "task.env.X", SURROGATE, id="surrogate_in_env_value"),
    pytest.param({"title": "\udfff"}, "title", SURROGATE, id="surrogate_in_title"),
    pytest.param(
        {"colo\ud800ur": "red"}, "(top level)", "the key 'colo\\ud800ur' contains U+D800", id="surrogate_in_unknown_key"
    ),
    pytest.param(
        {"task": task(argv=["/bin/echo", "x" * (MAX_ARG_BYTES + 1)])},
        "task.argv[1]",
        f"is 131,072 bytes; a program is given at most {MAX_ARG_BYTES:,} bytes",
        id="argument_too_long",
    ),
    pytest.param(
        {"task": task(argv=["/bin/echo", "é" * 70_000])},
        "task.argv[1]",
        "is 140,000 bytes",
        id="argument_too_long_in_bytes_not_characters",
    ),
    pytest.param(
        {"task": task(env={"BIG": "x" * MAX_ARG_BYTES})},
        "task.env.BIG",
        "NAME=value is 131,075 bytes",
        id="variable_too_long",
    ),
    pytest.param(
        {"task": task(cwd="/" + "d" * MAX_PATH_BYTES)},
        "task.cwd",
        f"is a path of 4,096 bytes; a path is at most {MAX_PATH_BYTES:,}",
        id="cwd_too_long",
    ),
    pytest.param(
        {"task": task(cwd="/tmp/" + "n" * 256)},
        "task.cwd",
        "names a file or directory of 256 bytes ('nnnnnnnnnnnnnnnnnnnn'… (256 characters)); a name is at most 255",
        id="cwd_name_too_long",
    ),
    pytest.param(
        {"task": task(argv=["/bin/" + "p" * 300])},
        "task.argv[0]",
        "names a file or directory of 300 bytes",
        id="program_name_too_long",
    ),
    pytest.param(
        {"businessPeriod": "{nominal:%A %B}" * 20},
        "businessPeriod",
        "gives periods of up to 380 characters (e.g. 'Wednesday September",
        id="period_too_long",
    ),
    pytest.param(
        {"businessPeriod": "{nominal:%A %B}" * 20},
        "businessPeriod",
        f"a period is at most {MAX_PERIOD_CHARS}",
        id="period_bound_named",
    ),
    pytest.param(
        {"businessPeriod": "{nominal!r:>300}"},
        "businessPeriod",
        "gives periods of up to 300 characters",
        id="period_padded_too_long",
    ),
    pytest.param(
        {"tzdbVersion": "2025b" * 4},
        "tzdbVersion",
        "is not a time zone database version such as 2025b",
        id="tzdb_version_too_long",
    ),
]


@pytest.mark.parametrize(("overrides", "key", "fragment"), HOSTILE)
def test_text_no_program_or_ledger_can_take_is_refused_naming_its_key(
    overrides: dict[str, Any], key: str, fragment: str
) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(make_data(**overrides))
    found = [p for p in info.value.problems if p.key == key]
    assert len(found) == 1, info.value.problems
    assert fragment in found[0].message
    assert "\x00" not in str(info.value) and len(str(info.value)) < 400, str(info.value)


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"task": task(argv=["/bin/echo", "x" * MAX_ARG_BYTES])}, id="longest_argument"),
        pytest.param({"task": task(cwd="/" + "/".join(["d" * 255] * 15) + "/" + "e" * 254)}, id="longest_cwd"),
        pytest.param({"businessPeriod": "{nominal:%A %B}" * 13}, id="long_period_within_bound"),
        pytest.param(
            {"title": "tab\tbell\x07 and \u202e are text", "task": task(env={"X": "\x1b[2J"})},
            id="control_characters_are_text",
        ),
        pytest.param({"tzdbVersion": "2025b"}, id="tzdb_version"),
    ],
)
def test_text_within_the_bounds_passes(overrides: dict[str, Any]) -> None:
    parse_spec(make_data(**overrides))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("short", "'short'", id="short_text"),
        pytest.param("x" * 100, "'" + "x" * 60 + "'… (100 characters)", id="long_text"),
        pytest.param(["lol"] * 9, "a list of 9 values", id="long_list"),
        pytest.param({"a": ["lol"] * 8}, "{'a': ['lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol…", id="deep"),
    ],
)
def test_a_refused_value_is_shown_cut_short(value: Any, expected: str) -> None:
    assert shown(value) == expected


# --- through the command line ----------------------------------------------------------------

SPEC = make_data(task=TASK)


def schedctl(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    return (status, *capsys.readouterr())


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        pytest.param(
            "nul.json",
            json.dumps(SPEC | {"task": task(argv=["/bin/echo", "a", "b\x00c"])}),
            "task.argv[2]: contains a NUL byte",
            id="json_nul_escape",
        ),
        pytest.param(
            "nul.yaml",
            json.dumps(SPEC | {"businessPeriod": "{nominal:%Y}"}).replace("{nominal:%Y}", "{nominal:%Y}\\0"),
            "businessPeriod: contains a NUL byte",
            id="yaml_nul_escape",
        ),
        pytest.param(
            "surrogate.yaml",
            json.dumps(SPEC | {"task": task(env={"PIN": "PLACEHOLDER"})}).replace("PLACEHOLDER", "\\ud800"),
            "task.env.PIN: contains U+D800",
            id="yaml_surrogate_escape",
        ),
        pytest.param(
            "surrogate.json",
            json.dumps(SPEC | {"title": "\udc80"}),
            "title: contains U+DC80",
            id="json_surrogate_escape",
        ),
    ],
)
@pytest.mark.parametrize("command", ["validate", "preview"])
def test_the_command_line_refuses_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, name: str, text: str, line: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    status, out, err = schedctl(capsys, command, str(path))
    assert (status, out) == (2, "")
    [only] = err.splitlines()
    assert only.startswith(f"{path}: {line}"), err
    assert "Traceback" not in err and "\x00" not in err


# --- whole seconds ---------------------------------------------------------------------------

INTERVAL = make_data(BASE_INTERVAL)
FRACTION = "is not a whole number of seconds; durations are counted in whole seconds"


@pytest.mark.parametrize(
    ("base", "overrides", "key", "fragment"),
    [
        pytest.param(INTERVAL, {"every": "PT0.5S"}, "every", f"'PT0.5S' {FRACTION}", id="every_half_second"),
        pytest.param(INTERVAL, {"every": "PT1.5S"}, "every", f"'PT1.5S' {FRACTION}", id="every_one_and_a_half"),
        pytest.param(INTERVAL, {"every": "PT1,5S"}, "every", FRACTION, id="every_decimal_comma"),
        pytest.param(INTERVAL, {"every": "PT1M0.000001S"}, "every", FRACTION, id="every_a_microsecond_over"),
        pytest.param(INTERVAL, {"every": timedelta(seconds=1.5)}, "every", FRACTION, id="every_python_timedelta"),
        pytest.param(None, {"jitter": "PT0.1S"}, "jitter", FRACTION, id="jitter"),
        pytest.param(None, {"retry": {"initialBackoff": "PT2.5S"}}, "retry.initialBackoff", FRACTION, id="backoff"),
        pytest.param(
            INTERVAL,
            {"anchor": "2026-01-01T00:00:00.5Z"},
            "anchor",
            "'2026-01-01T00:00:00.5Z' has a fraction of a second; instants are whole seconds",
            id="anchor",
        ),
        pytest.param(
            None,
            {"cutoverAt": "2026-01-01T00:00:00,25+01:00"},
            "cutoverAt",
            "instants are whole seconds",
            id="cutover_at",
        ),
        pytest.param(None, {"end": "2027-01-01T00:00:00.999Z"}, "end", "instants are whole seconds", id="end_instant"),
        pytest.param(None, {"end": "2027-01-01T00:00:00.5"}, "end", "times are whole seconds", id="end_local"),
        pytest.param(None, {"start": "2026-01-01T00:00:00.5"}, "start", "times are whole seconds", id="start"),
        pytest.param(
            INTERVAL,
            {"anchor": datetime(2026, 1, 1, 0, 0, 0, 500, tzinfo=UTC)},
            "anchor",
            "2026-01-01T00:00:00.000500+00:00 has a fraction of a second",
            id="anchor_python_datetime",
        ),
        pytest.param(
            INTERVAL,
            {"every": "P9999999999D"},
            "every",
            "is longer than any duration can be",
            id="every_past_what_a_duration_holds",
        ),
        pytest.param(
            INTERVAL,
            {"every": "PT" + "9" * 5000 + "S"},
            "every",
            "is longer than any duration can be",
            id="every_five_thousand_digits",
        ),
    ],
)
def test_durations_and_instants_are_whole_seconds(
    base: dict[str, Any] | None, overrides: dict[str, Any], key: str, fragment: str
) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(make_data(base, **overrides))
    [problem] = [p for p in info.value.problems if p.key == key]
    assert fragment in problem.message
    assert len(problem.message) < 200


@pytest.mark.parametrize("every", ["PT1S", "PT90S", "P1DT0S", "P1W"])
def test_whole_second_durations_pass(every: str) -> None:
    parse_spec(make_data(INTERVAL, every=every))


def test_a_whole_second_interval_gives_distinct_whole_second_rows() -> None:
    spec = parse_spec(make_data(INTERVAL, every="PT1S"))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = list(expand(compile_schedule(spec), start, start + timedelta(seconds=5)))
    assert [r.resolved_utc for r in rows] == [f"2026-01-01T00:00:0{n}Z" for n in range(5)]
    assert len({r.occurrence_id for r in rows}) == 5


# --- hostile files ---------------------------------------------------------------------------

HEAD = "schema: scheduleSpec.v1\nscheduleId: evil\nrevision: 1\ntimeZone: UTC\nrule: FREQ=DAILY\n"


def laughs(levels: int) -> str:
    """The "billion laughs": each level nine aliases of the one before (567 bytes at ten levels)."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    names = "abcdefghijklmnopqrstuvwxyz"
    for i in range(1, levels):
        lines.append(f"{names[i]}: &{names[i]} [{','.join([f'*{names[i - 1]}'] * 9)}]")
    return "\n".join(lines) + "\n"


BIG = "x" * 20_000
HOSTILE_FILES = [
    pytest.param("laughs.yaml", laughs(10), "holds more than 100,000 values once its aliases (*name) are expanded",
                 id="billion_laughs_ten_levels"),
    pytest.param("laughs8.yaml", laughs(8), "holds more than 100,000 values once its aliases", id="eight_levels"),
    pytest.param("aliases.yaml", HEAD + "x: &x a\nexclude: [" + ", ".join(["*x"] * 101) + "]\n",
                 "uses more than 100 aliases (*name), the last at line 7", id="too_many_aliases"),
    pytest.param("wide.yaml", HEAD + f"s: &s {BIG}\ntask:\n  argv: [" + ", ".join(["*s"] * 60) + "]\n",
                 "holds more than 1,000,000 characters once its aliases (*name) are expanded",
                 id="long_text_aliased_many_times"),
    pytest.param("deep.yaml", HEAD + "title: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 32 levels deep",
                 id="yaml_5000_nested_lists"),
    pytest.param("deep.json", '{"title": ' + "[" * 5000 + "]" * 5000 + "}", "nested more than 32 levels deep",
                 id="json_5000_nested_lists"),
    pytest.param("deep100.json", '{"title": ' + "[" * 100 + "]" * 100 + "}", "nested more than 32 levels deep at title",
                 id="json_100_nested_lists"),
    pytest.param("dup.json", '{"schema": "scheduleSpec.v1", "revision": 1, "revision": 2}',
                 "the key 'revision' appears twice at the top level", id="json_duplicate_key"),
    pytest.param("dupenv.json", '{"task": {"argv": ["/bin/true"], "env": {"A": "1", "B": "2", "A": "3"}}}',
                 "the key 'A' appears twice in task.env", id="json_duplicate_nested_key"),
    pytest.param("dupdeep.json", '{"exclude": [{"x": 1}, {"y": 1, "y": 2}]}', "the key 'y' appears twice in exclude[1]",
                 id="json_duplicate_key_in_a_list"),
    pytest.param("shown.yaml",
                 HEAD + f"s: &s {BIG}\nl: &l [" + ", ".join(["*s"] * 40) + "]\nschema: *l\ntimeZone: *s\n",
                 "", id="expanded_values_in_errors_are_cut_short"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "fragment"), HOSTILE_FILES)
@pytest.mark.parametrize("command", ["validate", "preview", "explain"])
def test_hostile_files_are_refused_in_one_line_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, name: str, text: str, fragment: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    began = time.monotonic()
    status, out, err = schedctl(capsys, command, str(path))
    assert time.monotonic() - began < 5, "refused before anything walks the expansion"
    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert all(line.startswith(f"{path}: ") and len(line) < 300 for line in lines), err
    assert fragment in err
    if fragment:
        assert len(lines) == 1, err


def test_aliases_up_to_the_bound_still_load() -> None:
    data = load_text(HEAD + "x: &x 2026-12-25\nexclude: [" + ", ".join(["*x"] * 100) + "]\n")
    assert data["exclude"] == ["2026-12-25"] * 100


class EndlessStream(io.RawIOBase):
    """A stream that never ends (like ``yes |``), counting what was read from it."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = min(len(buffer), 4096)  # a pipe gives a little at a time
        buffer[:size] = b"y\n" * (size // 2)
        self.read_bytes += size
        return size


def test_an_endless_standard_input_is_read_to_the_limit_and_one_byte(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    endless = EndlessStream()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(endless, buffer_size=8192)))
    status, out, err = schedctl(capsys, "validate", "-")
    assert (status, out) == (2, "")
    assert err == f"<stdin>: is more than {MAX_SPEC_BYTES:,} bytes; a spec file is at most {MAX_SPEC_BYTES:,}\n"
    assert MAX_SPEC_BYTES + 1 <= endless.read_bytes <= MAX_SPEC_BYTES + 1 + 8192


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
@pytest.mark.parametrize("command", ["validate", "preview", "apply"])
def test_dev_zero_is_refused_not_read_forever(command: str, tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "core.cli", command, "/dev/zero"]
    if command == "apply":
        argv += ["--db", f"sqlite:///{tmp_path / 'ledger.db'}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"/dev/zero: is more than {MAX_SPEC_BYTES:,} bytes; a spec file is at most {MAX_SPEC_BYTES:,}"
    ]
