"""No spec stops the engine: arbitrary text (control characters, surrogates, NUL
bytes, huge values) in any string field goes through ``schedctl validate``,
``apply`` and one ``engine run --once`` and is either refused in lines naming
its key with exit status 2, or runs with its outcome recorded; never a
traceback. The cases of issue 11 are a table beside the property. On SQLite and
PostgreSQL."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from core import cli
from core.clock import FixedClock
from core.ledger.db import open_ledger
from core.ledger.models import Attempt, Occurrence, Revision
from core.ledger.states import OccurrenceState as S

from . import NOW

APPLIED = NOW + timedelta(seconds=30)  # 12:00:30Z: the next hour's run is the first one due
RUN = NOW + timedelta(hours=1, seconds=30)  # 13:00:30Z: it is due, 30 s late
#: States of an occurrence the engine has not finished with.
IN_FLIGHT = {S.DISPATCHING, S.RUNNING}

BASE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "base",
    "revision": 1,
    "title": "hostile",
    "timeZone": "UTC",
    "kind": "calendar",
    "rule": "FREQ=HOURLY;BYMINUTE=0",
    "start": "2026-01-01T00:00:00",
    "end": "2027-01-01T00:00:00",
    "exclude": ["2026-12-25"],
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
    "invalidDatePolicy": "OMIT",
    "misfirePolicy": "CATCH_UP_BOUNDED",
    "maxCatchUp": 1,
    "latenessWindow": "PT15M",
    "catchUpWindow": "PT1H",
    "jitter": "PT0S",
    "overlapPolicy": "SKIP",
    "retry": {"maxAttempts": 1, "initialBackoff": "PT30S", "maxBackoff": "PT10M"},
    "horizon": "PT3H",
    "businessPeriod": "{nominal:%Y-%m-%d %H}",
    "task": {
        "kind": "command",
        "argv": ["/bin/echo", "one", "two"],
        "cwd": "/",
        "env": {"PIN": "4821"},
        "timeout": "PT30S",
        "effect": "non_idempotent",
        "verify": ["/bin/true", "probe"],
    },
}

#: Where a text goes: a path into the document, and the key a refusal names (a prefix of it).
ENV_NAME: Any = object()
UNKNOWN_KEY: Any = object()
FIELDS: list[tuple[tuple[Any, ...], str]] = [
    (("schema",), "schema"),
    (("scheduleId",), "scheduleId"),
    (("title",), "title"),
    (("timeZone",), "timeZone"),
    (("tzdbVersion",), "tzdbVersion"),
    (("kind",), "kind"),
    (("rule",), "rule"),
    (("start",), "start"),
    (("end",), "end"),
    (("exclude", 0), "exclude[0]"),
    (("gapPolicy",), "gapPolicy"),
    (("foldPolicy",), "foldPolicy"),
    (("invalidDatePolicy",), "invalidDatePolicy"),
    (("misfirePolicy",), "misfirePolicy"),
    (("latenessWindow",), "latenessWindow"),
    (("catchUpWindow",), "catchUpWindow"),
    (("jitter",), "jitter"),
    (("overlapPolicy",), "overlapPolicy"),
    (("retry", "initialBackoff"), "retry.initialBackoff"),
    (("retry", "maxBackoff"), "retry.maxBackoff"),
    (("cutoverAt",), "cutoverAt"),
    (("horizon",), "horizon"),
    (("businessPeriod",), "businessPeriod"),
    (("task", "kind"), "task.kind"),
    (("task", "argv", 0), "task.argv[0]"),
    (("task", "argv", 1), "task.argv[1]"),
    (("task", "argv", 2), "task.argv[2]"),
    (("task", "cwd"), "task.cwd"),
    (("task", "env", "PIN"), "task.env.PIN"),
    (("task", "env", ENV_NAME), "task.env"),
    (("task", "timeout"), "task.timeout"),
    (("task", "effect"), "task.effect"),
    (("task", "verify", 1), "task.verify[1]"),
    ((UNKNOWN_KEY,), ""),
]

#: Fields any text a program or ledger can take is valid in: half the examples, so that many reach the engine.
FREE_TEXT = [f for f in FIELDS if f[1] in ("title", "task.argv[1]", "task.argv[2]", "task.env.PIN", "task.verify[1]")]

SPECIAL = [
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udcff",
    "\x1b]0;pwned\x07\x1b[2J",
    "\u202eevil",
    "",
    " ",
    "\n",
    "{nominal:%Y}\x00",
    "PT0.5S",
    "PT1.5S",
    "P9999999999D",
    "2026-01-01T00:00:00.5Z",
    "{period}{scheduledUtc}",
    "A=B",
    "$(reboot)",
    "%s%n",
    "/",
    "..",
]
#: Huge values as (piece, times): the text is built in the test, so that a failing example prints short.
HUGE = [("x", 200_000), ("é", 70_000), ("{nominal:%A %B}", 30), ("\x00", 1000), ("\ud800", 5)]
#: A text as (piece, times, tail): ``piece * times + tail``.
TEXT = st.one_of(
    st.tuples(st.just(""), st.just(0), st.text(st.characters(exclude_categories=()), max_size=40)),
    st.tuples(st.sampled_from(SPECIAL), st.just(1), st.sampled_from(["", "x", "\x00"])),
    st.sampled_from(HUGE).map(lambda huge: (huge[0], huge[1], "")),
)


def with_text(path: tuple[Any, ...], text: str, sid: str) -> dict[str, Any]:
    """The base document for schedule ``sid`` with ``text`` put at ``path``."""
    data: dict[str, Any] = json.loads(json.dumps(BASE))
    data["scheduleId"] = sid
    if path[0] is UNKNOWN_KEY:
        data[text] = "value"
        return data
    *parents, last = path
    holder: Any = data
    for part in parents:
        holder = holder[part]
    if last is ENV_NAME:
        holder[text] = "1"
    else:
        holder[last] = text
    return data


def schedctl(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def assert_refused(status: int, err: str, source: str, key: str | None) -> None:
    """Exit 2, each line naming the file, one of them naming ``key`` (when given), no traceback."""
    assert status == 2, err
    lines = err.splitlines()
    assert lines, "a refusal says why"
    for line in lines:
        assert line.startswith(f"{source}: "), err
        assert len(line) < 1000, f"a line of {len(line):,} characters: {line[:200]}"
    for marker in ("Traceback", "internal error", "Error:"):
        assert marker not in err, err
    if key is not None:
        named = [line[len(source) + 2 :] for line in lines]
        assert any(n.startswith(key) or n.startswith("(top level)") for n in named), err


def check_one(capsys: pytest.CaptureFixture[str], tmp_path: Path, url: str, data: dict[str, Any], key: str) -> str:
    """validate -> apply -> engine run --once for one document; which of them took it."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # \u escapes: any text, surrogates included
    source = str(path)
    status, _out, err = schedctl(capsys, "validate", source)
    if status != 0:
        assert_refused(status, err, source, key or None)
        return "refused by validate"
    status, _out, err = schedctl(capsys, "apply", source, "--db", url, "--now", APPLIED.isoformat())
    if status != 0:
        # apply checks what validation cannot: the program is there, cwd is a directory
        assert_refused(status, err, source, None)
        assert any(k in err for k in ("task.argv[0]", "task.verify[0]", "task.cwd")), err
        return "refused by apply"
    status, _out, err = schedctl(
        capsys, "engine", "run", "--once", "--allow-second", "--db", url, "--now", RUN.isoformat()
    )
    assert (status, err) == (0, ""), err
    with open_ledger(url, FixedClock(RUN)) as ledger, ledger.read() as session:
        sid = data["scheduleId"]
        occurrences = list(session.scalars(select(Occurrence).where(Occurrence.schedule_id == sid)))
        attempts = list(session.scalars(select(Attempt).join(Occurrence).where(Occurrence.schedule_id == sid)))
    assert not [o for o in occurrences if o.state in IN_FLIGHT], "the pass finished with every task"
    assert not [o for o in occurrences if o.state is S.UNKNOWN_EFFECT], "no task here has an unknown effect"
    for attempt in attempts:
        assert attempt.outcome is not None and attempt.finished_at is not None
    return "ran"


