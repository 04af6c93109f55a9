"""The runner: argv without a shell, identity in env and placeholders, timeouts
that kill the whole process group, bounded tails, and the input digest."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.clock import FixedClock
from core.engine import spawning
from core.engine.runner import (
    TaskIdentity,
    input_digest,
    prepare,
    render_argv,
    run_command,
)

PY = sys.executable
CLOCK = FixedClock(datetime(2026, 3, 8, 7, 0, tzinfo=UTC))


def identity(attempt: int = 1) -> TaskIdentity:
    return TaskIdentity(
        schedule_id="daily-ops-summary",
        revision=7,
        occurrence_id="occ-0123456789abcdef0123456789abcdef",
        logical_slot_id="slot-0123456789abcdef0123456789abcdef",
        nominal_local="2026-03-08T02:30:00",
        scheduled_utc="2026-03-08T07:00:00Z",
        business_period="2026-03-08",
        attempt_id=f"att-{attempt}",
        attempt_number=attempt,
    )


def test_placeholders_are_filled_and_other_braces_kept() -> None:
    argv = ["send", "--period", "{period}", "--id={occurrenceId}", "{nominalLocal}", "{scheduledUtc}", "{literal}"]
    assert render_argv(argv, identity()) == [
        "send",
        "--period",
        "2026-03-08",
        "--id=occ-0123456789abcdef0123456789abcdef",
        "2026-03-08T02:30:00",
        "2026-03-08T07:00:00Z",
        "{literal}",
    ]


def test_task_sees_its_identity_in_the_environment() -> None:
    script = (
        "import os, json; print(json.dumps({k: v for k, v in os.environ.items() if k.startswith(('SCHED_', 'MY_'))}))"
    )
    cmd = prepare([PY, "-c", script], None, {"MY_TOKEN": "s3cret"}, identity(), base_env={"PATH": os.environ["PATH"]})
    result = run_command(cmd, timedelta(seconds=30), CLOCK)
    assert result.succeeded, result.stderr_tail
    import json

    seen = json.loads(result.stdout_tail)
    assert seen == {
        "MY_TOKEN": "s3cret",
        "SCHED_SCHEDULE_ID": "daily-ops-summary",
        "SCHED_REVISION": "7",
        "SCHED_OCCURRENCE_ID": "occ-0123456789abcdef0123456789abcdef",
        "SCHED_LOGICAL_SLOT_ID": "slot-0123456789abcdef0123456789abcdef",
        "SCHED_NOMINAL_LOCAL": "2026-03-08T02:30:00",
        "SCHED_SCHEDULED_UTC": "2026-03-08T07:00:00Z",
        "SCHED_BUSINESS_PERIOD": "2026-03-08",
        "SCHED_ATTEMPT_ID": "att-1",
        "SCHED_ATTEMPT_NUMBER": "1",
    }
    assert cmd.env_names == ("MY_TOKEN",)


def test_arguments_never_pass_through_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    cmd = prepare([PY, "-c", "import sys; print(sys.argv[1])", f"; touch {marker}"], None, {}, identity())
    result = run_command(cmd, timedelta(seconds=30), CLOCK)
    assert result.stdout_tail.strip() == f"; touch {marker}"
    assert not marker.exists()


def test_working_folder_is_used(tmp_path: Path) -> None:
    cmd = prepare([PY, "-c", "import os; print(os.getcwd())"], str(tmp_path), {}, identity())
    result = run_command(cmd, timedelta(seconds=30), CLOCK)
    assert Path(result.stdout_tail.strip()).resolve() == tmp_path.resolve()


@pytest.mark.parametrize(
    ("code", "succeeded", "clean_failure"),
    [pytest.param(0, True, False, id="exit_0"), pytest.param(3, False, True, id="exit_3")],
)
def test_exit_status_is_recorded(code: int, succeeded: bool, clean_failure: bool) -> None:
    cmd = prepare([PY, "-c", f"import sys; sys.stderr.write('bye'); sys.exit({code})"], None, {}, identity())
    result = run_command(cmd, timedelta(seconds=30), CLOCK)
    assert (result.exit_status, result.error_class) == (code, None)
    assert (result.succeeded, result.clean_failure, result.outcome_lost) == (succeeded, clean_failure, False)
    assert result.stderr_tail == "bye"


def test_a_missing_program_never_started() -> None:
    cmd = prepare(["/nonexistent/tidemark-task"], None, {}, identity())
    result = run_command(cmd, timedelta(seconds=30), CLOCK)
    assert result.error_class == "spawn_error"
    assert result.clean_failure and not result.outcome_lost
    assert "/nonexistent/tidemark-task" in result.stderr_tail


def test_death_by_signal_loses_the_outcome() -> None:
    cmd = prepare([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"], None, {}, identity())
    result = run_command(cmd, timedelta(seconds=30), CLOCK)
    assert (result.error_class, result.signal, result.exit_status) == ("signal", 9, None)
    assert result.outcome_lost


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers; look at its state.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )
    cmd = prepare([PY, "-c", script], None, {}, identity())
    result = run_command(cmd, timedelta(seconds=1.5), CLOCK)
    assert result.error_class == "timeout"
    assert result.outcome_lost
    assert "started" in result.stdout_tail
    child = int(pidfile.read_text())
    assert not _alive(child)


def test_output_tails_are_bounded() -> None:
    script = "import sys; sys.stdout.write('x' * 100000 + 'END')"
    cmd = prepare([PY, "-c", script], None, {}, identity())
    result = run_command(cmd, timedelta(seconds=30), CLOCK, tail_bytes=1000)
    assert result.stdout_tail.endswith("END")
    assert "99,003 earlier bytes not kept" in result.stdout_tail
    assert len(result.stdout_tail) < 1100


#: A secret whose bytes are not UTF-8 (read from a Latin-1 file): 0xE9 and 0xFF held as surrogates.
SECRET = "Zq81-caf\udce9-\udcff-lamp"
#: Prints the secret in two writes, the tail's cut falling inside it, then whole on stderr.
SPLIT_SECRET = (
    "import os, sys; v = os.environb[b'TOKEN']; out = sys.stdout.buffer\n"
    "out.write(b'x' * 100 + v[:6]); out.flush()\n"
    "out.write(v[6:] + b'y' * 58); out.flush()\n"
    "sys.stderr.buffer.write(b'token ' + v + b'\\n')\n"
)


def test_a_secret_is_masked_in_the_bytes_before_the_tail_is_cut_or_decoded() -> None:
    """16 bytes of secret, not UTF-8, printed in two writes after 100 bytes and before 58, with a
    64-byte tail: its cut falls inside the secret. Masked in the stream, no piece of it is kept,
    neither its bytes nor the replacement characters they would decode to."""
    cmd = prepare([PY, "-c", SPLIT_SECRET], None, {"TOKEN": SECRET}, identity())
    result = run_command(replace(cmd, secrets=(SECRET,)), timedelta(seconds=30), CLOCK, tail_bytes=64)
    assert result.succeeded, result.stderr_tail
    assert result.stdout_tail == "[… 97 earlier bytes not kept]\n" + "xxx***" + "y" * 58
    assert result.stderr_tail == "token ***\n"


_BRACED = st.text() | st.lists(
    st.sampled_from(["{scheduledUtc}", "{nominalLocal}", "{occurrenceId}", "{period}", "{", "}", "x"])
).map("".join)


@given(period=_BRACED, nominal=_BRACED)
def test_placeholders_are_filled_in_one_pass(period: str, nominal: str) -> None:
    who = replace(identity(), business_period=period, nominal_local=nominal)
    argv = ["{period}", "{nominalLocal}{period}", "{{period}}"]
    assert render_argv(argv, who) == [period, nominal + period, "{" + period + "}"]


def test_an_input_digest_is_the_one_recorded_before() -> None:
    """Digests on attempt rows are compared across versions: the bytes hashed stay the same."""
    env = {"SCHED_SCHEDULE_ID": "a", "SCHED_REVISION": "2", "TOKEN": "s", "SCHED_ATTEMPT_ID": "z"}
    digest = input_digest(["run", "{x}", "é"], "/srv", env, ("TOKEN",), {"TOKEN": "vault-token"})
    assert digest == "b32a8e36d8889b960dde5ea895368917d20a79cc0d157654187a6a28a8e693da"


def test_input_digest_is_shared_by_attempts_and_leaves_env_values_out() -> None:
    first = prepare(["/bin/echo", "{period}"], None, {"TOKEN": "a"}, identity(1))
    retry = prepare(["/bin/echo", "{period}"], None, {"TOKEN": "a"}, identity(2))
    other_value = prepare(["/bin/echo", "{period}"], None, {"TOKEN": "b"}, identity(1))
    other_name = prepare(["/bin/echo", "{period}"], None, {"KEY": "a"}, identity(1))
    next_revision = prepare(["/bin/echo", "{period}"], None, {"TOKEN": "b"}, replace(identity(1), revision=8))
    assert first.digest == retry.digest == other_value.digest  # a value is no input of the digest
    assert first.digest != other_name.digest
    assert first.digest != next_revision.digest  # a changed value comes with a new revision
    assert len(first.digest) == 64
    assert first.digest == input_digest(first.argv, None, {"TOKEN": "a"} | identity(1).environment(), ("TOKEN",))


@pytest.mark.parametrize(
    ("program", "found"),
    [
        pytest.param(PY, True, id="absolute_executable"),
        pytest.param("/nonexistent/program", False, id="absolute_missing"),
        pytest.param("PLAIN_FILE", False, id="absolute_not_executable"),
        pytest.param("sh", True, id="on_path"),
        pytest.param("tidemark-no-such-program", False, id="not_on_path"),
    ],
)
def test_find_program(program: str, found: bool, tmp_path: Path) -> None:
    if program == "PLAIN_FILE":
        plain = tmp_path / "notes.txt"
        plain.write_text("not a program")
        plain.chmod(0o644)
        program = str(plain)
    assert (spawning.find_program(program) is not None) is found


# --- the one reader loop, with and without an exit notification --------------------------


@pytest.fixture(params=["pidfd", "polling"])
def exit_notice(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The runner with a pidfd (Linux), and as on a system without one."""
    if request.param == "polling":
        monkeypatch.setattr(spawning, "open_pidfd", lambda pid: None)
    return str(request.param)


