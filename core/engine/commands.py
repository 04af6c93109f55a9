"""A revision's command prepared once, its occurrence's identity filled in per claim.

Rendering a command (:func:`core.engine.runner.prepare`) copies the engine's
environment, lays the task's variables over it and hashes the inputs: the same
work for every claim of a revision, though only the occurrence's identity (its
SCHED_* variables and argv placeholders) differs from one claim to the next.
A :class:`Template` holds what does not depend on the identity; :func:`prepared`
keeps one per revision (a small bounded dict) and fills it per claim. The
command, its environment and its digest are those :func:`prepare` makes, to
the byte (a golden value pins the digest).

A task with a ``{secret: NAME}`` variable is rendered whole each time: its
secrets are looked up as it starts, never kept here.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from core.engine.runner import (
    DIGESTED_NAMES,
    ENGINE_ONLY,
    IDENTITY_NAMES,
    PLACEHOLDER,
    PreparedCommand,
    TaskIdentity,
    compact_json,
    prepare,
    render_argv,
)
from core.spec.model import Task
from core.team.secrets import reference_name

#: Revisions whose command is kept prepared; the oldest goes first beyond this.
KEPT = 512


@dataclass(frozen=True)
class Template:
    """What a revision's command is for every claim: its fixed argv (None when a
    placeholder is in it), its environment but the identity's variables, and the
    digest's input up to the identity's variables (a hash to copy)."""

    task: Task
    base_env: Mapping[str, str]
    argv: list[str] | None
    env: dict[str, str]
    names: tuple[str, ...]
    head: hashlib._Hash | None  # the digest so far, when argv is fixed
    tail: str  # what the digest's input ends with, after the identity's variables

    @classmethod
    def of(cls, task: Task, base_env: Mapping[str, str]) -> Template:
        env = dict(base_env)
        for name in ENGINE_ONLY:
            env.pop(name, None)
        env.update({name: str(value) for name, value in task.env.items()})  # only tasks without secrets come here
        names = tuple(sorted(task.env))
        fixed = None if any(PLACEHOLDER.search(arg) for arg in task.argv) else list(task.argv)
        head = None
        if fixed is not None:
            head = hashlib.sha256(_argv_part(fixed, task.cwd).encode("utf-8"))
        hidden = sorted(set(names) - IDENTITY_NAMES)
        return cls(task, base_env, fixed, env, names, head, ',"envNames":' + compact_json(hidden) + "}")

    def fill(self, identity: TaskIdentity) -> PreparedCommand:
        """The command of one claim: as :func:`core.engine.runner.prepare` renders it."""
        variables = identity.environment()
        env = self.env.copy()
        env.update(variables)
        stable = compact_json(_stable(variables)) + self.tail
        if self.argv is None:
            argv = render_argv(self.task.argv, identity)
            digest = hashlib.sha256((_argv_part(argv, self.task.cwd) + stable).encode("utf-8")).hexdigest()
        else:
            argv = list(self.argv)
            assert self.head is not None
            hasher = self.head.copy()
            hasher.update(stable.encode("utf-8"))
            digest = hasher.hexdigest()
        return PreparedCommand(argv, self.task.cwd, env, digest, self.names)


def _argv_part(argv: list[str], cwd: str | None) -> str:
    """The digest's input up to its identity variables (``input_digest``'s JSON, cut there)."""
    return '{"argv":' + compact_json(argv) + ',"cwd":' + compact_json(cwd) + ',"env":'


def _stable(variables: dict[str, str]) -> dict[str, str]:
    """The identity's variables that go into the digest, sorted by name (not the per-attempt two)."""
    return {name: variables[name] for name in DIGESTED_NAMES}


_TEMPLATES: dict[tuple[str, int], Template] = {}
_LOCK = threading.Lock()


def prepared(task: Task, identity: TaskIdentity, base_env: Mapping[str, str] | None) -> PreparedCommand:
    """``prepare(task.argv, task.cwd, task.env, identity, base_env)``, the revision's fixed part made once.

    Kept by (schedule, revision) for the same task and an equal ``base_env``; a task with
    secrets, or no ``base_env`` (this process's environment, read as it is now), is rendered whole."""
    if base_env is None:
        return prepare(task.argv, task.cwd, task.env, identity, base_env)
    key = (identity.schedule_id, identity.revision)
    template = _TEMPLATES.get(key)
    if template is None or not _same(template, task, base_env):
        if any(reference_name(value) is not None for value in task.env.values()):
            return prepare(task.argv, task.cwd, task.env, identity, base_env)
        template = Template.of(task, base_env)
        with _LOCK:
            _TEMPLATES.pop(key, None)
            while len(_TEMPLATES) >= KEPT:
                del _TEMPLATES[next(iter(_TEMPLATES))]
            _TEMPLATES[key] = template
    return template.fill(identity)


def _same(template: Template, task: Task, base_env: Mapping[str, str]) -> bool:
    """Whether ``template`` was made of this task and this environment (an equal one: the engine reads
    its environment anew each pass)."""
    same_task = template.task is task or template.task == task
    return same_task and (template.base_env is base_env or template.base_env == base_env)


def forget() -> None:
    """Drop every kept template (tests start from none)."""
    with _LOCK:
        _TEMPLATES.clear()


def kept() -> int:
    """How many revisions' commands are kept prepared."""
    return len(_TEMPLATES)
