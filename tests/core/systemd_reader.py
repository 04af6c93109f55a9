"""A unit file read back as systemd reads it, to check what Tidemark writes into one: written here
from systemd.syntax(7), systemd.service(5) and systemd.unit(5), not from core.importing; and,
where ``systemd-analyze`` is installed, what systemd itself loaded (``verify`` at debug level
dumps every unit it loads)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "s": " "}
_VARIABLE = re.compile(r"\$(\$|\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")


def settings(text: str) -> dict[str, list[str]]:
    """``Section.Key`` -> its values in order: lines end at ``\\n`` or ``\\r``; comments are lines
    starting with ``#`` or ``;``; a line ending in an odd number of backslashes goes on with the
    next (the backslash becomes a space); spaces around keys and values are dropped."""
    found: dict[str, list[str]] = defaultdict(list)
    section, pending = "", ""
    for raw in re.split(r"\r\n|\r|\n", text):
        line = raw.strip()
        if line[:1] in ("#", ";"):
            continue
        line = pending + line
        if (len(line) - len(line.rstrip("\\"))) % 2:
            pending = line[:-1] + " "
            continue
        pending = ""
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif "=" in line:
            key, _, value = line.partition("=")
            found[f"{section}.{key.strip()}"].append(value.strip())
    return found


def specifiers(text: str) -> str:
    """``%%`` as ``%``; any other specifier would be systemd's to fill in: a test failure here."""
    assert re.search(r"%[^%]", text.replace("%%", "")) is None, f"a specifier is left in {text!r}"
    return text.replace("%%", "%")


def words(value: str, escaped: str = "\\\"'") -> list[str]:
    """The words of a quoting setting: split at spaces and tabs, double or single quotes around a
    word, C escapes (``\\n``, ``\\"``, ``\\\\``...) inside and outside quotes; a backslash before
    any other character than those and ``escaped`` stays, as systemd keeps it (with a warning)."""
    found: list[str] = []
    index = 0
    while index < len(value):
        if value[index] in " \t":
            index += 1
            continue
        current, quote = "", ""
        while index < len(value) and (quote or value[index] not in " \t"):
            ch = value[index]
            if ch == "\\":
                after = value[index + 1]
                current += _ESCAPES.get(after, after if after in escaped else ch + after)
                index += 2
                continue
            if ch == quote:
                quote = ""
            elif not quote and ch in "\"'":
                quote = ch
            else:
                current += ch
            index += 1
        assert not quote, f"unbalanced quotes in {value!r}"
        found.append(current)
    return found


def environment(values: list[str]) -> dict[str, str]:
    """Every ``Environment=`` line's assignments (no ``$`` is filled in there)."""
    pairs = [specifiers(word).partition("=") for value in values for word in words(value)]
    return {name: text for name, _, text in pairs}


def command(value: str, env: dict[str, str]) -> list[str]:
    """The argv an ``ExecStart=`` line runs: prefixes are read off its first word (``:``: no
    variables filled in), specifiers and then ``$$``, ``$NAME`` and ``${NAME}`` filled in."""
    argv = [specifiers(word) for word in words(value)]
    prefixes = re.match(r"[-@:+!]*", argv[0]).group()  # type: ignore[union-attr]
    assert set(prefixes) <= {":"}, f"ExecStart= prefixes {prefixes!r} change how the command runs"
    argv[0] = argv[0][len(prefixes) :]
    if ":" in prefixes:
        return argv

    def fill(found: re.Match[str]) -> str:
        name = found.group(1).strip("{}")
        return "$" if name == "$" else env[name]

    return [_VARIABLE.sub(fill, word) for word in argv]


def analyzed(folder: Path, *names: str) -> dict[str, dict[str, list[str]]] | None:
    """What systemd loaded from the units ``names`` in ``folder``: for each, its dump's fields
    (``Description``, ``WorkingDirectory``, ``Environment``, ``Command Line``...) -> values;
    None where ``systemd-analyze`` is not installed. Any complaint about one of them fails the test."""
    if shutil.which("systemd-analyze") is None:
        return None
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *names],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**os.environ, "SYSTEMD_LOG_LEVEL": "debug"},
        check=False,
        timeout=60,
    )
    said = [line for line in done.stderr.splitlines() if any(line.startswith(f"{folder}/{n}:") for n in names)]
    assert (done.returncode, said) == (0, []), done.stderr[-2000:]
    units: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = defaultdict(list)
    for line in done.stdout.splitlines():
        header = re.fullmatch(r"\t-> Unit (.+):", line)
        if header is not None:
            current = units.setdefault(header.group(1), defaultdict(list))
            continue
        key, colon, value = line.strip("\t").partition(": ")
        if colon:
            current[key].append(value)
    return {name: units[name] for name in names}


def dumped_command(line: str) -> list[str]:
    """A ``Command Line:`` of the dump as argv: words bare or in double quotes, with ``\\``
    escapes (systemd writes a tab ``\\t``); ``$`` here is before any variable is filled in."""
    return words(line, escaped="\\\"'$`")
