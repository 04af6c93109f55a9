"""A crontab or unit file is cut into lines and words where cron, sh and systemd cut it, never at
the other breaks and spaces Unicode knows: a comment stays a comment, a word stays one word.
What no import can hold is refused in one line, exit 2, nothing written: a Unicode digit, a
``Unit=`` that is a path, more lines than the stated limits. Every case is a real file given to
``schedctl import``."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.importing import systemd_merge
from core.importing.crontab_file import MAX_JOBS, MAX_VARIABLES
from core.importing.sources import ImportFileError, review_files
from core.importing.systemd import MAX_CALENDARS
from core.importing.systemd_calendar import Component, parse_calendar
from core.spec.files import load_spec
from tests.core.conftest import Run

NOW = ["--now", "2026-03-01T12:00:00Z"]
NOW_INSTANT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
#: What str.splitlines() ends a line at and cron, sh and systemd do not.
UNICODE_BREAKS = [
    pytest.param("\u2028", id="line_separator_u2028"),
    pytest.param("\u2029", id="paragraph_separator_u2029"),
    pytest.param("\u0085", id="next_line_u0085"),
]
SERVICE = "[Service]\nExecStart=/usr/bin/backup\n"
TIMER = "[Timer]\nOnCalendar=*-*-* 02:30 UTC\n"


def _specs(folder: Path) -> dict[str, Any]:
    """The specs written, by file name: their argv, env and rule."""
    found = {}
    for path in sorted(folder.glob("*.yaml")):
        spec = load_spec(path)
        found[path.name] = (spec.task.argv, dict(spec.task.env), spec.rule)
    return found


def _import_crontab(run: Run, tmp_path: Path, text: str) -> tuple[int, str, str, Path]:
    crontab = tmp_path / "crontab.txt"
    crontab.write_bytes(text.encode("utf-8"))
    out = tmp_path / "specs"
    status, stdout, stderr = run("import", "crontab", str(crontab), "--zone", "UTC", "--out", str(out), *NOW)
    return status, stdout, stderr, out


def _import_timer(run: Run, tmp_path: Path, timer: str, service: str = SERVICE) -> tuple[int, str, str, Path]:
    (tmp_path / "backup.timer").write_bytes(timer.encode("utf-8"))
    (tmp_path / "backup.service").write_bytes(service.encode("utf-8"))
    out = tmp_path / "specs"
    status, stdout, stderr = run("import", "systemd", str(tmp_path / "backup.timer"), "--out", str(out), *NOW)
    return status, stdout, stderr, out


def _refused(found: tuple[int, str, str, Path], fragment: str) -> None:
    """One line on stderr holding ``fragment``, exit 2, nothing written."""
    status, stdout, stderr, out = found
    assert (status, stdout) == (2, "")
    assert fragment in stderr and stderr.count("\n") == 1, stderr
    assert not out.exists()


# --- comments that stay comments -------------------------------------------------------


@pytest.mark.parametrize("brk", UNICODE_BREAKS)
def test_a_crontab_comment_holding_a_unicode_break_stays_a_comment(run: Run, tmp_path: Path, brk: str) -> None:
    text = f"# retired{brk}* * * * * /usr/bin/wipe --all\n0 3 * * * /usr/bin/backup\n"
    status, stdout, stderr, out = _import_crontab(run, tmp_path, text)
    assert (status, stderr) == (0, "")
    assert _specs(out) == {"backup.yaml": (["/usr/bin/backup"], {}, "FREQ=DAILY;BYHOUR=3;BYMINUTE=0")}
    assert "wipe" not in stdout


@pytest.mark.parametrize("brk", UNICODE_BREAKS)
def test_a_service_comment_holding_a_unicode_break_sets_no_environment(run: Run, tmp_path: Path, brk: str) -> None:
    service = f"[Service]\n# was: preload{brk}Environment=LD_PRELOAD=/tmp/evil.so\nExecStart=/usr/bin/backup\n"
    status, stdout, stderr, out = _import_timer(run, tmp_path, TIMER, service)
    assert (status, stderr) == (0, "")
    assert _specs(out) == {"backup.yaml": (["/usr/bin/backup"], {}, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30")}
    assert "LD_PRELOAD" not in stdout


@pytest.mark.parametrize("brk", UNICODE_BREAKS)
def test_a_timer_comment_holding_a_unicode_break_adds_no_schedule(run: Run, tmp_path: Path, brk: str) -> None:
    timer = f"[Timer]\n# was{brk}OnCalendar=minutely\nOnCalendar=*-*-* 02:30 UTC\n"
    status, _, stderr, out = _import_timer(run, tmp_path, timer)
    assert (status, stderr) == (0, "")
    assert _specs(out) == {"backup.yaml": (["/usr/bin/backup"], {}, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30")}


STEP = "the step must be a whole number above 0"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        # str.splitlines() also ends a line at these; cron does not, and no crontab holds them.
        pytest.param("# x\r* * * * * /usr/bin/wipe\n", "line 1: a control character (U+000D)", id="lone_cr"),
        pytest.param("# x\x0b* * * * * /usr/bin/wipe\n", "line 1: a control character (U+000B)", id="vertical_tab"),
        pytest.param("# x\x0c* * * * * /usr/bin/wipe\n", "line 1: a control character (U+000C)", id="form_feed"),
        pytest.param("# x\x1e* * * * * /usr/bin/wipe\n", "line 1: a control character (U+001E)", id="record_sep"),
        # Fields are separated by space and tab: a no-break space is part of the minute field.
        pytest.param("0\u00a03 * * * * /bin/x\n", "line 1: minute '0\\xa03' is not a number", id="nbsp_field"),
        # str.isdigit() takes these, cron does not (int() of a superscript was a traceback).
        pytest.param("*/\u00b2 * * * * /bin/x\n", f"line 1: minute '*/²': {STEP}", id="superscript_step"),
        pytest.param("0 */\u0663 * * * /bin/x\n", f"line 1: hour '*/٣': {STEP}", id="arabic_step"),
        pytest.param("0 1-5/\u00b2 * * * /bin/x\n", f"line 1: hour '1-5/²': {STEP}", id="range_step"),
        pytest.param("\u00b2 * * * * /bin/x\n", "line 1: minute '²' is not a number", id="superscript_minute"),
        pytest.param("0 0 \u0663 * * /bin/x\n", "line 1: day of month '٣' is not a number", id="arabic_day"),
    ],
)
def test_what_cron_does_not_read_is_refused_in_one_line(run: Run, tmp_path: Path, text: str, fragment: str) -> None:
    _refused(_import_crontab(run, tmp_path, text), fragment)


def test_a_crontab_with_crlf_line_ends_reads_as_its_lines(run: Run, tmp_path: Path) -> None:
    status, _, stderr, out = _import_crontab(run, tmp_path, "FOO=bar\r\n0 3 * * * /usr/bin/backup\r\n")
    assert (status, stderr) == (0, "")
    assert _specs(out) == {"backup.yaml": (["/usr/bin/backup"], {"FOO": "bar"}, "FREQ=DAILY;BYHOUR=3;BYMINUTE=0")}


@pytest.mark.parametrize(
    "end",
    [pytest.param("\r", id="cr"), pytest.param("\r\n", id="crlf"), pytest.param("\n\r", id="lfcr")],
)
def test_a_unit_line_ends_where_systemd_ends_it(run: Run, tmp_path: Path, end: str) -> None:
    """systemd's read_line ends a line at \\r too: what follows a comment there is a setting to
    systemd, so the import reads it as one (and imports what systemd runs)."""
    timer = f"[Timer]{end}# old{end}OnCalendar=*-*-* 02:30 UTC{end}Persistent=true{end}"
    status, _, stderr, out = _import_timer(run, tmp_path, timer)
    assert (status, stderr) == (0, "")
    assert _specs(out) == {"backup.yaml": (["/usr/bin/backup"], {}, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30")}
    assert load_spec(out / "backup.yaml").max_catch_up == 1


# --- words that stay words -----------------------------------------------------------------

RM = "/bin/rm\u00a0-rf\u00a0/srv/data"


@pytest.mark.parametrize(
    ("crontab", "argv"),
    [
        pytest.param(f"0 3 * * * {RM}\n", [RM], id="nbsp_is_part_of_the_word"),
        pytest.param("0 3 * * * /bin/echo\ta  b\n", ["/bin/echo", "a", "b"], id="tab_and_spaces_split"),
        pytest.param("0 3 * * * /bin/echo a\u2003b\n", ["/bin/echo", "a\u2003b"], id="em_space_is_part_of_the_word"),
        pytest.param("0\t3 * * *\t/bin/echo x\n", ["/bin/echo", "x"], id="tab_separates_fields"),
    ],
)
def test_a_crontab_command_is_split_into_words_as_sh_splits_it(
    run: Run, tmp_path: Path, crontab: str, argv: list[str]
) -> None:
    status, _, stderr, out = _import_crontab(run, tmp_path, crontab)
    assert (status, stderr) == (0, "")
    [(written, _, _)] = _specs(out).values()
    assert written == argv


@pytest.mark.parametrize(
    ("service", "argv"),
    [
        pytest.param(f"[Service]\nExecStart={RM}\n", [RM], id="nbsp_is_part_of_the_word"),
        pytest.param(
            "[Service]\nEnvironment=ARGS=a\u00a0b\nExecStart=/bin/echo $ARGS\n",
            ["/bin/echo", "a\u00a0b"],
            id="variable_split_at_whitespace_only",
        ),
        pytest.param("[Service]\nExecStart=/bin/echo x\u00a0\n", ["/bin/echo", "x\u00a0"], id="nbsp_is_not_stripped"),
    ],
)
def test_a_service_command_is_split_into_words_as_systemd_splits_it(
    run: Run, tmp_path: Path, service: str, argv: list[str]
) -> None:
    status, _, stderr, out = _import_timer(run, tmp_path, TIMER, service)
    assert (status, stderr) == (0, "")
    assert [written for written, _, _ in _specs(out).values()] == [argv]


# --- Unicode digits ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "fragment"),
    [
        pytest.param("OnCalendar=*-*-* \u00b2:00 UTC", "hour '²' is not a number", id="calendar_hour"),
        pytest.param("OnCalendar=*-*-* 02:00/\u0663 UTC", "step '٣' is not a number", id="calendar_step"),
        pytest.param("OnCalendar=\u0662\u0660\u0662\u0667-*-* 02:00 UTC", "is not a number", id="calendar_year"),
        pytest.param("RandomizedDelaySec=\u0663s", "is not a time span", id="span"),
    ],
)
def test_a_unicode_digit_in_a_timer_is_refused_in_one_line(
    run: Run, tmp_path: Path, setting: str, fragment: str
) -> None:
    _refused(_import_timer(run, tmp_path, f"[Timer]\nOnCalendar=daily\n{setting}\n"), fragment)


# --- Unit= names, never paths --------------------------------------------------------------

SECRET = "TOPSECRET first line of a file no import should read"


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    """A timer two folders down, and a secret file beside the folder above them."""
    (tmp_path / "secret.service").write_text(f"{SECRET}\n", encoding="utf-8")
    (tmp_path / "secret").write_text(f"{SECRET}\n", encoding="utf-8")
    folder = tmp_path / "a" / "b"
    folder.mkdir(parents=True)
    (folder / "job.service").write_text(SERVICE, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("unit", "fragment"),
    [
        pytest.param("/etc/passwd", "'/etc/passwd' is not a unit name", id="absolute_path"),
        pytest.param("../../etc/hostname", "'../../etc/hostname' is not a unit name", id="relative_path"),
        pytest.param("../../secret.service", "'../../secret.service' is not a unit name", id="path_to_a_service"),
        pytest.param("{root}/secret", "is not a unit name", id="absolute_path_to_secret"),
        pytest.param("secret", "'secret' is not a unit name", id="no_type"),
        pytest.param("job.target", "job.target is not a .service", id="not_a_service"),
        pytest.param("job@.service", "job@.service is a template", id="template"),
        pytest.param("job\u00a0x.service", "is not a unit name", id="nbsp_in_name"),
    ],
)
def test_unit_takes_a_unit_name_and_never_opens_a_path(
    run: Run, tmp_path: Path, nested: Path, unit: str, fragment: str
) -> None:
    timer = nested / "job.timer"
    timer.write_text(f"[Timer]\nOnCalendar=daily\nUnit={unit.format(root=tmp_path)}\n", encoding="utf-8")
    out = tmp_path / "specs"
    status, stdout, stderr = run("import", "systemd", str(timer), "--zone", "UTC", "--out", str(out), *NOW)
    assert (status, stdout) == (2, "")
    assert stderr.startswith(f"{timer}: line 3: Unit=: ") and fragment in stderr and stderr.count("\n") == 1, stderr
    assert "TOPSECRET" not in stderr and "root:" not in stderr
    assert not out.exists()


def test_the_window_import_refuses_a_unit_path_too(tmp_path: Path, nested: Path) -> None:
    timer = nested / "job.timer"
    timer.write_text("[Timer]\nOnCalendar=daily\nUnit=../../secret.service\n", encoding="utf-8")
    with pytest.raises(ImportFileError) as caught:
        review_files([timer], zone="UTC", now=NOW_INSTANT)
    assert "is not a unit name" in str(caught.value) and "TOPSECRET" not in str(caught.value)


def test_unit_names_a_service_beside_the_timer(run: Run, tmp_path: Path, nested: Path) -> None:
    (nested / "nightly-job@x.service").write_text("[Service]\nExecStart=/usr/bin/nightly\n", encoding="utf-8")
    timer = nested / "job.timer"
    timer.write_text("[Timer]\nOnCalendar=*-*-* 02:30\nUnit=nightly-job@x.service\n", encoding="utf-8")
    out = tmp_path / "specs"
    status, stdout, stderr = run("import", "systemd", str(timer), "--zone", "UTC", "--out", str(out), *NOW)
    assert (status, stderr) == (0, "")
    assert "job.timer (runs nightly-job@x.service):" in stdout
    assert _specs(out) == {"job.yaml": (["/usr/bin/nightly"], {}, "FREQ=DAILY;BYHOUR=2;BYMINUTE=30")}


def test_unit_path_through_a_real_schedctl_process(tmp_path: Path, nested: Path) -> None:
    timer = nested / "job.timer"
    timer.write_text("[Timer]\nOnCalendar=daily\nUnit=/etc/passwd\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "core.cli", "import", "systemd", str(timer), "--zone", "UTC", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"{timer}: line 3: Unit=: '/etc/passwd' is not a unit name (letters, digits and :-_.\\, perhaps @instance, "
        "then a type such as .service); a timer's unit is found by its name beside the timer, never by a path"
    ]


# --- limits ----------------------------------------------------------------------------------


def _variables(count: int) -> str:
    return "".join(f"V{i}=x\n" for i in range(count))


def _calendars(count: int) -> str:
    return "[Timer]\n" + "".join(f"OnCalendar={2030 + i}-*-* {i % 24:02d}:{i % 60:02d} UTC\n" for i in range(count))


@pytest.mark.parametrize(
    ("kind", "text", "fragment"),
    [
        pytest.param(
            "crontab",
            _variables(MAX_VARIABLES + 1) + "0 3 * * * /usr/bin/backup\n",
            f"line {MAX_VARIABLES + 1}: more than {MAX_VARIABLES} variable lines (NAME=value); "
            f"a crontab sets at most {MAX_VARIABLES}",
            id="variables",
        ),
        pytest.param(
            "crontab",
            "".join(f"V=x\n0 3 * * * /usr/bin/job{i}\n" for i in range(MAX_VARIABLES + 1)),
            f"line {2 * MAX_VARIABLES + 1}: more than {MAX_VARIABLES} variable lines",
            id="variables_between_jobs",
        ),
        pytest.param(
            "crontab",
            "".join(f"0 3 * * * /usr/bin/job{i}\n" for i in range(MAX_JOBS + 1)),
            f"line {MAX_JOBS + 1}: more than {MAX_JOBS:,} jobs",
            id="jobs",
        ),
        pytest.param(
            "timer",
            _calendars(MAX_CALENDARS + 1),
            f"line {MAX_CALENDARS + 2}: more than {MAX_CALENDARS} OnCalendar= lines; "
            f"a timer holds at most {MAX_CALENDARS}",
            id="calendars",
        ),
        pytest.param(
            "timer",
            "[Timer]\n" + "OnCalendar=daily\nOnCalendar=\n" * (MAX_CALENDARS // 2) + "OnCalendar=daily\n",
            f"line {MAX_CALENDARS + 2}: more than {MAX_CALENDARS} OnCalendar= lines",
            id="calendars_with_resets",
        ),
    ],
)
def test_beyond_a_stated_limit_is_refused_in_one_line(
    run: Run, tmp_path: Path, kind: str, text: str, fragment: str
) -> None:
    read = _import_crontab if kind == "crontab" else _import_timer
    _refused(read(run, tmp_path, text), fragment)


def test_at_the_limits_the_import_reads(run: Run, tmp_path: Path) -> None:
    (tmp_path / "cron").mkdir()
    (tmp_path / "timer").mkdir()
    text = _variables(MAX_VARIABLES) + "0 3 * * * /usr/bin/b\n"
    status, _, stderr, out = _import_crontab(run, tmp_path / "cron", text)
    assert (status, stderr) == (0, "")
    [(_, env, _)] = _specs(out).values()
    assert len(env) == MAX_VARIABLES
    status, _, stderr, out = _import_timer(run, tmp_path / "timer", _calendars(MAX_CALENDARS))
    assert (status, stderr) == (0, "")
    assert len(list(out.glob("*.yaml"))) == MAX_CALENDARS


def _compares(monkeypatch: pytest.MonkeyPatch, expressions: list[str]) -> int:
    """How many times joining the expressions compares two components."""
    calendars = [parse_calendar(text) for text in expressions]
    count = 0
    equal = Component.__eq__

    def counted(self: Component, other: object) -> bool:
        nonlocal count
        count += 1
        return equal(self, other)

    monkeypatch.setattr(Component, "__eq__", counted)
    systemd_merge.merge_calendars(calendars)
    monkeypatch.undo()
    return count


@pytest.mark.parametrize(
    "expression",
    [
        # no two join: each pair differs in year, hour and minute
        pytest.param(lambda i: f"{1970 + i}-*-* {i % 24:02d}:{i % 60:02d}", id="none_join"),
        # all join into one: they differ in the hour only
        pytest.param(lambda i: f"*-*-* {i % 24:02d}:00", id="all_join"),
        # they join by month, then the joined ones by day
        pytest.param(lambda i: f"*-{i % 12 + 1:02d}-{i // 12 % 28 + 1:02d} 02:00", id="join_in_turn"),
    ],
)
def test_joining_expressions_costs_their_number_not_its_square(
    monkeypatch: pytest.MonkeyPatch, expression: Any
) -> None:
    """Counted, not timed: the components compared grow with the expressions, not with their
    pairs (a thousand OnCalendar= lines once took minutes)."""
    small = _compares(monkeypatch, [expression(i) for i in range(MAX_CALENDARS // 2)])
    large = _compares(monkeypatch, [expression(i) for i in range(MAX_CALENDARS)])
    assert large <= 20 * MAX_CALENDARS
    assert large <= 2.5 * small + 20
