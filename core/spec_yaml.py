"""Round-trip editing of a spec file: saving changes only what changed.

A person's file has comments, an order of keys, quotes and flow lists of their
choosing. :class:`SpecText` keeps the text as it was read together with where
each key and value is written (the positions PyYAML's composer records, read by
the same safe loader as every spec: :func:`core.specfile.compose_text`), and
:meth:`SpecText.render` writes a new mapping by editing that text in place:

- a changed value is rewritten where it stands, in its old quoting; the rest of
  its line (a comment) stays. Block mappings and lists (``task``, ``exclude``)
  are edited inside, item by item; flow lists (``[a, b]``) and flow mappings
  stay flow, their untouched items as written;
- a removed key goes with its line, its comment and the comment lines directly
  above it (a comment block separated by a blank line stays, and so does the
  file's header);
- an added key goes after the last key the contract orders before it
  (:func:`core.spec_emit.insertion_points`), written like the file is indented.

Everything not edited is kept byte for byte; the text is never re-emitted as a
whole. The result is read back and compared with the mapping asked for: where the
edit cannot be done in place (anchors and aliases touched by the change, a
top-level ``{...}`` mapping, unusual layouts) the file is written fresh in block
style, in its own key order, below its header comments.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import yaml

from core.errors import UserError
from core.spec_emit import block_text, json_text, merged_order
from core.specfile import compose_text, is_json_text, load_text
from core.yaml_edit import CannotEdit, edit_text, same


class SpecText:
    """A spec file's text as read, with where its values are written.

    ``data`` is the mapping read from it; :meth:`render` writes another mapping into the text.
    JSON text is kept too: :meth:`render_json` writes JSON laid out like it.
    """

    def __init__(self, text: str, data: Any, root: yaml.Node | None, *, is_json: bool) -> None:
        self.text = text
        self._data = data
        self._root = root
        self.is_json = is_json

    @classmethod
    def parse(cls, text: str, source: str = "<text>") -> SpecText:
        """Read ``text`` with every check of :func:`core.specfile.compose_text`; raises its SpecFileError."""
        root, data = compose_text(text, source)
        return cls(text, data, root, is_json=is_json_text(text, source))

    @property
    def data(self) -> Any:
        """A copy of what the text holds."""
        return copy.deepcopy(self._data)

    def render(self, new: Mapping[str, Any]) -> str:
        """This YAML text with ``new`` written into it; unchanged parts are kept as they are."""
        new = dict(new)
        if same(self._data, new) and not self.is_json:
            return self.text
        if isinstance(self._root, yaml.MappingNode) and not self._root.flow_style and isinstance(self._data, dict):
            try:
                text = edit_text(self.text, self._root, self._data, new)
                if same(load_text(text), new):
                    return text
            except (CannotEdit, UserError):
                pass
        old = self._data if isinstance(self._data, dict) else None
        return self._header() + block_text(merged_order(old, new), keep_order=True)

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