_ids = count()


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(field=st.one_of(st.sampled_from(FIELDS), st.sampled_from(FREE_TEXT)), parts=TEXT)
def test_any_text_in_any_field_is_refused_naming_its_key_or_runs(
    ledger_url: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    field: tuple[tuple[Any, ...], str],
    parts: tuple[str, int, str],
) -> None:
    path, key = field
    piece, times, tail = parts
    text = piece * times + tail
    sid = f"h{next(_ids)}"
    if path == ("scheduleId",):
        sid = text  # may collide with an earlier example's id only by being refused: h<n> ids are never fuzzed
        if text.startswith("h") and text[1:].isdigit():
            return
    named = key if path[0] is not UNKNOWN_KEY else ""
    event(check_one(capsys, tmp_path, ledger_url, with_text(path, text, sid), named))


# --- the cases of issue 11 ---------------------------------------------------------------------

ISSUE_CASES = [
    pytest.param(("task", "argv", 2), "b\x00c", "task.argv[2]: contains a NUL byte", id="nul_in_argv"),
    pytest.param(("task", "env", "PIN"), "48\x0021", "task.env.PIN: contains a NUL byte", id="nul_in_env_value"),
    pytest.param(("businessPeriod",), "{nominal:%Y}\x00", "businessPeriod: contains a NUL byte", id="nul_in_period"),
    pytest.param(("task", "cwd"), "/tmp\x00", "task.cwd: contains a NUL byte", id="nul_in_cwd"),
    pytest.param(("task", "argv", 1), "\ud800", "task.argv[1]: contains U+D800", id="surrogate_in_argv"),
    pytest.param(("title",), "\udfff", "title: contains U+DFFF", id="surrogate_in_title"),
    pytest.param(("task", "argv", 1), "x" * 200_000, "task.argv[1]: is 200,000 bytes", id="argument_too_long"),
    pytest.param(("businessPeriod",), "{nominal:%A}" * 40, "businessPeriod: gives periods of up to",
                 id="period_longer_than_the_ledger_stores"),
    pytest.param(("tzdbVersion",), "2025b" * 4, "tzdbVersion: ", id="tzdb_version_longer_than_the_ledger_stores"),
    pytest.param(("jitter",), "PT0.5S", "jitter: 'PT0.5S' is not a whole number of seconds", id="fraction_jitter"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "text", "line"), ISSUE_CASES)
