"""A revision's command prepared once, its occurrence's identity filled in per claim.

Rendering a command (:func:`core.engine.runner.prepare`) copies the engine's
environment, lays the task's variables over it and hashes the inputs: the same
work for every claim of a revision, though only the occurrence's identity (its
SCHED_* variables and argv placeholders) differs from one claim to the next.
A :class:`Template` holds what does not depend on the identity; :func:`prepared`
keeps one per revision (a small bounded dict) and fills it per claim. The
templates made of an equal environment share one copy of it (the engine's, less
its own variables): a copy each was 0.8 KiB for every revision that ran. The
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
    """What a revision's command is for every claim: the engine's environment without its
    own variables (one dict, shared by every template made of an equal environment), the
    task's variables, and, when no placeholder is in the argv, the digest's input up to the
    identity's variables (the bytes to hash first)."""

    task: Task
    shared: dict[str, str]  # the engine's environment less ENGINE_ONLY: never changed, copied per claim
    own: dict[str, str] | None  # the task's variables, laid over ``shared`` (None: it has none)
    names: tuple[str, ...]
    head: bytes | None  # the digest's input up to the identity's variables, when argv is fixed
    tail: str  # what the digest's input ends with, after the identity's variables

    @classmethod
    def of(cls, task: Task, base_env: Mapping[str, str]) -> Template:
        shared = _shared(base_env)
        own = {name: str(value) for name, value in task.env.items()} or None  # no secrets come here
        names = tuple(sorted(task.env))
        fixed = not any(PLACEHOLDER.search(arg) for arg in task.argv)
        head = _argv_part(task.argv, task.cwd).encode("utf-8") if fixed else None
        hidden = sorted(set(names) - IDENTITY_NAMES)
        return cls(task, shared, own, names, head, ',"envNames":' + compact_json(hidden) + "}")

    def fill(self, identity: TaskIdentity) -> PreparedCommand:
        """The command of one claim: as :func:`core.engine.runner.prepare` renders it."""
        variables = identity.environment()
        env = self.shared.copy()
        if self.own is not None:
            env.update(self.own)
        env.update(variables)
        stable = compact_json(_stable(variables)) + self.tail
        if self.head is None:
            argv = render_argv(self.task.argv, identity)
            digest = hashlib.sha256((_argv_part(argv, self.task.cwd) + stable).encode("utf-8")).hexdigest()
        else:
            argv = list(self.task.argv)
            digest = hashlib.sha256(self.head + stable.encode("utf-8")).hexdigest()
        return PreparedCommand(argv, self.task.cwd, env, digest, self.names)


def _argv_part(argv: list[str], cwd: str | None) -> str:
    """The digest's input up to its identity variables (``input_digest``'s JSON, cut there)."""
    return '{"argv":' + compact_json(argv) + ',"cwd":' + compact_json(cwd) + ',"env":'


def _stable(variables: dict[str, str]) -> dict[str, str]:
    """The identity's variables that go into the digest, sorted by name (not the per-attempt two)."""
    return {name: variables[name] for name in DIGESTED_NAMES}


_TEMPLATES: dict[tuple[str, int], Template] = {}
_LOCK = threading.Lock()
#: The engine's environment last seen, and the same less ENGINE_ONLY: the one copy every template
#: made of it shares. The engine reads its environment anew each pass: an equal dict takes the
#: place of the first, so that the next claims of its pass find it by identity.
_SHARED: tuple[Mapping[str, str], dict[str, str]] | None = None


def _shared(base_env: Mapping[str, str]) -> dict[str, str]:
    """``base_env`` without the engine's own variables: made once for every template of an equal
    environment, never changed (each claim copies it)."""
    global _SHARED
    kept = _SHARED
    if kept is not None and kept[0] is base_env:
        return kept[1]
    if kept is not None and kept[0] == base_env:
        shared = kept[1]
    else:
        shared = dict(base_env)  # copied whole and the engine's own taken out, as prepare() does
        for name in ENGINE_ONLY:
            shared.pop(name, None)
    with _LOCK:
        _SHARED = (base_env, shared)
    return shared


def prepared(task: Task, identity: TaskIdentity, base_env: Mapping[str, str] | None) -> PreparedCommand:
    """``prepare(task.argv, task.cwd, task.env, identity, base_env)``, the revision's fixed part made once.

    Kept by (schedule, revision) for the same task and an equal ``base_env``; a task with
    secrets, or no ``base_env`` (this process's environment, read as it is now), is rendered whole."""
    if base_env is None:
        return prepare(task.argv, task.cwd, task.env, identity, base_env)
    key = (identity.schedule_id, identity.revision)
    template = _TEMPLATES.get(key)
    if template is None or not _same(template, task, _shared(base_env)):
        if any(reference_name(value) is not None for value in task.env.values()):
            return prepare(task.argv, task.cwd, task.env, identity, base_env)
        template = Template.of(task, base_env)
        with _LOCK:
            _TEMPLATES.pop(key, None)
            while len(_TEMPLATES) >= KEPT:
                del _TEMPLATES[next(iter(_TEMPLATES))]
            _TEMPLATES[key] = template
    return template.fill(identity)


def _same(template: Template, task: Task, shared: dict[str, str]) -> bool:
    """Whether ``template`` was made of this task (or an equal one) and of the environment ``shared``
    was made of (or an equal one: the engine reads its environment anew each pass)."""
    return template.shared is shared and (template.task is task or template.task == task)


def forget() -> None:
    """Drop every kept template (tests start from none)."""
    global _SHARED
    with _LOCK:
        _TEMPLATES.clear()
        _SHARED = None


def kept() -> int:
    """How many revisions' commands are kept prepared."""
    return len(_TEMPLATES)