def test_both_tails_and_the_exit_are_read_in_one_loop(exit_notice: str) -> None:
    script = "import sys\nfor i in range(2000):\n    print(i)\n    print(-i, file=sys.stderr)\nsys.exit(4)\n"
    before = threading.active_count()
    result = run_command(prepare([PY, "-c", script], None, {}, identity()), timedelta(seconds=30), CLOCK)
    assert (result.exit_status, result.error_class) == (4, None)
    assert result.stdout_tail.splitlines()[-1] == "1999" and result.stderr_tail.splitlines()[-1] == "-1999"
    assert threading.active_count() == before  # no reader threads


def test_a_grandchild_holding_the_pipe_is_not_waited_for(exit_notice: str) -> None:
    """The task exits at once; a child it left behind keeps stdout open for a minute."""
    script = (
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('parent done', flush=True)\n"
    )
    result = run_command(prepare([PY, "-c", script], None, {}, identity()), timedelta(seconds=30), CLOCK)
    assert result.pid is not None
    with contextlib.suppress(ProcessLookupError):
        os.killpg(result.pid, signal.SIGKILL)  # the grandchild, in the task's own group
    assert (result.exit_status, result.error_class) == (0, None)
    assert "parent done" in result.stdout_tail


def test_the_timeout_strikes_without_a_pidfd_too(exit_notice: str) -> None:
    cmd = prepare([PY, "-c", "import time; print('going', flush=True); time.sleep(60)"], None, {}, identity())
    result = run_command(cmd, timedelta(seconds=0.5), CLOCK)
    assert (result.error_class, result.exit_status) == ("timeout", None)
    assert result.stdout_tail == "going\n"
