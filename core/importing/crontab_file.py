"""A user crontab (the text of ``crontab -l``) read line by line: comments, blank lines,
variable assignments and jobs, each kept with its line number.

The reading follows Debian's cron (``load_entry``/``load_env``): a line whose first word is
``NAME=`` or ``NAME =`` sets a variable for the jobs below it; any other line that is not a
comment is a job, five time fields and a command, or an ``@nickname`` and a command. What the
fields mean is :mod:`core.importing.cron_expr`'s. A mistake is one :class:`CrontabError` naming
its line; the other lines are still read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import UserError
from core.importing.input_text import BLANKS, crontab_lines, input_text, split_words

#: The most a crontab may hold: a real one is a few kilobytes, a few dozen jobs and a few variables.
MAX_CRONTAB_BYTES = 1_000_000
MAX_JOBS = 1_000
#: ``NAME=value`` lines: every job below one carries it in its task env, so the specs written grow
#: with jobs times variables; this bounds them.
MAX_VARIABLES = 100
#: What each nickname stands for (crontab(5)); ``@reboot`` has no time fields.
NICKNAMES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
REBOOT = "@reboot"
# Fields are separated by space and tab only, as cron separates them (never \s: a no-break space
# is part of a field).
_ASSIGNMENT = re.compile(r"^[ \t]*([^ \t=]+)[ \t]*=(.*)$")
_FIELD = r"([^ \t]+)"
_JOB = re.compile(rf"^[ \t]*{_FIELD}[ \t]+{_FIELD}[ \t]+{_FIELD}[ \t]+{_FIELD}[ \t]+{_FIELD}(?:[ \t]+(.*?))?[ \t]*$")
_NICKNAME = re.compile(r"^[ \t]*(@[^ \t]+)(?:[ \t]+(.*?))?[ \t]*$")


class CrontabError(UserError):
    """A crontab that cannot be read; the message starts with the line it concerns."""


@dataclass(frozen=True)
class Assignment:
    """``NAME=value``: a variable for the jobs on the lines below."""

    line: int
    name: str
    value: str


@dataclass(frozen=True)
class JobLine:
    """A job: its five time fields (a nickname's, for ``@daily``) and its command as written."""

    line: int
    text: str
    fields: tuple[str, ...]
    nickname: str | None
    command: str


def crontab_text(data: bytes) -> str:
    """The text of crontab bytes, or a :class:`CrontabError` saying why they are not a crontab's."""
    try:
        return input_text(data, MAX_CRONTAB_BYTES, "a crontab")
    except ValueError as exc:
        raise CrontabError(str(exc)) from None


def _unquoted(value: str) -> str:
    """A variable's value as cron reads it: surrounding spaces dropped, then one pair of quotes."""
    value = value.strip(BLANKS)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _control(text: str) -> int | None:
    return next((i for i, ch in enumerate(text) if (ord(ch) < 32 and ch != "\t") or ord(ch) == 127), None)


def _job(number: int, text: str) -> JobLine:
    if text.lstrip(BLANKS).startswith("@"):
        found = _NICKNAME.match(text)
        assert found is not None
        nickname, command = found.group(1).lower(), found.group(2) or ""
        if nickname != REBOOT and nickname not in NICKNAMES:
            raise CrontabError(f"line {number}: {found.group(1)} is not a nickname; use one of {', '.join(NICKNAMES)}")
        if not command:
            raise CrontabError(f"line {number}: no command after {found.group(1)}")
        fields = tuple(NICKNAMES.get(nickname, "").split())
        return JobLine(number, text.strip(BLANKS), fields, nickname, command)
    found = _JOB.match(text)
    if found is None:
        count = len(split_words(text))
        raise CrontabError(
            f"line {number}: {count} field{'s' if count != 1 else ''}; a job is five time fields "
            "(minute hour day-of-month month day-of-week) and a command"
        )
    return JobLine(number, text.strip(BLANKS), tuple(found.group(i) for i in range(1, 6)), None, found.group(6) or "")


def read_crontab(text: str) -> list[Assignment | JobLine | CrontabError]:
    """The assignments and jobs of a crontab, in order; comments and blank lines are left out, and a
    line that is neither is its :class:`CrontabError`, in its place. Lines end at ``\n`` only, as
    cron's do (:func:`~core.importing.input_text.crontab_lines`). What says the text is no crontab
    (a control character) or too big a one raises instead."""
    entries: list[Assignment | JobLine | CrontabError] = []
    jobs = variables = 0
    for number, raw in enumerate(crontab_lines(text), start=1):
        bad = _control(raw)
        if bad is not None:
            raise CrontabError(f"line {number}: a control character (U+{ord(raw[bad]):04X}); this is not a crontab")
        stripped = raw.strip(BLANKS)
        if not stripped or stripped.startswith("#"):
            continue
        assignment = _ASSIGNMENT.match(raw)
        if assignment is not None:
            variables += 1
            if variables > MAX_VARIABLES:
                raise CrontabError(
                    f"line {number}: more than {MAX_VARIABLES:,} variable lines (NAME=value); "
                    f"a crontab sets at most {MAX_VARIABLES:,}"
                )
            entries.append(Assignment(number, assignment.group(1), _unquoted(assignment.group(2))))
            continue
        jobs += 1
        if jobs > MAX_JOBS:
            raise CrontabError(f"line {number}: more than {MAX_JOBS:,} jobs; import at most {MAX_JOBS:,} at a time")
        try:
            entries.append(_job(number, raw))
        except CrontabError as exc:
            entries.append(exc)
    return entries
