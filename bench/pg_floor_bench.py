"""The floor of several engines on PostgreSQL: one engine's no-op dispatch replayed with plain psycopg.

What ``engine_bench.py --pg URL --engines 4 --task no-op`` compares (four engine processes
against one on the same 640 jobs) measured with the engine's Python stripped away, as
``engine_bench.py``'s ``sqlite_floor`` does for SQLite:

* One engine (announced, ``max_workers`` 4, the runner replaced by one that succeeds at once)
  runs the jobs of ``--schedules`` interval schedules on a fresh ledger, as a bench engine
  does (:mod:`team_bench`: its first pass before the work is due, then a pass that runs it
  all), while every call it makes on psycopg is recorded: each statement with its parameters,
  ``executemany``, commit, rollback and the pipelines, with the thread and connection that
  made it.
* The calls are cut into transactions. Those of the engine's pass thread (announcing, the
  first pass, the promotion, the listing, the first claims) are replayed first, untimed; the
  workers' transactions (each job's outcome and the next claim) are what is timed: the
  dispatch, as in ``sqlite_floor``.
* Each replay runs on a copy of the ledger as it was before the recording (a database made
  from it as a template), with plain psycopg: one thread and connection per recorded worker,
  each sending its worker's transactions in order. One process replays all of them; then
  ``--processes`` processes each replay a share of the schedules (the workers' transactions
  that name them), with as many threads as the engine had workers: engines in their own
  shares at best, never touching each other's rows.
* The same again with ``pgbench`` (when it is on PATH, or with ``--client pgbench``): each
  recorded worker's transactions of each share become a pgbench script (the values written
  into the statements, the pipelines as pgbench's), one pgbench process a script, all started
  together once connected: a C client, with no Python at all on the client's side.

Printed for each round, with the load average: jobs per second of the one and the several
replaying processes and their ratio (the floor of the engines' ratio on this machine: the
same processes and the server on the same cores, none of the engine's Python), and beside
it the engines' own ratio measured in the same round by :func:`team_bench.measure`. The
replaying processes' and the server's CPU per job are printed too.

Run by hand: ``.venv/bin/python bench/pg_floor_bench.py --pg URL [--runs N] [--serial]
[--client psycopg|pgbench] [--no-engines] [--quick]`` (``--pg`` defaults to
``TIDEMARK_TEST_PG_URL``; ``--serial``: each replaying process on one connection).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg
import team_bench
from benchkit import instant_success, server_cpu
from sqlalchemy import create_engine, make_url, text

from core.engine import run as run_stage
from core.engine.engine import Engine, EngineOptions
from core.engine.presence import announce
from core.ledger import open_ledger
from core.ledger.db import EVENT_LOCK_KEY
from core.ledger.states import EngineKind

#: A recorded call: (kind, sql, parameters); kind is execute, executemany, commit, rollback,
#: pipeline (a pipeline begins) or end (it ends).
Call = tuple[str, Any, Any]
_WORKER_THREAD = "tidemark-task"
#: What the server refused in this process (shown when a replay goes wrong).
REFUSALS: list[str] = []


@dataclass
class Transaction:
    """The calls of one transaction, as one thread sent them on one connection."""

    thread: str
    seq: int
    calls: list[Call] = field(default_factory=list)
    schedules: list[str] = field(default_factory=list)


class Recorder:
    """Every call made on psycopg while :meth:`recording`, with its thread and connection."""

    def __init__(self) -> None:
        self.on = False
        self.calls: list[tuple[int, str, int, Call]] = []
        self.lock = threading.Lock()

    def note(self, conn: Any, *call: Any) -> None:
        if self.on:
            thread = threading.current_thread()
            with self.lock:
                self.calls.append((len(self.calls), f"{thread.name}/{thread.ident}", id(conn), call))

    @contextmanager
    def recording(self) -> Iterator[None]:
        recorder = self
        cursor_execute, cursor_many = psycopg.Cursor.execute, psycopg.Cursor.executemany
        commit, rollback, pipeline = psycopg.Connection.commit, psycopg.Connection.rollback, psycopg.Connection.pipeline

        def execute(self: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
            recorder.note(self.connection, "execute", query, params)
            return cursor_execute(self, query, params, **kwargs)

        def executemany(self: Any, query: Any, rows: Any, **kwargs: Any) -> Any:
            rows = list(rows)
            recorder.note(self.connection, "executemany", query, rows)
            return cursor_many(self, query, rows, **kwargs)

        def committed(self: Any) -> None:
            recorder.note(self, "commit", None, None)
            commit(self)

        def rolled_back(self: Any) -> None:
            recorder.note(self, "rollback", None, None)
            rollback(self)

        @contextmanager
        def piped(self: Any) -> Iterator[Any]:
            recorder.note(self, "pipeline", None, None)
            try:
                with pipeline(self) as pipe:
                    yield pipe
            finally:
                recorder.note(self, "end", None, None)

        with ExitStack() as stack:
            for name, stand_in in (("execute", execute), ("executemany", executemany)):
                stack.enter_context(mock.patch.object(psycopg.Cursor, name, stand_in))
            for name, stand_in in (("commit", committed), ("rollback", rolled_back), ("pipeline", piped)):
                stack.enter_context(mock.patch.object(psycopg.Connection, name, stand_in))
            self.on = True
            try:
                yield
            finally:
                self.on = False

    def transactions(self) -> list[Transaction]:
        """The calls cut into transactions, in the order each began: a transaction ends with its
        commit or rollback, or with the pipeline that holds that."""
        open_: dict[tuple[str, int], tuple[Transaction, list[int]]] = {}
        done: list[Transaction] = []
        for seq, thread, conn, call in self.calls:
            key = (thread, conn)
            if key not in open_:
                open_[key] = (Transaction(thread, seq), [0, 0])  # pipeline depth, ended
            txn, state = open_[key]
            txn.calls.append(call)
            state[0] += {"pipeline": 1, "end": -1}.get(call[0], 0)
            state[1] = state[1] or call[0] in ("commit", "rollback")
            if state[1] and state[0] == 0:
                done.append(txn)
                del open_[key]
        done.extend(txn for txn, _ in open_.values())
        return sorted(done, key=lambda txn: txn.seq)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def name_schedules(transactions: list[Transaction], occurrences: dict[str, str]) -> None:
    """Note in each transaction the schedules its parameters name (directly, or by an
    occurrence's id), in the order named."""
    schedules = set(occurrences.values())
    for txn in transactions:
        for _kind, _sql, params in txn.calls:
            for value in _strings(params):
                sid = value if value in schedules else occurrences.get(value)
                if sid is not None and sid not in txn.schedules:
                    txn.schedules.append(sid)


@dataclass
class Recording:
    """One engine's pass, as transactions: ``before`` replayed untimed, ``workers`` timed."""

    before: list[Transaction]
    workers: list[Transaction]
    jobs: int


def record(url: str, per_schedule: int) -> Recording:
    """Run one engine over the ledger at ``url`` as a bench engine does, recording its calls."""
    clock = team_bench.fixed_clock(per_schedule)
    recorder = Recorder()
    with recorder.recording(), open_ledger(url, clock) as ledger:
        engine_id = announce(ledger, clock, EngineKind.HEADLESS)
        engine = Engine(ledger, clock, EngineOptions(max_workers=4), engine_id=engine_id)
        with mock.patch.object(run_stage, "run_command", instant_success):
            due = clock.now()
            clock.set(team_bench.T0 - timedelta(seconds=30))
            engine.run_once()  # before the work is due, as the bench's engines
            clock.set(due)
            report = engine.run_once()
    with psycopg.connect(_conninfo(url)) as conn:
        occurrences = dict(conn.execute("SELECT occurrence_id, schedule_id FROM occurrences").fetchall())
    transactions = recorder.transactions()
    name_schedules(transactions, occurrences)
    first = min((t.seq for t in transactions if t.thread.startswith(_WORKER_THREAD)), default=None)
    before = [t for t in transactions if not t.thread.startswith(_WORKER_THREAD) and (first is None or t.seq < first)]
    workers = [t for t in transactions if t.thread.startswith(_WORKER_THREAD)]
    return Recording(before, workers, report.started)


#: The event log's lock, taken by every transaction that writes events just before its commit.
_EVENT_LOCK = "SELECT pg_advisory_xact_lock(%s)"


def without_event_lock(recording: Recording) -> Recording:
    """The recording with the workers' transactions not taking the event log's lock: what the
    server's work costs without that one point where every engine's commits meet."""
    lock = (_EVENT_LOCK, [EVENT_LOCK_KEY])
    workers = [
        Transaction(t.thread, t.seq, [call for call in t.calls if call[1:] != lock], t.schedules)
        for t in recording.workers
    ]
    return Recording(recording.before, workers, recording.jobs)


def _conninfo(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def template_copies(server: str) -> Iterator[Callable[[], Any]]:
    """A function making databases on ``server``: the first call makes an empty one (the
    template), each later call a copy of the template as it is then. All are dropped at the end."""
    admin = create_engine(make_url(server).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT")
    names: list[str] = []

    @contextmanager
    def database() -> Iterator[str]:
        name = f"tidemark_floor_bench_{uuid.uuid4().hex[:8]}"
        template = f' TEMPLATE "{names[0]}"' if names else ""
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"{template}'))
        names.append(name)
        try:
            yield make_url(server).set(database=name).render_as_string(hide_password=False)
        finally:
            if len(names) > 1 and name != names[0]:
                with admin.connect() as conn:
                    conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    try:
        yield database
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def replay(conn: psycopg.Connection[Any], txn: Transaction) -> bool:
    """Send one transaction's calls on ``conn``; False when the server refused one (the
    transaction is then rolled back). Inside a pipeline nothing is read back, as in the engine."""
    depth = 0
    try:
        with ExitStack() as pipes:
            for kind, sql, params in txn.calls:
                if kind == "execute":
                    cur = conn.execute(sql, params)
                    if not depth and cur.description is not None:
                        cur.fetchall()
                elif kind == "executemany":
                    conn.cursor().executemany(sql, params)
                elif kind == "commit":
                    conn.commit()
                elif kind == "rollback":
                    conn.rollback()
                elif kind == "pipeline":
                    pipes.enter_context(conn.pipeline())
                    depth += 1
                else:
                    pipes.close()
                    depth = 0
        return True
    except psycopg.Error as exc:
        REFUSALS.append(repr(exc)[:300])
    conn.rollback()
    return False


def _child(url: str, lists: list[list[Transaction]], start: Any, report: Any, leave: Any) -> None:
    """A replaying process (forked): connects, waits at both barriers of ``start`` (connected,
    then go), replays, reports (its end, CPU seconds, how many transactions were refused and
    the first refusals), and keeps its connections until told to leave."""
    try:
        conns = [psycopg.connect(_conninfo(url)) for _ in lists]
        refused = [0] * len(lists)

        def one(i: int) -> None:
            refused[i] = sum(not replay(conns[i], txn) for txn in lists[i])

        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(lists))]
        for barrier in start:
            barrier.wait()
        cpu = time.process_time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        report.put((time.monotonic(), time.process_time() - cpu, sum(refused), REFUSALS[:3]))
        leave.wait()
    finally:
        os._exit(0)  # nothing of the parent's (its connections, its pools) is closed from here


def split(workers: list[Transaction], processes: int, serial: bool) -> list[list[list[Transaction]]]:
    """The workers' transactions for each process (the schedules dealt out in turn, each
    transaction to the process of the first schedule it names; one that names none, such as a
    rollback with nothing begun, with the one before it of its thread), and for each a list per
    recorded worker thread (one list with ``serial``)."""
    schedules = sorted({sid for txn in workers for sid in txn.schedules})
    place = {sid: i % processes for i, sid in enumerate(schedules)}
    parts: list[dict[str, list[Transaction]]] = [defaultdict(list) for _ in range(processes)]
    last: dict[str, int] = defaultdict(int)  # a transaction naming none goes with its thread's last one
    for txn in workers:
        if txn.schedules:
            last[txn.thread] = place[txn.schedules[0]]
        parts[last[txn.thread]]["" if serial else txn.thread].append(txn)
    return [list(part.values()) for part in parts]


def _forked(url: str, parts: list[list[list[Transaction]]]) -> tuple[float, float, int, float]:
    """Each part replayed by a forked process of psycopg threads: (seconds, the processes' CPU
    seconds, transactions refused, the CPU seconds of their backends on the server)."""
    fork = multiprocessing.get_context("fork")
    ready, start, leave, report = fork.Barrier(len(parts) + 1), fork.Barrier(len(parts) + 1), fork.Event(), fork.Queue()
    children = [fork.Process(target=_child, args=(url, part, (ready, start), report, leave)) for part in parts]
    for child in children:
        child.start()
    ready.wait()  # every child connected
    server = server_cpu(url) or 0.0
    start.wait()
    begun = time.monotonic()
    said = [report.get() for _ in children]
    REFUSALS.extend(refusal for *_, refusals in said for refusal in refusals)
    server = (server_cpu(url) or 0.0) - server
    leave.set()
    for child in children:
        child.join()
    seconds = max(end for end, *_ in said) - begun
    return seconds, sum(cpu for _, cpu, *_ in said), sum(n for _, _, n, _ in said), server


_LITERAL = re.compile(r"(?<![A-Za-z0-9_])([Ee]?)'((?:[^']|'')*)'")


def _no_colons(sql: str) -> str:
    """``sql`` with every colon inside a string literal written as an escape (``E'\\x3a'``):
    pgbench takes ``:name`` anywhere in a statement, quoted or not, for one of its variables."""

    def escaped(literal: re.Match[str]) -> str:
        body = literal.group(2)
        if ":" not in body:
            return literal.group(0)
        if not literal.group(1):
            body = body.replace("\\", "\\\\")
        return "E'" + body.replace(":", "\\x3a") + "'"

    return _LITERAL.sub(escaped, sql)


def pgbench_script(conn: psycopg.Connection[Any], transactions: list[Transaction]) -> str:
    """The transactions as a pgbench script: their statements with the values written in, an
    explicit BEGIN where psycopg sends one, the pipelines as pgbench's."""
    cur = psycopg.ClientCursor(conn)
    lines: list[str] = []
    for txn in transactions:
        began, depth = False, 0
        for kind, sql, params in txn.calls:
            if kind in ("execute", "executemany"):
                if not began:
                    lines.append("BEGIN;")
                    began = True
                for row in params if kind == "executemany" else [params]:
                    lines.append(_no_colons(cur.mogrify(sql, row).strip().rstrip(";")) + ";")
            elif kind in ("commit", "rollback") and began:
                lines.append(f"{kind.upper()};")
                began = False
            elif kind == "pipeline":
                depth += 1
                lines.extend(["\\startpipeline"] if depth == 1 else [])
            elif kind == "end" and depth:
                depth -= 1
                lines.extend(["\\endpipeline"] if depth == 0 else [])
    return "\n".join(lines) + "\n"


#: The advisory lock the pgbench processes of a measurement wait on until all are connected.
_START_LOCK = 7_261_001


def _pgbench(url: str, parts: list[list[list[Transaction]]]) -> tuple[float, float, int]:
    """Each recorded worker's list of each part replayed by a pgbench process of its own (a
    C client: libpq, no Python): (seconds, their CPU seconds with reading their scripts and
    connecting, pgbench runs that failed). Each script first waits for an advisory lock this
    process holds until every pgbench is connected and waiting: the timing starts when it lets
    go of it, as the replays start together (a pgbench takes a while to read a long script)."""
    parsed = make_url(url)
    folder = Path(tempfile.mkdtemp(prefix="tidemark-floor-"))
    argv = ["pgbench", "-n", "-M", "extended", "-t", "1", "-c", "1", "-h", parsed.host or "127.0.0.1"]
    argv += ["-p", str(parsed.port or 5432), "-U", parsed.username or "postgres", "-f"]
    with psycopg.connect(_conninfo(url), autocommit=True) as gate:
        scripts = []
        for lists in parts:
            for transactions in lists:
                scripts.append(folder / f"{len(scripts)}.sql")
                wait = f"SELECT pg_advisory_lock_shared({_START_LOCK});\n"
                scripts[-1].write_text(wait + pgbench_script(gate, transactions), encoding="utf-8")
        gate.execute("SELECT pg_advisory_lock(%s)", [_START_LOCK])
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.DEVNULL
        procs = [subprocess.Popen([*argv, str(s), parsed.database or "postgres"], stdout=out) for s in scripts]
        waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        while _scalar(gate, waiting) < len(procs) and all(proc.poll() is None for proc in procs):
            time.sleep(0.01)
        begun = time.monotonic()
        gate.execute("SELECT pg_advisory_unlock(%s)", [_START_LOCK])
        failed = sum(proc.wait() != 0 for proc in procs)
        seconds = time.monotonic() - begun
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(folder)
    return seconds, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, failed


def _scalar(conn: psycopg.Connection[Any], sql: str) -> int:
    row = conn.execute(sql).fetchone()
    return int(row[0]) if row else 0


def measure_floor(
    copy: Callable[[], Any], recording: Recording, processes: int, serial: bool, client: str
) -> dict[str, float]:
    """Seconds for ``processes`` processes to replay the workers' transactions on a fresh copy."""
    with copy() as url:
        with psycopg.connect(_conninfo(url)) as conn:
            refused = sum(not replay(conn, txn) for txn in recording.before)
        parts = split(recording.workers, processes, serial)
        if client == "pgbench":
            seconds, cpu, failed = _pgbench(url, parts)
            server = 0.0  # its backends leave with it
        else:
            seconds, cpu, failed, server = _forked(url, parts)
        with psycopg.connect(_conninfo(url)) as conn:
            row = conn.execute("SELECT count(*) FROM occurrences WHERE state = 'SUCCEEDED'").fetchone()
    return {
        "rate": recording.jobs / seconds,
        "seconds": seconds,
        "cpu": cpu / recording.jobs,
        "server": server / recording.jobs,
        "refused": refused + failed,
        "succeeded": row[0] if row else 0,
    }


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _engines(server: str, jobs: int, schedules: int, processes: int) -> tuple[float, str]:
    """The engines' own ratio, one engine against ``processes`` (:func:`team_bench.measure`)."""
    one, several = (team_bench.measure(server, n, "no-op", jobs, schedules, sweep=True) for n in (1, processes))
    ratio = several["rate"] / one["rate"]
    wrong = sum(int(r["duplicates"] + r["lost"]) for r in (one, several))
    return ratio, (
        f"  engines    {one['rate']:6.0f} / {several['rate']:6.0f} jobs/s, {ratio:4.2f}x "
        f"(engines' CPU a job {one['cpu'] * 1e3:.2f} / {several['cpu'] * 1e3:.2f} ms; duplicates + lost {wrong})"
    )


def _floor_line(client: str, alone: dict[str, float], side: dict[str, float]) -> str:
    line = f"  {client:<10} {alone['rate']:6.0f} / {side['rate']:6.0f} jobs/s, {side['rate'] / alone['rate']:4.2f}x"
    if client == "pgbench":  # its CPU is mostly reading its script, before the timing
        return line
    return line + (
        f" (CPU a job: replaying {alone['cpu'] * 1e3:.2f} / {side['cpu'] * 1e3:.2f} ms, "
        f"server {alone['server'] * 1e3:.2f} / {side['server'] * 1e3:.2f} ms)"
    )


def rounds(
    server: str,
    jobs: int,
    schedules: int,
    processes: int,
    runs: int,
    serial: bool,
    clients: list[str],
    engines: bool,
    no_event_lock: bool = False,
) -> None:
    """Print each round's floors (and the engines' own ratio), then the medians."""
    per_schedule = jobs // schedules
    jobs = per_schedule * schedules
    with template_copies(server) as database, database() as template:
        team_bench.prepare(template, schedules, per_schedule, team_bench.TASKS["no-op"])
        with database() as recorded:
            recording = record(recorded, per_schedule)
        assert recording.jobs == jobs, f"the recorded pass started {recording.jobs} of {jobs}"
        if no_event_lock:
            recording = without_event_lock(recording)
        spanning = sum(len(t.schedules) > 1 for t in recording.workers)
        how = "one connection a process" if serial else "a connection a recorded worker"
        how += ", without the event log's lock" if no_event_lock else ""
        print(
            f"{jobs} no-op jobs over {schedules} schedules on PostgreSQL; the dispatch's "
            f"{len(recording.workers)} transactions ({spanning} naming two schedules) replayed, {how}; "
            f"1 against {processes} processes (jobs/s, ratio); {runs} rounds"
        )
        ratios: dict[str, list[float]] = defaultdict(list)
        for round_ in range(runs):
            load = _load()
            lines = []
            if engines:
                ratio, line = _engines(server, jobs, schedules, processes)
                ratios["engines"].append(ratio)
                lines.append(line)
            for client in clients:
                alone, side = (measure_floor(database, recording, n, serial, client) for n in (1, processes))
                for result in (alone, side):
                    assert result["refused"] == 0 and result["succeeded"] == jobs, (result, REFUSALS[:3])
                ratios[client].append(side["rate"] / alone["rate"])
                lines.append(_floor_line(client, alone, side))
            print(f" round {round_ + 1}, load {load}-{_load()}", *lines, sep="\n")
        medians = ", ".join(f"{name} {statistics.median(r):.2f}x" for name, r in ratios.items())
        print(f"  median: floor {processes} / 1 ... {medians} (engines' target >= 0.90)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pg", default=os.environ.get("TIDEMARK_TEST_PG_URL"), help="a PostgreSQL server's URL")
    parser.add_argument("--jobs", type=int, default=640, help="due occurrences (default 640)")
    parser.add_argument("--schedules", type=int, default=32, help="schedules they belong to (default 32)")
    parser.add_argument("--processes", type=int, default=4, help="replaying processes and engines (default 4)")
    parser.add_argument("--runs", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--serial", action="store_true", help="each process replays on one connection")
    parser.add_argument(
        "--client",
        choices=["psycopg", "pgbench"],
        action="append",
        help="what replays (default psycopg, and pgbench when it is on PATH)",
    )
    parser.add_argument(
        "--no-event-lock", action="store_true", help="replay without the event log's lock (what it costs)"
    )
    parser.add_argument("--no-engines", action="store_true", help="the floor only, not the engines beside it")
    parser.add_argument("--quick", action="store_true", help="one round of 40 jobs: checks the bench works")
    args = parser.parse_args(argv)
    if not args.pg:
        parser.error("--pg (or TIDEMARK_TEST_PG_URL) names no PostgreSQL server")
    if args.quick:
        args.jobs, args.schedules, args.runs = 40, 8, 1
    if re.search(r"\+(?!psycopg\b)", make_url(args.pg).drivername):
        parser.error("--pg: the bench records psycopg's calls (postgresql+psycopg://...)")
    clients = args.client or ["psycopg", *(["pgbench"] if shutil.which("pgbench") else [])]
    rounds(
        args.pg,
        args.jobs,
        args.schedules,
        args.processes,
        args.runs,
        args.serial,
        clients,
        not args.no_engines,
        args.no_event_lock,
    )


if __name__ == "__main__":
    main()
