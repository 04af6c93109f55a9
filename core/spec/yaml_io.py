"""A spec file's text as it was read, and saving changes into it.

A person's file has comments, an order of keys, quotes and flow lists of their
choosing. :class:`SpecText` keeps the text it was read from beside what it
holds (read by the safe loader, :func:`core.spec.files.load_text`, with all its
limits), and :meth:`SpecText.render` writes another mapping into that text
with ruamel.yaml's round-trip mode (:func:`core.spec.roundtrip.rewrite`), so a
one-field edit is a one-line change.

The result is read back with the safe loader and must be exactly the mapping
asked for, types included. Where it is not, or the layout is one the round trip
does not edit (a top-level ``{...}``, merge keys), the file is written fresh in
block style in its own key order below its header comments
(:func:`core.spec.files.dump_yaml`): the data is never wrong, only comments can go.
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from core.errors import UserError
from core.spec.files import dump_yaml, is_json_text, load_text
from core.spec.order import merged_order
from core.spec.roundtrip import CannotKeep, rewrite, same

_log = logging.getLogger(__name__)


class SpecText:
    """A spec file's text as read, and what it holds.

    ``data`` is the mapping read from it; :meth:`render` writes another mapping into the text.
    JSON text is kept too: :meth:`render_json` writes JSON laid out like it.
    """

    def __init__(self, text: str, data: Any, *, is_json: bool, source: str = "<text>") -> None:
        self.text = text
        self._data = data
        self.is_json = is_json
        self.source = source

    @classmethod
    def parse(cls, text: str, source: str = "<text>") -> SpecText:
        """Read ``text`` with every check of :func:`core.spec.files.load_text`; raises its SpecFileError."""
        return cls(text, load_text(text, source), is_json=is_json_text(text, source), source=source)

    @property
    def data(self) -> Any:
        """A copy of what the text holds."""
        return copy.deepcopy(self._data)

    def render(self, new: Mapping[str, Any]) -> str:
        """This YAML text with ``new`` written into it; what did not change stays as it was."""
        new = dict(new)
        if same(self._data, new) and not self.is_json:
            return self.text
        old = self._data if isinstance(self._data, dict) else None
        if old is not None and not self.is_json:
            text = self._rewrite(old, new)
            if text is not None:
                return text
        return self._header() + dump_yaml(merged_order(old, new), keep_order=True)

    def _rewrite(self, old: dict[str, Any], new: dict[str, Any]) -> str | None:
        """The round trip's text, or None (and why, in the log) when it is not exactly ``new``."""
        try:
            text = rewrite(self.text, old, new)
        except CannotKeep as exc:
            _log.info("%s: written fresh in block style: %s", self.source, exc)
            return None
        except Exception:  # ruamel.yaml refusing what the reader took: write it fresh rather than fail the save
            _log.warning("%s: written fresh in block style: the round trip failed", self.source, exc_info=True)
            return None
        try:
            back = load_text(text, self.source)
        except UserError as exc:
            _log.warning(
                "%s: written fresh in block style: the round trip wrote unreadable text (%s)", self.source, exc
            )
            return None
        if not same(back, new):
            _log.warning(
                "%s: written fresh in block style: the round trip did not read back as the schedule", self.source
            )
            return None
        return text

    def render_json(self, new: Mapping[str, Any]) -> str:
        """``new`` as JSON in this text's key order and layout (new keys where the contract puts them)."""
        old = self._data if isinstance(self._data, dict) else None
        return json_text(merged_order(old, dict(new)), self.text if self.is_json else None)

    def _header(self) -> str:
        """The comment lines the text starts with (kept above a text written fresh)."""
        lines = []
        for line in self.text.splitlines(keepends=True):
            if line.strip() and not line.lstrip().startswith("#"):
                break
            lines.append(line)
        while lines and not lines[-1].strip():
            lines.pop()
        return "".join(lines)


def json_text(data: Mapping[str, Any], like: str | None = None) -> str:
    """``data`` as JSON, laid out like the text ``like`` (indent, one line or not, ASCII escapes, line
    ends); keys in ``data``'s order."""
    if like is None:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    body = like.strip()
    indent: str | int | None = None
    if "\n" in body:
        found = re.search(r"\n([ \t]+)\S", body)
        indent = found.group(1) if found else 2
    ascii_only = "\\u" in like and like.isascii()
    text = json.dumps(data, indent=indent, ensure_ascii=ascii_only)
    newline = "\r\n" if "\r\n" in like else "\n"
    text = text.replace("\n", newline)
    return text + newline if like.endswith(("\n", "\r")) else text
