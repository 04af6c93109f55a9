"""Nothing ``schedctl`` prints can drive a terminal: a spec's title, an unknown key,
a file name or a bad value with escape sequences, C1 controls or bidi overrides
comes out escaped, in every format, and JSON still reads back the original."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import icalendar
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.render.terminal import terminal_safe

#: Written out here, not imported: C0 but tab and newline (CR only before LF), DEL, C1, bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")
ATTACK = "\x1b]0;pwned\x07\x1b[2J\u202etxt.exe\x9b31m\u2066\u200f\x7f"
BASE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "door",
    "revision": 1,
    "timeZone": "UTC",
    "rule": "FREQ=DAILY;BYHOUR=6",
    "start": "2026-01-01T00:00:00",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
}
NOW = ["--now", "2026-03-05T12:00:00Z"]


def schedctl(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def write(tmp_path: Path, data: dict[str, Any], name: str = "door.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")  # JSON escapes: any character reaches the spec
    return str(path)


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        pytest.param("\x1b", "\\x1b", id="esc"),
        pytest.param("\x07", "\\x07", id="bel"),
        pytest.param("\x00", "\\x00", id="nul"),
        pytest.param("\r", "\\x0d", id="bare_cr"),
        pytest.param("\x7f", "\\u007f", id="del"),
        pytest.param("\x85", "\\u0085", id="c1_nel"),
        pytest.param("\x9b", "\\u009b", id="c1_csi"),
        pytest.param("\u202e", "\\u202e", id="rlo"),
        pytest.param("\u202a", "\\u202a", id="lre"),
        pytest.param("\u2066", "\\u2066", id="lri"),
        pytest.param("\u2069", "\\u2069", id="pdi"),
        pytest.param("\u200e", "\\u200e", id="lrm"),
        pytest.param("\u200f", "\\u200f", id="rlm"),
        pytest.param("\u061c", "\\u061c", id="alm"),
        pytest.param("\t", "\t", id="tab_stays"),
        pytest.param("\n", "\n", id="newline_stays"),
        pytest.param("\r\n", "\r\n", id="crlf_stays"),
        pytest.param("é→", "é→", id="text_stays"),
        pytest.param("\u200d", "\u200d", id="zwj_stays"),
    ],
)
def test_terminal_safe(char: str, shown: str) -> None:
    assert terminal_safe(f"a{char}b") == f"a{shown}b"


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "ics"])
def test_preview_escapes_a_title(capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str) -> None:
    status, out, err = schedctl(
        capsys, "preview", write(tmp_path, BASE | {"title": f"Door{ATTACK}\r\nnext"}), "--format", fmt, *NOW
    )
    assert (status, err) == (0, "")
    assert not UNSAFE.search(out), out
    if fmt == "table":
        assert out.splitlines()[0] == ("Door\\x1b]0;pwned\\x07\\x1b[2J\\u202etxt.exe\\u009b31m\\u2066\\u200f\\u007f")
    if fmt == "json":
        assert json.loads(out)["scheduleId"] == "door"
    if fmt == "ics":
        calendar = icalendar.Calendar.from_ical(out)
        assert str(calendar["x-wr-calname"]).startswith("Door\\x1b]0\\;pwned\\x07")


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        pytest.param(
            BASE | {f"bad{ATTACK}": 1},
            "door.json",
            "bad\\x1b]0;pwned\\x07\\x1b[2J\\u202etxt.exe",
            id="unknown_key",
        ),
        pytest.param(
            BASE | {"timeZone": f"Mars/{ATTACK}"},
            "door.json",
            "timeZone: ",
            id="bad_value",
        ),
        pytest.param(BASE | {"revision": "x"}, f"x{ATTACK}.json", "\\x1b]0;pwned", id="file_name"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "preview", "explain"])
def test_problems_are_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, data: dict[str, Any], name: str, expected: str
) -> None:
    status, out, err = schedctl(capsys, command, write(tmp_path, data, name), *([] if command == "validate" else NOW))
    assert (status, out) == (2, "")
    assert expected in err
    assert not UNSAFE.search(err), err


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=_TEXT, key=_TEXT, fmt=st.sampled_from(["table", "json", "csv", "ics"]))
def test_any_title_or_key_prints_nothing_unsafe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, title: str, key: str, fmt: str
) -> None:
    spec = write(tmp_path, BASE | {"title": title})
    for argv in (["validate", spec], ["preview", spec, "--format", fmt, "--count", "2", *NOW], ["explain", spec, *NOW]):
        status, out, err = schedctl(capsys, *argv)
        assert status in (0, 2) and "Traceback" not in err, err
        assert not UNSAFE.search(out + err), (argv, out, err)
    status, out, err = schedctl(capsys, "validate", write(tmp_path, BASE | {f"x{key}": 1}))
    assert status == 2 and "Traceback" not in err
    assert not UNSAFE.search(out + err), err