@pytest.mark.parametrize("command", ["validate", "apply", "preview"])
def test_the_issue_cases_are_refused_by_every_command(
    ledger_url: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    path: tuple[Any, ...],
    text: str,
    line: str,
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(with_text(path, text, "evil")), encoding="utf-8")
    argv = [command, str(spec)]
    if command == "apply":
        argv += ["--db", ledger_url, "--now", APPLIED.isoformat()]
    status, out, err = schedctl(capsys, *argv)
    assert (status, out) == (2, "")
    [only] = err.splitlines()
    assert only.startswith(f"{spec}: {line}"), err
    status, out, err = schedctl(capsys, "schedules", "--db", ledger_url)
    assert "evil" not in out, "nothing was published"


INTERVAL = {k: v for k, v in BASE.items() if k not in ("rule", "start", "gapPolicy", "foldPolicy", "exclude")} | {
    "kind": "interval",
    "anchor": "2026-01-01T00:00:00Z",
}


@pytest.mark.parametrize("every", ["PT0.5S", "PT1.5S"])
def test_a_fractional_interval_is_refused_by_apply(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, every: str
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(INTERVAL | {"scheduleId": "half", "every": every}), encoding="utf-8")
    status, out, err = schedctl(capsys, "apply", str(spec), "--db", ledger_url, "--now", APPLIED.isoformat())
    assert (status, out) == (2, "")
    assert err == f"{spec}: every: '{every}' is not a whole number of seconds; durations are counted in whole seconds\n"


