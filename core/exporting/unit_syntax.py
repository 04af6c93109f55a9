"""Values written into a systemd unit file so that systemd reads back exactly what was meant
(systemd.syntax(7), systemd.service(5) "Command lines", systemd.unit(5) "Specifiers"), or
:class:`ExportRefused` naming the value and why no line of a unit can hold it.

systemd reads a unit line by line (a line ends at ``\\n``, and at ``\\r`` too), drops the spaces
around a value, goes on with the next line after one ending in an odd number of backslashes, and
reads ``%`` as a specifier in every value here (``%%`` is ``%``). ``Description=`` and
``WorkingDirectory=`` take the rest of the line as it is: no quoting. ``Environment=`` and
``ExecStart=`` split it into words, with double quotes and C escapes (``\\\\`` and ``\\"``);
``ExecStart=`` also fills in ``$NAME`` from the environment, unless the line starts with ``:``
(systemd 243), and reads a leading ``-``, ``@``, ``:``, ``+`` or ``!`` of its first word, quoted
or not, as a prefix that changes how the command runs. So a control character (a line break
above all: the next line would be a setting of its own) is refused everywhere, as in a crontab.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.exporting.refusal import ExportRefused, on_one_line

#: What ``ExecStart=`` reads at the start of its first word as a prefix, not as the program's name.
EXEC_PREFIXES = "-@:+!"


def one_line(text: str, what: str) -> str:
    """``text`` when a line of a unit can hold it; else :class:`ExportRefused` naming ``what``."""
    return on_one_line(text, what, "a systemd unit")


def _specifiers(text: str) -> str:
    return text.replace("%", "%%")


def plain_value(text: str, what: str) -> str:
    """A value systemd takes as it is (``Description=``): specifiers escaped. The spaces around it
    are dropped, as systemd drops them; an odd number of backslashes at its end is refused (systemd
    would go on with the next line)."""
    text = one_line(text, what).strip()
    if (len(text) - len(text.rstrip("\\"))) % 2:
        raise ExportRefused(f"{what} ends with a backslash, which a systemd unit reads as going on with the next line")
    return _specifiers(text)


def directory(path: str, what: str) -> str:
    """``WorkingDirectory=``: an absolute path with no ``..`` part (systemd ignores any other and
    runs the service elsewhere), nothing systemd would drop or join at its end, specifiers escaped."""
    one_line(path, what)
    if not path.startswith("/"):
        raise ExportRefused(f"{what} {path!r} is not an absolute path; systemd takes only one as WorkingDirectory=")
    if ".." in path.split("/"):
        raise ExportRefused(f"{what} {path!r} has a '..' part; systemd refuses such a WorkingDirectory=")
    if path != path.rstrip():
        raise ExportRefused(f"{what} {path!r} ends with a space, which systemd drops")
    return plain_value(path, what)


def word(text: str) -> str:
    """One word of ``Environment=`` or ``ExecStart=``: specifiers escaped, in double quotes (with
    ``\\`` and ``"`` escaped) when it is empty or holds a space, a quote, a backslash or ``;``."""
    text = _specifiers(text)
    if text and not any(ch.isspace() or ch in "\"'\\;" for ch in text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def assignment(name: str, value: str, what: str) -> str:
    """One ``NAME=value`` of ``Environment=`` (systemd expands no ``$`` there)."""
    return word(f"{name}={one_line(value, what)}")


def command_line(argv: Sequence[str], what: str) -> str:
    """``ExecStart=``'s value: each element of ``argv`` one word, exactly. Where one holds a ``$``,
    the line starts with ``:`` so that systemd fills in no variable (doubling it, ``$$``, would
    reach the arguments but not the program's own path). A program whose name starts with a
    prefix, or a relative path other than a bare name systemd looks up, is refused."""
    for index, element in enumerate(argv):
        one_line(element, f"{what}[{index}]")
    program = argv[0]
    if program[:1] in EXEC_PREFIXES:
        raise ExportRefused(
            f"{what}[0] {program!r} starts with {program[0]!r}, which systemd reads as a prefix of ExecStart="
        )
    if "/" in program and not program.startswith("/"):
        raise ExportRefused(
            f"{what}[0] {program!r} is a relative path; systemd runs an absolute path or a name it looks up"
        )
    no_variables = ":" if any("$" in element for element in argv) else ""
    return no_variables + " ".join(word(element) for element in argv)
