"""The runner's two ways to start a task, held to one table: ``posix_spawn`` (where it can
express the task) and ``Popen`` (a working folder, a program on a PATH of the task's own, a
platform without it). Real processes: exit codes, signals, a megabyte on each pipe, a timeout
that kills the whole group, a grandchild holding the pipe, programs that cannot start, the
exact environment, working folder, session, signal dispositions and descriptors."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.clock import FixedClock
from core.engine import libc_spawn, runner, spawning
from core.engine.runner import RunResult, TaskIdentity, prepare, run_command
from tests.engine.task_scripts import MEGABYTE_ON_EACH_PIPE, ignoring_sigterm, leaving_a_grandchild

PY = sys.executable
CLOCK = FixedClock(datetime(2026, 3, 8, 7, 0, tzinfo=UTC))
WHO = TaskIdentity("s", 1, "occ-1", None, "2026-03-08T02:30:00", None, None, "att-1", 1)


class Spawns:
    """Which way each task of a test was started, and the way a plain task is expected to start."""

    def __init__(self, expected: str) -> None:
        self.expected = expected
        self.ways: list[str] = []


@pytest.fixture(params=["posix_spawn", "popen"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Spawns]:
    """The runner as it is here (``posix_spawn``), and with ``Popen`` only; records which one started each task."""
    spawns = Spawns(str(request.param))
    if request.param == "popen":
        monkeypatch.setattr(spawning, "posix_spawn", None)
        monkeypatch.setattr(spawning, "posix_spawnp", None)
    for name in ("posix_spawn", "posix_spawnp"):
        real = getattr(spawning, name)
        if real is not None:
            monkeypatch.setattr(spawning, name, _noting(spawns, "posix_spawn", real))
    monkeypatch.setattr(spawning.subprocess, "Popen", _noting(spawns, "popen", subprocess.Popen))
    yield spawns


def _noting(spawns: Spawns, way: str, real: Any) -> Any:
    @functools.wraps(real)  # keeps what the runner asks of the real one (libc_spawn's closes_from)
    def call(*args: Any, **kwargs: Any) -> Any:
        spawns.ways.append(way)
        return real(*args, **kwargs)

    return call


def run(
    argv: list[str], *, timeout: float = 30.0, cwd: str | None = None, env: dict[str, str] | None = None
) -> RunResult:
    return run_command(prepare(argv, cwd, env or {}, WHO), timedelta(seconds=timeout), CLOCK)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# --- how it ends ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        pytest.param("import sys; print('done'); sys.exit(0)", (0, None, None, "done\n"), id="exit_0"),
        pytest.param("import sys; sys.stderr.write('bye'); sys.exit(3)", (3, None, None, ""), id="exit_3"),
        pytest.param("import sys; sys.exit(255)", (255, None, None, ""), id="exit_255"),
        pytest.param(
            "import os, signal; os.kill(os.getpid(), signal.SIGKILL)", (None, "signal", 9, ""), id="killed_by_sigkill"
        ),
        pytest.param(
            "import os, signal; signal.signal(signal.SIGTERM, signal.SIG_DFL); os.kill(os.getpid(), signal.SIGTERM)",
            (None, "signal", 15, ""),
            id="killed_by_sigterm",
        ),
    ],
)
def test_how_a_task_ends(way: Spawns, script: str, expected: tuple[Any, ...]) -> None:
    result = run([PY, "-c", script])
    assert (result.exit_status, result.error_class, result.signal, result.stdout_tail) == expected
    assert way.ways == [way.expected]


def test_a_megabyte_on_each_pipe(way: Spawns) -> None:
    result = run([PY, "-c", MEGABYTE_ON_EACH_PIPE], timeout=60)
    assert (result.exit_status, result.error_class) == (5, None)
    assert result.stdout_tail.endswith("END-OUT") and result.stderr_tail.endswith("END-ERR")
    assert "1,040,391 earlier bytes not kept" in result.stdout_tail  # 1 MiB + 7 bytes, less the 8 KiB tail
    assert way.ways == [way.expected]


def test_a_timeout_kills_the_whole_group(way: Spawns, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = ignoring_sigterm(pidfile)
    result = run([PY, "-c", script], timeout=1.0)
    assert (result.error_class, result.exit_status, result.signal) == ("timeout", None, signal.SIGKILL)
    assert result.stdout_tail == "started\n"
    assert not _running(int(pidfile.read_text()))


def test_a_grandchild_holding_the_pipe_is_not_waited_for(way: Spawns, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = leaving_a_grandchild(pidfile)
    began = time.monotonic()
    result = run([PY, "-c", script])
    took = time.monotonic() - began
    try:
        assert (result.exit_status, result.error_class, result.stdout_tail) == (0, None, "parent done\n")
        assert took < 10, f"waited {took:.2f} s for a pipe the grandchild holds"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)


# --- what cannot start, in the same words both ways ------------------------------------------


def _not_executable(tmp_path: Path) -> list[str]:
    plain = tmp_path / "notes.sh"
    plain.write_text("echo hi\n")
    plain.chmod(0o644)
    return [str(plain)]


def _no_format(tmp_path: Path) -> list[str]:
    binary = tmp_path / "garbage"
    binary.write_bytes(b"\x00\x01\x02\x03 not a program")
    binary.chmod(0o755)
    return [str(binary)]


@pytest.mark.parametrize(
    ("argv", "env", "words"),
    [
        pytest.param(
            ["/nonexistent/tidemark-task"],
            {},
            "cannot start /nonexistent/tidemark-task: No such file or directory",
            id="missing_absolute",
        ),
        pytest.param(
            ["tidemark-no-such-program"],
            {},
            "cannot start tidemark-no-such-program: No such file or directory",
            id="missing_on_path",
        ),
        pytest.param("NOT_EXECUTABLE", {}, "Permission denied", id="not_executable"),
        pytest.param("NO_FORMAT", {}, "Exec format error", id="not_a_program"),
        pytest.param(["true", "a\0b"], {}, "cannot start true: ValueError: embedded null byte", id="nul_in_argv"),
        pytest.param(["true"], {"A": "a\0b"}, "cannot start true: ValueError: embedded null byte", id="nul_in_env"),
        pytest.param(
            ["true"], {"A=B": "x"}, "cannot start true: ValueError: illegal environment variable name", id="eq_in_name"
        ),
        pytest.param(
            ["true"],
            {"=A=": "x"},
            "cannot start true: ValueError: illegal environment variable name",
            id="eq_after_first",
        ),
        pytest.param(["true", "\ud800"], {}, "UnicodeEncodeError", id="surrogate_in_argv"),
    ],
)
def test_what_cannot_start_is_said_the_same_way(
    way: Spawns, tmp_path: Path, argv: list[str] | str, env: dict[str, str], words: str
) -> None:
    if argv == "NOT_EXECUTABLE":
        argv = _not_executable(tmp_path)
    elif argv == "NO_FORMAT":
        argv = _no_format(tmp_path)
    assert isinstance(argv, list)
    # Rendered first, then given what the system cannot pass (prepare's digest would refuse some of it).
    command = dataclasses.replace(prepare(["true"], None, {}, WHO), argv=argv)
    command = dataclasses.replace(command, env=command.env | env)
    result = run_command(command, timedelta(seconds=30), CLOCK)
    assert (result.error_class, result.exit_status, result.pid, result.stdout_tail) == ("spawn_error", None, None, "")
    assert words in result.stderr_tail
    assert result.stderr_tail.startswith(f"cannot start {runner.printable(argv[0])}: ")


# --- what the task finds around it ------------------------------------------------------------

REPORT = """
import json, os, signal, sys
status = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines() if ':' in line)
print(json.dumps({
    'cwd': os.getcwd(),
    'own_session': os.getsid(0) == os.getpid(),
    'group_leader': os.getpgid(0) == os.getpid(),
    'stdin': os.read(0, 10).decode(),
    'fds': sorted(int(fd) for fd in os.listdir('/proc/self/fd')),
}))
"""


def _reported(result: RunResult) -> dict[str, Any]:
    assert result.succeeded, result.stderr_tail
    seen: dict[str, Any] = json.loads(result.stdout_tail)
    return seen


def test_the_task_finds_exactly_its_environment(way: Spawns) -> None:
    """The prepared environment and nothing else (read by ``env``, which adds nothing, unlike Python)."""
    command = prepare(["env", "-0"], None, {"MY_VAR": "1 2", "EMPTY": ""}, WHO, base_env={"PATH": os.environ["PATH"]})
    result = run_command(command, timedelta(seconds=30), CLOCK)
    assert result.succeeded, result.stderr_tail
    seen = dict(item.split("=", 1) for item in result.stdout_tail.split("\0") if item)
    assert seen == command.env
    assert way.ways == [way.expected]


def test_the_task_finds_its_session_and_no_descriptor_of_the_engine(way: Spawns) -> None:
    """An inheritable descriptor of the engine's stays out (as Popen's close_fds); stdin is empty;
    the task leads its own session and group."""
    leak = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(leak, True)
    try:
        seen = _reported(run([PY, "-c", REPORT]))
    finally:
        os.close(leak)
    assert (seen["own_session"], seen["group_leader"], seen["stdin"]) == (True, True, "")
    assert seen["fds"] in ([0, 1, 2], [0, 1, 2, 3])  # 3: the listing's own descriptor
    assert way.ways == [way.expected]


def test_a_working_folder_is_used_and_started_by_popen(way: Spawns, tmp_path: Path) -> None:
    """posix_spawn has no working folder here (Python 3.11): such a task starts the other way."""
    seen = _reported(run([PY, "-c", REPORT], cwd=str(tmp_path)))
    assert Path(seen["cwd"]).resolve() == tmp_path.resolve()
    assert way.ways == ["popen"]


def test_a_program_on_a_path_of_the_tasks_own_is_found_there(way: Spawns, tmp_path: Path) -> None:
    """The task's PATH decides where its program is, as Popen decides (posix_spawnp would search the engine's)."""
    own = tmp_path / "bin"
    own.mkdir()
    program = own / "tidemark-own-program"
    program.write_text("#!/bin/sh\necho from my own PATH\n")
    program.chmod(0o755)
    result = run(["tidemark-own-program"], env={"PATH": f"{own}{os.pathsep}{os.environ['PATH']}"})
    assert (result.exit_status, result.stdout_tail) == (0, "from my own PATH\n")
    assert way.ways == ["popen"]


def _ignored(result: RunResult) -> int:
    line = next(line for line in result.stdout_tail.splitlines() if line.startswith("SigIgn:"))
    return int(line.split()[1], 16)


def test_signals_python_ignores_are_back_to_their_defaults(way: Spawns) -> None:
    """Python ignores SIGPIPE (and SIGXFSZ); a task gets them back as Popen gives them (``restore_signals``),
    so ``yes | head`` in its script ends as it would from a shell. Read by ``cat``, which changes nothing."""
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN  # the engine's own
    result = run(["cat", "/proc/self/status"])
    ignored = _ignored(result)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not ignored & (1 << (sig - 1)), f"{sig.name} is ignored in the task"
    assert way.ways == [way.expected]


def test_the_engine_runs_tasks_with_posix_spawn_here() -> None:
    """Linux with glibc: the light way is there, and is the one taken for a plain task."""
    assert spawning.posix_spawn is not None and spawning.posix_spawnp is not None
    child, stdout, stderr = spawning.spawn(prepare(["true"], None, {}, WHO))
    try:
        assert isinstance(child, spawning.Spawned)
        assert child.wait() == 0
    finally:
        os.close(stdout)
        os.close(stderr)


def test_a_failed_start_leaves_no_descriptor_open(way: Spawns) -> None:
    before = sorted(os.listdir("/proc/self/fd"))
    for _ in range(20):
        assert run(["/nonexistent/tidemark-task"]).error_class == "spawn_error"
        assert run([PY, "-c", "pass"]).succeeded
    assert sorted(os.listdir("/proc/self/fd")) == before


def test_an_error_from_on_started_reaps_the_task(way: Spawns) -> None:
    """The engine could not take note of the task: its group is killed and reaped, not left a zombie."""
    pids: list[int] = []

    def broken(pid: int) -> None:
        pids.append(pid)
        raise RuntimeError("no note")

    command = prepare([PY, "-c", "import time; time.sleep(60)"], None, {}, WHO)
    with pytest.raises(RuntimeError, match="no note"):
        run_command(command, timedelta(seconds=30), CLOCK, on_started=broken)
    with pytest.raises(psutil.NoSuchProcess):
        psutil.Process(pids[0]).status()


@pytest.mark.skipif(
    libc_spawn.posix_spawn is None, reason="a C library without posix_spawn_file_actions_addclosefrom_np"
)
def test_the_c_librarys_spawn_closes_the_engines_descriptors_without_listing_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """glibc 2.34 and later: the spawn is the C library's (called without the GIL), and it closes every
    descriptor above stderr in the child (``addclosefrom_np``) instead of the runner listing its own."""
    assert (spawning.posix_spawn, spawning.posix_spawnp) == (libc_spawn.posix_spawn, libc_spawn.posix_spawnp)
    listed: list[object] = []
    real = os.listdir
    monkeypatch.setattr(spawning.os, "listdir", lambda path=".": listed.append(path) or real(path))
    leak = os.open(os.devnull, os.O_RDONLY)
    high = os.dup2(leak, 900)  # inheritable, as dup2 makes it
    try:
        result = run([PY, "-c", REPORT])
    finally:
        os.close(high)
        os.close(leak)
    monkeypatch.undo()
    assert _reported(result)["fds"] in ([0, 1, 2], [0, 1, 2, 3])  # 3: the listing's own descriptor
    assert listed == []


@pytest.mark.skipif(
    libc_spawn.posix_spawn is None, reason="a C library without posix_spawn_file_actions_addclosefrom_np"
)
@settings(max_examples=40, deadline=None)
@given(
    env=st.dictionaries(
        st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True),
        st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\0"), max_size=20)
        | st.sampled_from(["", "caf\udce9", "a=b=c"]),  # an undecodable byte as Python holds it; '=' in a value
        max_size=8,
    )
)
def test_the_c_librarys_spawn_hands_over_the_environment_as_os_fsencode_encodes_it(env: dict[str, str]) -> None:
    """What ``env -0`` prints is each variable as ``os.fsencode`` encodes it, in order, nothing else."""
    out_r, out_w = os.pipe()
    try:
        assert libc_spawn.posix_spawnp is not None
        pid = libc_spawn.posix_spawnp(
            "env", ["env", "-0"], {"PATH": os.environ["PATH"], **env}, file_actions=[(os.POSIX_SPAWN_DUP2, out_w, 1)]
        )
        os.close(out_w)
        printed = b""
        while chunk := os.read(out_r, 65536):
            printed += chunk
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    finally:
        os.close(out_r)
    expected = [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in {"PATH": os.environ["PATH"], **env}.items()]
    assert printed.split(b"\0")[:-1] == expected


@pytest.mark.skipif(
    libc_spawn.posix_spawn is None, reason="a C library without posix_spawn_file_actions_addclosefrom_np"
)
def test_other_threads_run_while_the_c_librarys_spawn_waits_for_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spawn returns once the child has called exec; here the child first walks 100,000 folders of
    the engine's PATH that do not exist. Another thread goes on meanwhile (``os.posix_spawn`` held the
    GIL for all of it: such a thread got at most one turn)."""
    monkeypatch.setenv(
        "PATH", os.pathsep.join([f"/nonexistent/tidemark-{i}" for i in range(100_000)] + ["/usr/bin", "/bin"])
    )
    assert libc_spawn.posix_spawnp is not None
    turns = 0
    stop = threading.Event()

    def other() -> None:
        nonlocal turns
        while not stop.is_set():
            turns += 1
            time.sleep(0)  # gives the GIL up and takes it again

    thread = threading.Thread(target=other)
    thread.start()
    try:
        time.sleep(0.01)
        before = turns
        pid = libc_spawn.posix_spawnp("true", ["true"], {})
        during = turns - before
    finally:
        stop.set()
        thread.join()
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert during >= 10