def test_a_spec_with_hostile_text_that_is_still_valid_runs(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = with_text(("task", "argv", 1), "\x1b]0;pwned\x07 \u202e {period} é", "odd")
    data["title"] = "tab\tand bell\x07"
    assert check_one(capsys, tmp_path, ledger_url, data, "task.argv[1]") == "ran"
    with open_ledger(ledger_url, FixedClock(RUN)) as ledger, ledger.read() as session:
        [attempt] = session.scalars(select(Attempt))
        assert attempt.outcome is S.SUCCEEDED
        assert attempt.stdout_tail is not None and "2026-03-01 13" in attempt.stdout_tail


def test_a_file_whose_name_is_not_utf8_is_published_without_its_name(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = tmp_path / os.fsdecode(b"caf\xe9.json")  # Latin-1 bytes in a name: no text the ledger can store
    spec.write_text(json.dumps(with_text(("title",), "café", "latin")), encoding="utf-8")
    status, _out, err = schedctl(capsys, "apply", str(spec), "--db", ledger_url, "--now", APPLIED.isoformat())
    assert (status, err) == (0, "")
    with open_ledger(ledger_url, FixedClock(RUN)) as ledger, ledger.read() as session:
        [revision] = session.scalars(select(Revision))
        assert (revision.schedule_id, revision.source_path) == ("latin", None)


def laughs(levels: int) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]" for p, n in zip("abcdefghi", "bcdefghij", strict=False)]
    return "\n".join(lines[:levels]) + "\n"


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        pytest.param("laughs.yaml", laughs(10), "holds more than 100,000 values once its aliases", id="billion_laughs"),
        pytest.param("deep.yaml", "a: " + "[" * 5000 + "]" * 5000, "nested more than 32 levels deep", id="deep_yaml"),
        pytest.param("deep.json", '{"a": ' + "[" * 5000 + "]" * 5000 + "}", "nested more than 32", id="deep_json"),
        pytest.param("dup.json", json.dumps(BASE)[:-1] + ', "revision": 2}', "the key 'revision' appears twice",
                     id="json_duplicate_key"),
    ],
)  # fmt: skip
def test_hostile_files_are_refused_by_apply(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, text: str, line: str
) -> None:
    spec = tmp_path / name
    spec.write_text(text, encoding="utf-8")
    status, out, err = schedctl(capsys, "apply", str(spec), "--db", ledger_url, "--now", APPLIED.isoformat())
    assert (status, out) == (2, "")
    [only] = err.splitlines()
    assert only.startswith(f"{spec}: ") and line in only, err


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["pause", "latin", "--note", os.fsdecode(b"caf\xe9")], id="note"),
        pytest.param(["pause", os.fsdecode(b"caf\xe9")], id="schedule_id"),
        pytest.param(["run-now", os.fsdecode(b"caf\xe9")], id="run_now"),
        pytest.param(["ledger", "--schedule", os.fsdecode(b"caf\xe9")], id="ledger_filter"),
        pytest.param(["attempts", os.fsdecode(b"caf\xe9")], id="occurrence_id"),
    ],
)
def test_command_line_text_that_is_not_utf8_is_refused(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(with_text(("title",), "t", "latin")), encoding="utf-8")
    assert schedctl(capsys, "apply", str(spec), "--db", ledger_url, "--now", APPLIED.isoformat())[0] == 0
    status, out, err = schedctl(capsys, *argv, "--db", ledger_url)
    assert (status, out) == (2, "")
    [only] = err.splitlines()
    assert "contains U+DCE9, a lone surrogate" in only, err


def test_a_revision_past_what_the_ledger_holds_is_refused(
    ledger_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(BASE | {"revision": 2**31}), encoding="utf-8")
    status, out, err = schedctl(capsys, "apply", str(spec), "--db", ledger_url, "--now", APPLIED.isoformat())
    assert (status, out) == (2, "")
    assert err == f"{spec}: revision: Input should be less than or equal to 2147483647\n"
