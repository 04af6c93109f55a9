"""Keeping a person's comments where they belong while entries come and go in a
ruamel.yaml round-trip tree.

ruamel.yaml keeps the comment lines between two entries with the entry *before*
them: in ``a: 1  # one`` / ``# about b`` / ``b: 2`` the slot after ``a``'s value
holds ``"# one\\n# about b\\n"``, its own end-of-line comment and then the lines
above ``b``. The lines after a block mapping or list are held by its last entry,
and the lines above the first entry of a nested one by the slot after its key
(the file's header by the top mapping itself). Left alone, removing ``a`` would
take ``# about b`` with it, and an entry added after ``a`` would land between
``# about b`` and ``b``. So:

- :func:`remove` drops an entry with its end-of-line comment and the comment
  lines directly above it (a comment with a blank line under it stays, and so
  does the file's header), and hands the lines above the next entry to the
  entry before;
- :func:`insert` adds an entry and hands it the lines that stood above the entry
  it goes before, so they stay above that one;
- :func:`replace` changes a value and keeps the lines after the old value after
  the new one (its end-of-line comment stays on the key's line).

A slot's text is its end-of-line part (``"# one\\n"``, or ``"\\n"`` when there is
no comment) followed by whole lines, each with its own indentation.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.tokens import CommentToken

Collection = CommentedMap | CommentedSeq
Parent = tuple[Collection, Any] | None
"""The collection and key holding a nested collection; None for the top of the file."""


def is_block(value: Any) -> bool:
    """A non-empty block mapping or list: the lines after it are held by its last entry."""
    return isinstance(value, CommentedMap | CommentedSeq) and len(value) > 0 and not value.fa.flow_style()


def _keys(c: Collection) -> list[Any]:
    return list(c) if isinstance(c, CommentedMap) else list(range(len(c)))


def _pos(c: Collection) -> int:
    """Where in an entry's comment record ruamel keeps the lines after its value."""
    return 2 if isinstance(c, CommentedMap) else 0


def _tail(c: Collection, key: Any) -> tuple[Collection, Any]:
    """The entry whose slot holds the lines after ``c[key]``: itself, or the last entry of a block value."""
    while is_block(c[key]):
        c = c[key]
        key = _keys(c)[-1]
    return c, key


def _get(c: Collection, key: Any) -> str:
    record = c.ca.items.get(key)
    token = record[_pos(c)] if record else None
    return token.value if token is not None else ""


def _set(c: Collection, key: Any, text: str) -> None:
    record = c.ca.items.get(key)
    token = record[_pos(c)] if record else None
    if text in ("", "\n"):
        if token is not None:
            record[_pos(c)] = None
    elif token is not None:
        token.value = text
    else:
        record = c.ca.items.setdefault(key, [None, None, None, None])
        record[_pos(c)] = CommentToken(text, CommentMark(0))


def _split(text: str) -> tuple[str, str]:
    """A slot's text as its end-of-line part and the whole lines after it."""
    if not text:
        return "\n", ""
    eol, newline, rest = text.partition("\n")
    return eol + newline, rest


def _without_own_comment(lines: str) -> str:
    """``lines`` without the comment lines at their end (those directly above the entry that follows)."""
    kept = lines.splitlines(keepends=True)
    while kept and kept[-1].lstrip().startswith("#"):
        kept.pop()
    return "".join(kept)


def _line(token: CommentToken) -> str:
    """A comment token's text as whole lines: its first line is indented by the token's column."""
    value = token.value
    return value if value.startswith("\n") else " " * token.column + value


def _take_head(parent: Parent) -> str:
    """Take the lines above the first entry of a nested collection out of the tree (none at the top)."""
    if parent is None or not isinstance(parent[0], CommentedMap):
        return ""
    holder, key = parent
    record = holder.ca.items.get(key)
    if not record:
        return ""
    eol, rest = _split(_get(holder, key))
    if rest:
        _set(holder, key, eol)
    pre = record[3] or []
    record[3] = None
    return rest + "".join(_line(token) for token in pre)


def _put_head(parent: Parent, c: Collection, lines: str) -> None:
    """Put ``lines`` above the first entry of ``c``: after its key's line, or at the top of the file."""
    if not lines:
        return
    if parent is not None and isinstance(parent[0], CommentedMap):
        holder, key = parent
        eol, rest = _split(_get(holder, key))
        _set(holder, key, eol + rest + lines)
        return
    if c.ca.comment is None:
        c.ca.comment = [None, []]
    while len(c.ca.comment) < 2:
        c.ca.comment.append(None)
    if c.ca.comment[1] is None:
        c.ca.comment[1] = []
    c.ca.comment[1].append(CommentToken(lines, CommentMark(0)))


def remove(c: Collection, key: Any, parent: Parent = None) -> None:
    """Delete ``c[key]`` (a key of a mapping, an index of a list) with its own comments, keeping the
    lines that stood above the entry after it."""
    keys = _keys(c)
    i = keys.index(key)
    after = _split(_get(*_tail(c, key)))[1]
    del c[key]
    if isinstance(c, CommentedMap):
        c.ca.items.pop(key, None)
    if i > 0:
        prev = _tail(c, keys[i - 1])
        eol, rest = _split(_get(*prev))
        _set(*prev, eol + _without_own_comment(rest) + after)
    else:
        head = _take_head(parent)
        if parent is None:  # the file's header stays whole
            _put_head(parent, c, after)
        else:
            _put_head(parent, c, _without_own_comment(head) + after)


def insert(c: Collection, index: int, key: Any, value: Any, parent: Parent = None) -> None:
    """Put ``key: value`` (or the item ``value`` of a list; ``key`` unused) at ``index``; the lines that
    stood above the entry there stay above it."""
    keys = _keys(c)
    moved = ""
    if index > 0:
        prev = _tail(c, keys[index - 1])
        eol, moved = _split(_get(*prev))
        _set(*prev, eol)
    elif keys:
        moved = _take_head(parent)
    if isinstance(c, CommentedMap):
        c.insert(index, key, value)
    else:
        c.insert(index, value)
        key = index
    if moved:
        tail = _tail(c, key)
        eol, rest = _split(_get(*tail))
        _set(*tail, eol + rest + moved)


def _same_slot(a: tuple[Collection, Any], b: tuple[Collection, Any]) -> bool:
    return a[0] is b[0] and a[1] == b[1]


def replace(c: Collection, key: Any, value: Any) -> None:
    """``c[key] = value``; the comment on the key's line stays, and so do the lines after the old value.

    A block replaced by a value on the key's line takes the comment lines directly above its first
    entry along, as :func:`remove` would.
    """
    before = _tail(c, key)
    eol, after = _split(_get(*before))
    was_block = not _same_slot(before, (c, key))
    head = _take_head((c, key)) if was_block and not is_block(value) else ""
    c[key] = value
    now = _tail(c, key)
    moved = _without_own_comment(head) + after
    if _same_slot(now, before) or not moved:
        return
    if not was_block:  # the slot after the key now holds its line's comment only
        _set(c, key, eol)
    now_eol, now_rest = _split(_get(*now))
    _set(*now, now_eol + now_rest + moved)
