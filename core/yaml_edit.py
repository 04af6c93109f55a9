"""Editing YAML text in place: a mapping read from the text is turned into another
one by rewriting only the parts that differ, at the positions PyYAML's composer
recorded for each key and value. What is not rewritten stays byte for byte.

:func:`edit_text` is the one entry point; :mod:`core.spec_yaml` says what it
promises a person's spec file. Layouts it does not edit in place (a key sharing
its line with a dash, an alias that must change where its anchor must not, keys
at odd places) raise :class:`CannotEdit`; the caller then writes the file fresh.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

import yaml

from core.spec_emit import (
    Layout,
    Path,
    arrange,
    block_lines,
    inline_text,
    insertion_points,
    is_inline,
    is_scalar,
    item_lines,
    pair_lines,
    value_text,
)

_DASH = re.compile(r"( *)-[ ]+")
_BARE_NEWLINE = re.compile(r"(?<!\r)\n")
#: An alias written after a key's colon or a dash: `key: *name`, `- *name`.
_ALIAS = re.compile(r"[ \t]*(?:[:-][ \t]*)?(\*[^\s,\[\]{}]+)")


class CannotEdit(Exception):
    """The text around a change is laid out in a way this editor does not edit in place."""


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (``1``, ``1.0`` and ``True`` differ); key order aside."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _fingerprint(value: Any) -> str:
    """A text that differs when :func:`same` says the values differ (for matching list items)."""
    return json.dumps(value, sort_keys=True, default=repr) + type(value).__name__


class _Editor:
    """Collects the edits that turn the text's mapping into another one, then applies them."""

    def __init__(self, text: str, root: yaml.MappingNode) -> None:
        self.text = text
        self.root = root
        self.edits: list[tuple[int, int, str]] = []
        self.layout = _layout(text, root)

    # --- positions --------------------------------------------------------------------------------
    def line_start(self, index: int) -> int:
        return self.text.rfind("\n", 0, index) + 1

    def line_after(self, index: int) -> int:
        """Where the line holding ``index`` ends, after its line break (and any comment before it)."""
        found = self.text.find("\n", index)
        return len(self.text) if found < 0 else found + 1

    def end(self, node: yaml.Node, floor: int) -> int:
        """Where ``node``'s own text ends. It must start at ``floor`` or later: a node that starts
        before is an alias (``*name``) of a value written earlier, and its place here is unknown."""
        if node.start_mark.index < floor:
            return self.alias(floor)[1]
        if isinstance(node, yaml.ScalarNode):
            end = node.end_mark.index
            if node.style in ("|", ">"):  # a block scalar's end includes its last line break
                while end > node.start_mark.index and self.text[end - 1] in "\r\n":
                    end -= 1
            return end
        if not isinstance(node, yaml.CollectionNode) or node.flow_style or not node.value:
            return node.end_mark.index
        # A block collection's end mark is where the next key starts, past any comments: use its last value's.
        if isinstance(node, yaml.MappingNode):
            key, value = node.value[-1]
            return self.end(value, key.end_mark.index)
        before = node.value[-2].end_mark.index if len(node.value) > 1 else node.start_mark.index
        return self.end(node.value[-1], before)

    def alias(self, after: int) -> tuple[int, int]:
        """Where the alias (``*name``) written just after a key (at its end) or a dash is."""
        found = _ALIAS.match(self.text, after)
        if found is None:
            raise CannotEdit("an alias not where it was looked for")
        return found.start(1), found.end(1)

    def head_end(self, key: yaml.Node) -> int:
        """The position just after the ``:`` that follows ``key``."""
        i = key.end_mark.index
        while i < len(self.text) and self.text[i] in " \t":
            i += 1
        if i >= len(self.text) or self.text[i] != ":":
            raise CannotEdit("no colon after the key")
        return i + 1

    def comments_above(self, index: int, column: int) -> int:
        """The start of the comment lines at ``column`` directly above the line at ``index``."""
        start = self.line_start(index)
        while start > 0:
            above = self.line_start(start - 1)
            line = self.text[above:start]
            if not line.lstrip().startswith("#") or len(line) - len(line.lstrip()) != column:
                break
            start = above
        return start

    def replace(self, start: int, end: int, text: str) -> None:
        """Put ``text`` in place of ``start:end`` of the original text (an insertion when they are equal)."""
        if any(start < e and s < end for s, e, _t in self.edits):
            raise CannotEdit("edits overlap")
        if self.layout.newline != "\n":
            text = _BARE_NEWLINE.sub(self.layout.newline, text)
        self.edits.append((start, end, text))

    def attempt(self, edit: Any, *args: Any) -> bool:
        """Run one edit; on :class:`CannotEdit` forget what it collected and say False."""
        mark = len(self.edits)
        try:
            edit(*args)
            return True
        except CannotEdit:
            del self.edits[mark:]
            return False

    # --- the document -----------------------------------------------------------------------------
    def document(self, old: dict[Any, Any], new: dict[Any, Any]) -> str:
        self.mapping(self.root, old, new, ())
        text = self.text
        # Back to front, so that each edit's positions are still those of the original text.
        for start, end, replacement in reversed(sorted(self.edits, key=lambda e: (e[0], e[1]))):
            if start == len(text) and text and not text.endswith("\n"):
                replacement = self.layout.newline + replacement
            text = text[:start] + replacement + text[end:]
        return text

    # --- block mappings ---------------------------------------------------------------------------
    def mapping(self, node: yaml.MappingNode, old: dict[Any, Any], new: dict[Any, Any], path: Path) -> None:
        pairs = node.value
        keys = list(old)
        if len(keys) != len(pairs) or not pairs:
            raise CannotEdit("the mapping does not match its text")
        column = pairs[0][0].start_mark.column
        for i, ((key_node, value_node), key) in enumerate(zip(pairs, keys, strict=True)):
            if key not in new:
                self.delete_pair(key_node, value_node, column, keep_above=not path and i == 0)
            elif not same(old[key], new[key]):
                self.change_pair(key_node, value_node, old[key], new[key], (*path, key))
        added = [k for k in new if k not in old]
        for anchor, group in insertion_points(keys, added, path):
            if anchor is None:
                first = pairs[0][0].start_mark.index
                if self.text[self.line_start(first) : first].strip():
                    raise CannotEdit("the first key shares its line")  # `- key: value`
                # Above the comments that belong to the first key; below the file's header.
                at = self.comments_above(first, column) if path else self.line_start(first)
            else:
                key_node, value_node = pairs[anchor]
                at = self.line_after(self.end(value_node, key_node.end_mark.index))
            lines = "".join(pair_lines(k, arrange(None, new[k], (*path, k)), column, self.layout) for k in group)
            self.replace(at, at, lines)

    def delete_pair(self, key: yaml.Node, value: yaml.Node, column: int, *, keep_above: bool) -> None:
        start = self.line_start(key.start_mark.index)
        if self.text[start : key.start_mark.index].strip():
            raise CannotEdit("the key shares its line")
        if not keep_above:
            start = self.comments_above(start, column)
        self.replace(start, self.line_after(self.end(value, key.end_mark.index)), "")

    def change_pair(self, key: yaml.Node, value: yaml.Node, old: Any, new: Any, path: Path) -> None:
        if value.start_mark.index < key.end_mark.index:
            # `key: *name`: the value is written at the anchor; here only the alias is replaced.
            if not is_inline(new):
                raise CannotEdit("an alias becoming a block")
            start, end = self.alias(key.end_mark.index)
            self.replace(start, end, value_text(arrange(None, new, path), key.start_mark.column, self.layout))
            return
        if not self.nested(value, old, new, path):
            self.rewrite(self.head_end(key), key.start_mark.column, value, old, new, path)

    def nested(self, node: yaml.Node, old: Any, new: Any, path: Path) -> bool:
        """Edit inside a collection that stays one, keeping what is unchanged in it; False when it cannot."""
        if isinstance(node, yaml.MappingNode) and isinstance(old, dict) and isinstance(new, dict) and new:
            return self.attempt(self.flow_mapping if node.flow_style else self.mapping, node, old, new, path)
        if isinstance(node, yaml.SequenceNode) and isinstance(old, list) and isinstance(new, list) and new:
            return self.attempt(self.flow_sequence if node.flow_style else self.sequence, node, old, new, path)
        return False

    def rewrite(self, head: int, column: int, node: yaml.Node, old: Any, new: Any, path: Path) -> None:
        """Write ``new`` in place of ``node``, the value after a key at ``column`` (``head`` is just after
        its colon). A scalar keeps its quoting; a flow collection stays flow, a block one block."""
        new = arrange(old, new, path)
        style = node.style if isinstance(node, yaml.ScalarNode) else None
        was_flow = isinstance(node, yaml.CollectionNode) and bool(node.flow_style)
        was_block = isinstance(node, yaml.CollectionNode) and not node.flow_style
        inline_new = is_scalar(new) or not new or was_flow or (not was_block and is_inline(new))
        end = self.end(node, head)
        inline_old = "\n" not in self.text[head : node.start_mark.index]
        if inline_new:
            text = value_text(new, column, self.layout, style=style)
        else:
            text = block_lines(new, column, self.layout)
        if inline_old and inline_new:
            lead = "" if node.start_mark.index > head else " "  # `key:` with nothing after it
            self.replace(node.start_mark.index, end, lead + text)
        elif inline_old:
            self.replace(head, end, "")
            at = self.line_after(end)
            self.replace(at, at, text)
        elif inline_new:
            self.replace(head, head, " " + text)
            self.replace(self.line_start(node.start_mark.index), self.line_after(end), "")
        else:
            self.replace(self.line_start(node.start_mark.index), self.line_after(end), text)

    # --- block lists ------------------------------------------------------------------------------
    def sequence(self, node: yaml.SequenceNode, old: list[Any], new: list[Any], path: Path) -> None:
        items = node.value
        if len(items) != len(old) or not items:
            raise CannotEdit("the list does not match its text")
        dashes = []
        floor = node.start_mark.index
        for item in items:
            if item.start_mark.index < floor:
                raise CannotEdit("an alias")
            start = self.line_start(item.start_mark.index)
            found = _DASH.fullmatch(self.text[start : item.start_mark.index])
            if found is None:
                raise CannotEdit("an item not on its dash's line")
            dashes.append(start + len(found.group(1)))
            floor = item.end_mark.index
        column = dashes[0] - self.line_start(dashes[0])
        for tag, i1, i2, j1, j2 in _opcodes(old, new):
            if tag == "replace" and i2 - i1 == j2 - j1:
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    self.change_item(items[i], dashes[i], column, old[i], new[j], path)
                continue
            for i in range(i1, i2):
                self.replace(self.line_start(dashes[i]), self.line_after(self.end(items[i], dashes[i])), "")
            if j2 > j1:
                at = self.line_after(self.end(items[i1 - 1], dashes[i1 - 1])) if i1 else self.line_start(dashes[0])
                lines = "".join(item_lines(arrange(None, v, path), column, self.layout) for v in new[j1:j2])
                self.replace(at, at, lines)

    def change_item(self, item: yaml.Node, dash: int, column: int, old: Any, new: Any, path: Path) -> None:
        if self.nested(item, old, new, path):
            return
        end = self.end(item, dash)
        if isinstance(item, yaml.ScalarNode) and is_scalar(new):
            self.replace(item.start_mark.index, end, value_text(new, column, self.layout, style=item.style))
        else:
            lines = item_lines(arrange(old, new, path), column, self.layout)
            self.replace(self.line_start(dash), self.line_after(end), lines)

    # --- flow collections -------------------------------------------------------------------------
    def flow_parts(self, node: yaml.CollectionNode, parts: list[yaml.Node]) -> None:
        """Refuse a flow collection holding an alias or a block collection (nothing to splice by)."""
        floor = node.start_mark.index
        for part in parts:
            if part.start_mark.index < floor or (isinstance(part, yaml.CollectionNode) and not part.flow_style):
                raise CannotEdit("an alias or a block inside a flow collection")
            floor = part.end_mark.index

    def flow_value(self, node: yaml.Node, old: Any, new: Any, path: Path) -> None:
        style = node.style if isinstance(node, yaml.ScalarNode) and is_scalar(new) else None
        text = inline_text(arrange(old, new, path), style=style, flow=True)
        self.replace(node.start_mark.index, node.end_mark.index, text)

    def flow_sequence(self, node: yaml.SequenceNode, old: list[Any], new: list[Any], path: Path) -> None:
        items = node.value
        if len(items) != len(old) or not items:
            raise CannotEdit("the list does not match its text")
        self.flow_parts(node, items)
        style = _common_style(items)
        for tag, i1, i2, j1, j2 in _opcodes(old, new):
            if tag == "replace" and i2 - i1 == j2 - j1:
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    self.flow_value(items[i], old[i], new[j], path)
                continue
            texts = [inline_text(arrange(None, v, path), style=style, flow=True) for v in new[j1:j2]]
            starts = [item.start_mark.index for item in items]
            ends = [item.end_mark.index for item in items]
            self.flow_splice(starts, ends, i1, i2, texts)

    def flow_mapping(self, node: yaml.MappingNode, old: dict[Any, Any], new: dict[Any, Any], path: Path) -> None:
        pairs = node.value
        keys = list(old)
        if len(keys) != len(pairs) or not pairs:
            raise CannotEdit("the mapping does not match its text")
        self.flow_parts(node, [n for pair in pairs for n in pair])
        starts = [key.start_mark.index for key, _value in pairs]
        ends = [value.end_mark.index for _key, value in pairs]
        kept = [i for i, k in enumerate(keys) if k in new]
        if not kept:
            raise CannotEdit("every key replaced")
        for i in kept:
            if not same(old[keys[i]], new[keys[i]]):
                self.flow_value(pairs[i][1], old[keys[i]], new[keys[i]], (*path, keys[i]))
        i = 0
        while i < len(keys):  # runs of removed keys
            j = i
            while j < len(keys) and keys[j] not in new:
                j += 1
            if j > i:
                self.flow_splice(starts, ends, i, j, [])
            i = j + 1
        added = [k for k in new if k not in old]
        for anchor, group in insertion_points([keys[i] for i in kept], added, path):
            texts = [f"{inline_text(k, flow=True)}: {inline_text(arrange(None, new[k], (*path, k)), flow=True)}"
                     for k in group]  # fmt: skip
            if anchor is None:  # before the first key kept: `new, ` in front of it
                self.replace(starts[kept[0]], starts[kept[0]], "".join(t + ", " for t in texts))
            else:
                self.flow_splice(starts, ends, kept[anchor] + 1, kept[anchor] + 1, texts)

    def flow_splice(self, starts: list[int], ends: list[int], i1: int, i2: int, texts: list[str]) -> None:
        """Replace the items ``i1:i2`` of a flow collection (their text from ``starts``/``ends``) by
        ``texts``, keeping the separators around the rest as written."""
        n = len(starts)
        if i1 == 0 and i2 == n:
            self.replace(starts[0], ends[-1], ", ".join(texts))
        elif i1 > 0:  # after the item before: `, new` in place of `, old`
            self.replace(ends[i1 - 1], ends[i2 - 1] if i2 > i1 else ends[i1 - 1], "".join(", " + t for t in texts))
        else:  # at the front: `new, ` in place of `old, `
            self.replace(starts[0], starts[i2], "".join(t + ", " for t in texts))


