"""Writing changes into a person's spec file with ruamel.yaml's round-trip mode.

:func:`rewrite` loads the file's text with ruamel.yaml's round-trip loader
(comments, key order, quoting, flow and block style, anchors kept), walks the
new mapping onto it and dumps it. The walk touches only what differs from the
mapping the text was read as (by the safe loader, :func:`core.spec.files.load_text`,
which every text passes first): a changed value is assigned where it stands, in
its old quoting; a mapping or list is edited inside, entry by entry; a removed
key goes and a new key goes where the contract orders it
(:func:`core.spec.order.insertion_points`); :mod:`core.spec.yaml_comments` keeps
each comment with the entry it belongs to.

ruamel.yaml is set to change as little as possible of what is not edited:
quotes kept, no line wrapping, the file's own indentation (read from the file),
nulls and numbers as spelled, anchors, the lines up to a ``---``, Windows line
ends and a missing final line break kept. Text it writes
reads back the same with the project's reader (YAML 1.1 without timestamps):
``yes`` and ``1:30`` are quoted, a date stays plain. The caller reads the result
back and compares; :class:`CannotKeep` says the layout is one this does not edit.
"""

from __future__ import annotations

import difflib
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarbool import ScalarBoolean
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    ScalarString,
    SingleQuotedScalarString,
)

from core.spec import yaml_comments
from core.spec.order import Path, contract_order, insertion_points
from core.spec.yaml_text import fits_on_one_line, writes_plain

_LINE_BREAKS = re.compile("[\r\n\x85\u2028\u2029]")
_NULL_WORD = re.compile(r"(~|null|Null|NULL)(?![^\s,\]}#])")
#: Comment lines, blank lines and directives, then ``---`` and the rest of its line.
_DOCUMENT_START = re.compile(r"(?:[ \t]*(?:#[^\r\n]*)?\r?\n|%[^\r\n]*\r?\n)*---(?=\s|$)([^\r\n]*)(?:\r?\n|$)")
_PLAIN_WORD = re.compile(r"[^\s,\[\]{}#]+")
_SPECIAL_FLOATS = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class CannotKeep(Exception):
    """The file is laid out in a way the round trip does not edit (the caller writes it fresh)."""


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (``1``, ``1.0`` and ``True`` differ); key order aside."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# --- ruamel.yaml, set to keep what it is given ----------------------------------------------------


class _Resolver(VersionedResolver):
    """ruamel.yaml's resolver without timestamps: dates load as the text written and are written plain,
    as the project's reader keeps them as text."""

    @property
    def versioned_resolver(self) -> Any:
        table = super().versioned_resolver
        return {first: [(tag, rx) for tag, rx in rules if str(tag) != _TIMESTAMP] for first, rules in table.items()}


class _Verbatim(str):
    """A plain scalar written again exactly as it is in the file: a null (``~``, ``Null`` or nothing,
    which ruamel.yaml writes as nothing) or a number (written again from its value, a float can lose
    its last digit and ``+5`` its sign)."""

    tag = ""

    @classmethod
    def of(cls, text: str, tag: str) -> _Verbatim:
        kept = cls(text)
        kept.tag = tag
        return kept


class _Representer(RoundTripRepresenter):
    pass


def _represent_null(representer: Any, _data: None) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", "null")


def _represent_verbatim(representer: Any, data: _Verbatim) -> Any:
    return representer.represent_scalar(data.tag, str(data))


def _represent_float(representer: Any, data: float) -> Any:
    # As the project's reader (YAML 1.1) reads it: `1.0e+20`, not ruamel.yaml's YAML 1.2 `1e+20`.
    if data != data:
        text = ".nan"
    elif data in (float("inf"), float("-inf")):
        text = ".inf" if data > 0 else "-.inf"
    else:
        text = repr(data).lower()
        if "." not in text and "e" in text:
            text = text.replace("e", ".0e", 1)
    return representer.represent_scalar("tag:yaml.org,2002:float", text)


