"""A revision's command is prepared once and filled per claim, the same to the byte as rendered whole."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.engine import commands, run
from core.engine.runner import ENGINE_ONLY, TaskIdentity, prepare
from core.spec.model import SecretRef, Task
from core.team import secrets

BASE = {"PATH": "/usr/bin:/bin", "HOME": "/home/ops", "TIDEMARK_DB": "sqlite:///x.db", "LANG": "C.UTF-8"}


@pytest.fixture(autouse=True)
def no_templates() -> Iterator[None]:
    commands.forget()
    yield
    commands.forget()


def identity(n: int, *, schedule: str = "nightly", revision: int = 3, period: str | None = None) -> TaskIdentity:
    return TaskIdentity(
        schedule, revision, f"occ-{n}", f"slot-{n}", f"2026-12-0{n % 9 + 1}T02:00", None, period, f"att-{n}", n % 3 + 1
    )


def whole(task: Task, who: TaskIdentity, base: dict[str, str]) -> run.PreparedCommand:
    return prepare(task.argv, task.cwd, task.env, who, base)


def test_a_revisions_command_is_prepared_once_for_many_claims(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Task] = []
    original = commands.Template.of
    monkeypatch.setattr(commands.Template, "of", lambda task, base: made.append(task) or original(task, base))
    task = Task(argv=["backup", "--slot", "{occurrenceId}"], env={"MODE": "full"})
    prepared = [run.prepare_command(task, identity(n), dict(BASE)) for n in range(40)]
    assert made == [task]
    assert commands.kept() == 1
    assert [p.argv[2] for p, _ in prepared] == [f"occ-{n}" for n in range(40)]
    assert all(p == whole(task, identity(n), BASE) and why is None for n, (p, why) in enumerate(prepared))


def test_the_golden_digest_holds_through_a_template() -> None:
    """The digest recorded before templates existed, for this task and identity (a fixed argv)."""
    who = TaskIdentity("bench", 1, "occ-x", "slot-x", "2026-03-02T00:00:00", None, None, "att", 1)
    first, _ = run.prepare_command(Task(argv=["true"]), who, {})
    second, _ = run.prepare_command(Task(argv=["true"]), who, {"OTHER": "1"})
    assert first.digest == second.digest == whole(Task(argv=["true"]), who, {}).digest
    assert first.env == who.environment()


names = st.sampled_from(["A", "MODE", "SCHED_REVISION", "SCHED_ATTEMPT_ID", "PATH", "TIDEMARK_DB", "x_1"])
values = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=8)
args = st.lists(
    st.sampled_from(["run", "{occurrenceId}", "{period}-{nominalLocal}", "{scheduledUtc}", "{other}", "é"]),
    min_size=1,
    max_size=4,
)


@given(
    argv=args,
    cwd=st.none() | st.sampled_from(["/srv", "/tmp/é"]),
    env=st.dictionaries(names, values, max_size=4),
    claims=st.lists(st.integers(0, 50), min_size=1, max_size=5),
    period=st.none() | st.sampled_from(["2026-Q4", "{period}"]),
)
def test_a_filled_template_is_the_command_rendered_whole(
    argv: list[str], cwd: str | None, env: dict[str, str], claims: list[int], period: str | None
) -> None:
    commands.forget()
    task = Task(argv=["prog", *argv], cwd=cwd, env=env)
    for n in claims:
        who = identity(n, period=period)
        got, why = run.prepare_command(task, who, dict(BASE))
        want = whole(task, who, BASE)
        assert why is None
        assert got == want
        assert list(got.env.items()) == list(want.env.items())  # the same order as well


def test_a_changed_environment_or_task_is_prepared_anew() -> None:
    task = Task(argv=["true"], env={"MODE": "full"})
    run.prepare_command(task, identity(1), dict(BASE))
    moved, _ = run.prepare_command(task, identity(2), BASE | {"LANG": "de_DE.UTF-8"})
    assert moved.env["LANG"] == "de_DE.UTF-8"
    other, _ = run.prepare_command(Task(argv=["true"], env={"MODE": "quick"}), identity(3), dict(BASE))
    assert other.env["MODE"] == "quick"
    assert commands.kept() == 1
    live, _ = run.prepare_command(task, identity(4), None)  # this process's environment, read now
    assert live == prepare(task.argv, task.cwd, task.env, identity(4))


def test_a_task_with_secrets_looks_them_up_at_every_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    held = {"vault": "first"}
    monkeypatch.setattr(secrets, "lookup", lambda name: held[name])
    task = Task(argv=["deploy"], env={"TOKEN": SecretRef(secret="vault")})
    first, _ = run.prepare_command(task, identity(1), dict(BASE))
    held["vault"] = "second"
    second, _ = run.prepare_command(task, identity(2), dict(BASE))
    assert (first.env["TOKEN"], second.env["TOKEN"]) == ("first", "second")
    assert second.secrets == ("second",)
    assert commands.kept() == 0
    del held["vault"]
    stand_in, why = run.prepare_command(task, identity(3), dict(BASE))
    assert why is not None and why.startswith("cannot prepare the command")
    assert stand_in.env == {}


def test_the_templates_kept_are_bounded() -> None:
    task = Task(argv=["true"])
    for revision in range(commands.KEPT + 20):
        run.prepare_command(task, identity(1, revision=revision), BASE)
    assert commands.kept() == commands.KEPT
    made = commands.Template.of(task, BASE)
    assert made.fill(identity(1, revision=commands.KEPT + 19)) == whole(
        task, identity(1, revision=commands.KEPT + 19), BASE
    )


def test_templates_share_one_copy_of_the_engines_environment() -> None:
    """A template kept a copy of the engine's environment each (0.8 KiB at 45 variables, for
    every revision that ran); those made of an equal environment share one now, across passes
    too (the engine reads its environment anew each pass), and each claim still gets its own."""
    engines = BASE | {"PGPASSWORD": "not for tasks"}
    made = [commands.Template.of(Task(argv=["true"], env={"N": str(n)}), dict(engines)) for n in range(3)]
    assert made[0].shared is made[1].shared is made[2].shared
    assert made[0].shared == {k: v for k, v in engines.items() if k not in ENGINE_ONLY} == BASE
    first, second = made[0].fill(identity(1)), made[1].fill(identity(1))
    assert first.env is not second.env and first.env is not made[0].shared
    assert (first.env["N"], second.env["N"]) == ("0", "1") and "N" not in made[0].shared
    moved = commands.Template.of(Task(argv=["true"]), BASE | {"LANG": "de_DE.UTF-8"})
    assert moved.shared is not made[0].shared and moved.shared["LANG"] == "de_DE.UTF-8"
    assert made[0].fill(identity(2)) == whole(Task(argv=["true"], env={"N": "0"}), identity(2), BASE)


def test_a_template_of_an_older_environment_is_made_anew() -> None:
    task = Task(argv=["true"])
    run.prepare_command(task, identity(1), dict(BASE))
    run.prepare_command(task, identity(2), BASE | {"LANG": "de_DE.UTF-8"})
    back, _ = run.prepare_command(task, identity(3), dict(BASE))
    assert back == whole(task, identity(3), BASE)
    assert commands.kept() == 1
