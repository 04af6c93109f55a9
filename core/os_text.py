"""Text the operating system and the ledger can carry, and values shown in messages.

Every string of a spec ends up somewhere that refuses some text: argv, the
environment and the working directory are C strings (no NUL byte), the ledger
stores UTF-8 (no lone surrogate, which JSON's ``\\ud800`` and YAML's
``"\\ud800"`` can spell) and PostgreSQL's text holds no NUL either. Linux passes
one argument or one ``NAME=value`` of at most :data:`MAX_ARG_BYTES` and a path
of at most :data:`MAX_PATH_BYTES`. :func:`text_problems` finds every such string
in a loaded document, naming its key, so a spec that could never be run is
refused where it enters instead of failing on every engine pass.

:func:`shown` is how a message quotes a value it refuses: in ``repr`` form and
cut short, so that a value expanded from aliases is never printed whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

#: Linux's MAX_ARG_STRLEN (32 pages) less its terminating NUL: the longest argument or NAME=value.
MAX_ARG_BYTES = 32 * 4096 - 1
#: PATH_MAX less its terminating NUL: the longest working directory or program path a task can have.
MAX_PATH_BYTES = 4096 - 1
#: NAME_MAX: the longest name of one file or directory in a path.
MAX_NAME_BYTES = 255
#: Characters of a refused value quoted in a message.
SHOWN_CHARS = 60

_SURROGATE = re.compile("[\ud800-\udfff]")


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)``, cut to about ``limit`` characters with the full length said."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    if isinstance(value, list | dict | tuple) and len(value) > 8:
        kind = "list" if isinstance(value, list | tuple) else "mapping"
        return f"a {kind} of {len(value):,} values"
    text = repr(value)
    if len(text) > limit:
        return text[:limit] + "…"
    return text


def key_text(name: str) -> str:
    """A key as a message names it: as written when short and printable, else like :func:`shown`."""
    if len(name) <= SHOWN_CHARS and name.isprintable():
        return name
    return shown(name, 40)


def string_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored or passed to a program, or None."""
    if "\x00" in text:
        return "contains a NUL byte, which no program argument, environment variable or ledger can hold"
    found = _SURROGATE.search(text)
    if found:
        return (
            f"contains U+{ord(found.group()):04X}, a lone surrogate: not a character, "
            "and not text a program or the ledger can take"
        )
    return None


def _walk(value: Any, key: str) -> Iterator[tuple[str, str]]:
    """(key, problem) for every string in ``value`` (mapping keys included) that cannot be carried."""
    if isinstance(value, str):
        problem = string_problem(value)
        if problem:
            yield key, problem
    elif isinstance(value, dict):
        for name, item in value.items():
            if isinstance(name, str):
                problem = string_problem(name)
                if problem:
                    yield key or "(top level)", f"the key {shown(name)} {problem}"
                    continue
            name = key_text(name) if isinstance(name, str) else str(name)
            yield from _walk(item, f"{key}.{name}" if key else name)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{key}[{index}]")


def text_problems(data: Any) -> list[tuple[str, str]]:
    """(key, problem) for every string of a loaded document that no program or ledger can take."""
    return list(_walk(data, ""))


def _too_long(text: str, limit: int) -> str | None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        return f"is {size:,} bytes; a program is given at most {limit:,} bytes in one argument or variable"
    return None


def task_problems(task: Any) -> list[tuple[str, str]]:
    """(key, problem) for task strings longer than the operating system passes (``task`` as loaded)."""
    if not isinstance(task, dict):
        return []
    problems: list[tuple[str, str]] = []
    for name in ("argv", "verify"):
        items = task.get(name)
        if isinstance(items, list):
            for index, item in enumerate(items):
                why = _too_long(item, MAX_ARG_BYTES) if isinstance(item, str) else None
                if why:
                    problems.append((f"task.{name}[{index}]", why))
    env = task.get("env")
    if isinstance(env, dict):
        for var, value in env.items():
            if isinstance(var, str) and isinstance(value, str):
                why = _too_long(f"{var}={value}", MAX_ARG_BYTES)
                if why:
                    problems.append((f"task.env.{key_text(var)}", why.replace("is ", "NAME=value is ", 1)))
    cwd = task.get("cwd")
    if isinstance(cwd, str):
        problems += _path_name_problems("task.cwd", cwd)
    for name in ("argv", "verify"):
        items = task.get(name)
        program = items[0] if isinstance(items, list) and items else None
        if isinstance(program, str) and "/" in program and all(k != f"task.{name}[0]" for k, _ in problems):
            problems += _path_name_problems(f"task.{name}[0]", program)
    return problems


def _path_name_problems(key: str, path: str) -> list[tuple[str, str]]:
    size = len(path.encode("utf-8", "surrogatepass"))
    if size > MAX_PATH_BYTES:
        return [(key, f"is a path of {size:,} bytes; a path is at most {MAX_PATH_BYTES:,}")]
    for part in path.split("/"):
        size = len(part.encode("utf-8", "surrogatepass"))
        if size > MAX_NAME_BYTES:
            why = f"names a file or directory of {size:,} bytes ({shown(part, 20)}); a name is at most {MAX_NAME_BYTES}"
            return [(key, why)]
    return []