_Representer.add_representer(type(None), _represent_null)
_Representer.add_representer(_Verbatim, _represent_verbatim)
_Representer.add_representer(float, _represent_float)


@dataclass(frozen=True)
class Layout:
    """How a file is written, so that what is dumped is written alike."""

    mapping: int = 2
    """Columns a nested mapping is indented by."""
    sequence: int = 4
    """Columns from a key to the items of a block list under it."""
    offset: int = 2
    """Columns from a key to the dashes of a block list under it."""
    crlf: bool = False
    final_newline: bool = True
    start: str = ""
    """The file's lines up to and including a ``---`` line: comments above ``---`` are not in the
    tree, so they are written back as they were."""
    explicit_start: bool = False
    """``---`` with more on its line (written again as ruamel.yaml writes it)."""


def _yaml(layout: Layout | None = None) -> YAML:
    yaml = YAML(typ="rt", pure=True)
    yaml.Resolver = _Resolver
    yaml.Representer = _Representer
    yaml.preserve_quotes = True
    yaml.width = 1 << 20  # never re-wrap a line
    if layout is not None:
        yaml.indent(mapping=layout.mapping, sequence=layout.sequence, offset=layout.offset)
        yaml.explicit_start = layout.explicit_start
    return yaml


def _blocks(node: CommentedMap) -> Iterator[tuple[int, CommentedMap | CommentedSeq]]:
    """The block mappings and lists under ``node``'s keys, in the file's order, with their key's column."""
    for key in node:
        value = node[key]
        if yaml_comments.is_block(value) and anchor_of(value) is None:
            yield node.lc.key(key)[1], value
            if isinstance(value, CommentedMap):
                yield from _blocks(value)


def layout_of(text: str, root: CommentedMap) -> Layout:
    """The indentation of ``text``'s first nested block mapping and first block list, its line ends,
    its final line break and whether it starts with ``---``."""
    lines = text.splitlines()
    mapping = sequence = offset = None
    for column, value in _blocks(root):
        if isinstance(value, CommentedMap):
            if mapping is None:
                mapping = value.lc.key(next(iter(value)))[1] - column
        elif sequence is None:
            line, item = value.lc.item(0)
            before = lines[line][:item].rstrip()
            if before.endswith("-"):  # not `- - a`
                sequence, offset = item - column, len(before) - 1 - column
        if mapping is not None and sequence is not None:
            break
    if mapping is None or not 2 <= mapping <= 9:
        mapping = Layout.mapping
    if sequence is None or offset is None or not (offset >= 0 and offset + 2 <= sequence <= 9):
        sequence, offset = mapping + 2, mapping  # block lists indented under their key, as new files are
    head = _DOCUMENT_START.match(text)
    start = head.group() if head is not None and not head.group(1).strip() else ""
    return Layout(
        mapping=mapping,
        sequence=sequence,
        offset=offset,
        crlf="\r\n" in text,
        final_newline=text.endswith(("\n", "\r")),
        start=start,
        explicit_start=head is not None and not start,
    )


def anchor_of(value: Any) -> Any:
    """The anchor (``&name``) a loaded value carries, or None."""
    getter = getattr(value, "yaml_anchor", None)
    if getter is None:
        return None
    anchor = getter() if isinstance(value, CommentedMap | CommentedSeq) else getter(any=True)
    return anchor if anchor is not None and anchor.value is not None else None


def _number(text: str, value: int | float) -> _Verbatim | None:
    """``text`` to be written again for the number ``value``, if that is what it says."""
    digits = text.replace("_", "")
    try:
        if isinstance(value, float):
            read = _SPECIAL_FLOATS[digits.lower()] if digits.lower() in _SPECIAL_FLOATS else float(digits)
            same_value = read == value or (read != read and value != value)
            return _Verbatim.of(text, "tag:yaml.org,2002:float") if same_value else None
        return _Verbatim.of(text, "tag:yaml.org,2002:int") if int(digits, 0) == value else None
    except ValueError:
        return None  # `0017` and the like: ruamel.yaml keeps those itself


