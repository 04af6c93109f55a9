"""The one error of an export: the spec holds something the target has no equivalent for."""

from __future__ import annotations

from core.errors import UserError


class ExportRefused(UserError):
    """No equivalent exists in the target; the message is one line saying what and why."""


def control_character(text: str) -> str | None:
    """What in ``text`` no line of a crontab or a unit file can hold (``a line break``, ``a control
    character (U+0001)``): a character below space other than tab, or DEL; None when there is none."""
    bad = next((ch for ch in text if (ord(ch) < 32 and ch != "\t") or ord(ch) == 127), None)
    if bad is None:
        return None
    return "a line break" if bad in "\r\n" else f"a control character (U+{ord(bad):04X})"


def on_one_line(text: str, what: str, holder: str) -> str:
    """``text`` when one line of ``holder`` (``a crontab line``, ``a systemd unit``) can hold it;
    else :class:`ExportRefused` naming ``what`` and the character."""
    bad = control_character(text)
    if bad is not None:
        raise ExportRefused(f"{what} has {bad}: {holder} cannot hold one")
    return text