def _opcodes(old: list[Any], new: list[Any]) -> list[tuple[str, int, int, int, int]]:
    """How ``old`` becomes ``new``, item by item, without the parts that stay."""
    matcher = difflib.SequenceMatcher(None, [_fingerprint(v) for v in old], [_fingerprint(v) for v in new], False)
    return [op for op in matcher.get_opcodes() if op[0] != "equal"]


def _common_style(items: list[yaml.Node]) -> str | None:
    """The quoting the list's text items share (new items are written alike), else None."""
    styles = {item.style for item in items if isinstance(item, yaml.ScalarNode) and item.tag.endswith(":str")}
    return styles.pop() if len(styles) == 1 else None


def _layout(text: str, root: yaml.MappingNode) -> Layout:
    """How the file indents a nested mapping and a list under a key, and how its lines end."""
    step, indent_lists = 2, True
    found_step = found_lists = False
    stack: list[yaml.Node] = [root]
    while stack and not (found_step and found_lists):
        node = stack.pop()
        if not isinstance(node, yaml.MappingNode) or node.flow_style:
            continue
        for key, value in node.value:
            if isinstance(value, yaml.MappingNode) and not value.flow_style and value.value and not found_step:
                inner = value.value[0][0].start_mark.column - key.start_mark.column
                if 2 <= inner <= 9:
                    step, found_step = inner, True
            if isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value and not found_lists:
                line = text.rfind("\n", 0, value.value[0].start_mark.index) + 1
                dash = _DASH.fullmatch(text[line : value.value[0].start_mark.index])
                if dash is not None:
                    indent_lists, found_lists = len(dash.group(1)) > key.start_mark.column, True
            stack.append(value)
    return Layout(step=step, indent_lists=indent_lists, newline="\r\n" if "\r\n" in text else "\n")


def edit_text(text: str, root: yaml.MappingNode, old: dict[Any, Any], new: dict[Any, Any]) -> str:
    """``text``, whose block mapping ``root`` reads as ``old``, rewritten to read as ``new``.

    Raises :class:`CannotEdit` where the layout is not edited in place. The caller checks the
    result by reading it back (a change to an anchored value also changes its aliases).
    """
    return _Editor(text, root).document(old, new)