def _keep_as_written(node: Any, lines: list[str]) -> None:
    """Mark what ruamel.yaml would otherwise write its own way: nulls and numbers are written again
    as they are in the file (:class:`_Verbatim`), and each anchor is kept even once no alias uses it."""
    anchor = anchor_of(node)
    if anchor is not None:
        node.yaml_set_anchor(anchor.value, always_dump=True)
    if isinstance(node, CommentedMap):
        keys: list[Any] = list(node)
        places = {key: node.lc.value(key) for key in keys}
    elif isinstance(node, CommentedSeq):
        keys = list(range(len(node)))
        places = {i: node.lc.item(i) for i in keys}
    else:
        return
    for key in keys:
        value = node[key]
        line, column = places[key]
        text = lines[line] if line < len(lines) else ""
        if value is None:
            found = _NULL_WORD.match(text, column)
            node[key] = _Verbatim.of(found.group(1) if found else "", "tag:yaml.org,2002:null")
        elif isinstance(value, int | float) and not isinstance(value, bool | ScalarBoolean):
            word = _PLAIN_WORD.match(text, column)
            kept = _number(word.group(), value) if word and anchor_of(value) is None else None
            if kept is not None:
                node[key] = kept
        else:
            _keep_as_written(value, lines)


# --- values written fresh ---------------------------------------------------------------------------


def styled_text(text: str, like: Any = None, *, flow: bool = False) -> str:
    """``text`` to be written where ``like`` was, inside ``[...]`` or ``{...}`` when ``flow``: in
    ``like``'s quoting (``|`` and ``>`` blocks stay blocks), quoted where plain would not read back
    as this text, on one line with ``\\n`` escapes where it holds line breaks."""
    kind: type[str] = type(like) if isinstance(like, ScalarString) else str
    if kind in (LiteralScalarString, FoldedScalarString) and not flow:
        return kind(text)
    if _LINE_BREAKS.search(text):
        kind = DoubleQuotedScalarString
    elif kind not in (SingleQuotedScalarString, DoubleQuotedScalarString) and not writes_plain(text, flow=flow):
        kind = SingleQuotedScalarString  # written in double quotes where single ones cannot hold it
    return kind(text) if kind in (SingleQuotedScalarString, DoubleQuotedScalarString) else text


def _is_flow(value: Any) -> bool:
    return isinstance(value, CommentedMap | CommentedSeq) and bool(value.fa.flow_style())


def fresh(value: Any, path: Path, like: Any = None, *, flow: bool = False) -> Any:
    """``value`` as ruamel.yaml writes it where ``like`` was (None: nothing was), inside a flow
    collection when ``flow``. A mapping or list keeps ``like``'s flow or block style; a new one is
    block, but for a list of plain values that fits on its key's line and empty ones (``{}``, ``[]``).
    Mappings are in the contract's order."""
    if isinstance(value, dict | list):
        if isinstance(like, CommentedMap | CommentedSeq) and value:
            own_flow = _is_flow(like)
        else:
            own_flow = not value or (isinstance(value, list) and fits_on_one_line(value))
        inner = flow or own_flow
        out: CommentedMap | CommentedSeq
        if isinstance(value, dict):
            out = CommentedMap()
            for key in contract_order(list(value), path):
                out_key = styled_text(key, flow=inner) if isinstance(key, str) else key
                out[out_key] = fresh(value[key], (*path, key), flow=inner)
        else:
            out = CommentedSeq(fresh(item, path, flow=inner) for item in value)
        out.fa.set_flow_style() if own_flow else out.fa.set_block_style()
        return out
    if isinstance(value, str):
        return styled_text(value, like, flow=flow)
    return value


# --- the walk ------------------------------------------------------------------------------------------


