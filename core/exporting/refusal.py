"""The one error of an export: the spec holds something the target has no equivalent for."""

from __future__ import annotations

from core.errors import UserError


class ExportRefused(UserError):
    """No equivalent exists in the target; the message is one line saying what and why."""