def _fingerprint(value: Any) -> str:
    """A text that differs when :func:`same` says values differ (to match list items)."""
    return f"{type(value).__name__}:{value!r}"


def _change(holder: Any, key: Any, old: Any, new: Any, path: Path, flow: bool) -> None:
    """Make ``holder[key]`` (read as ``old``) read as ``new``, keeping what is the same as it was;
    ``flow`` when ``holder`` is written in flow style."""
    if same(old, new):
        return
    current = holder[key]
    if isinstance(current, CommentedMap | CommentedSeq) and not current:
        current.fa.set_flow_style()  # written `{}` or `[]`: it stays flow as it fills
    if new and anchor_of(current) is None:  # an anchored value's aliases would change with it
        inner = flow or _is_flow(current)
        if isinstance(current, CommentedMap) and isinstance(old, dict) and isinstance(new, dict):
            _mapping(current, old, new, path, (holder, key), inner)
            return
        if isinstance(current, CommentedSeq) and isinstance(old, list) and isinstance(new, list):
            _sequence(current, old, new, path, (holder, key), inner)
            return
    yaml_comments.replace(holder, key, fresh(new, path, like=current, flow=flow))


def _mapping(node: CommentedMap, old: dict[Any, Any], new: dict[Any, Any], path: Path, parent: Any, flow: bool) -> None:
    keys = list(node)
    if len(keys) != len(old) or any(key not in old for key in keys):
        raise CannotKeep("the keys of a mapping are not those the reader read")
    for key in keys:
        if key not in new:
            yaml_comments.remove(node, key, parent)
        else:
            _change(node, key, old[key], new[key], (*path, key), flow)
    kept = [key for key in keys if key in new]
    added = [key for key in new if key not in old]
    for anchor, group in insertion_points(kept, added, path):
        at = 0 if anchor is None else list(node).index(kept[anchor]) + 1
        for n, key in enumerate(group):
            out_key = styled_text(key, flow=flow) if isinstance(key, str) else key
            yaml_comments.insert(node, at + n, out_key, fresh(new[key], (*path, key), flow=flow), parent)


def _sequence(node: CommentedSeq, old: list[Any], new: list[Any], path: Path, parent: Any, flow: bool) -> None:
    if len(node) != len(old):
        raise CannotKeep("the list is not as the reader read it")
    kinds = {type(item) for item in node if isinstance(item, str) and not isinstance(item, _Verbatim)}
    like = node[0] if len(kinds) == 1 and isinstance(node[0], ScalarString) else None  # new items quoted alike
    matcher = difflib.SequenceMatcher(None, [_fingerprint(v) for v in old], [_fingerprint(v) for v in new], False)
    for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                _change(node, i, old[i], new[j], path, flow)
            continue
        for i in reversed(range(i1, i2)):
            yaml_comments.remove(node, i, parent)
        for n, j in enumerate(range(j1, j2)):
            yaml_comments.insert(node, i1 + n, None, fresh(new[j], path, like=like, flow=flow), parent)


def rewrite(text: str, old: dict[Any, Any], new: dict[Any, Any]) -> str:
    """``text``, read as ``old`` by the project's reader, with ``new`` written into it.

    Raises :class:`CannotKeep` for a layout this does not edit (a top-level ``{...}``);
    ruamel.yaml's own errors pass through. The caller checks the result by reading it back.
    """
    root = _yaml().load(text)
    if not isinstance(root, CommentedMap) or root.fa.flow_style():
        raise CannotKeep("the file is not a block mapping")
    _keep_as_written(root, text.splitlines())
    layout = layout_of(text, root)
    _mapping(root, old, new, (), None, False)
    out = io.StringIO()
    _yaml(layout).dump(root, out)
    written = out.getvalue().replace("\r\n", "\n")
    if layout.crlf:
        written = written.replace("\n", "\r\n")
    newline = "\r\n" if layout.crlf else "\n"
    if not layout.final_newline and written.endswith(newline):
        written = written[: -len(newline)]
    return layout.start + written
