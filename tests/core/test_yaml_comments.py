"""Comments stay with the entry they belong to when entries of a ruamel.yaml
round-trip tree are removed, inserted or replaced (core.spec.yaml_comments)."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from core.spec import yaml_comments

DOC = """\
# header
schema: x   # eol of schema
# above title
title: t
task:   # eol of task
  # above argv
  argv: [a]
  # above timeout
  timeout: PT1M   # eol of timeout
# after task

# a section
exclude:
  - a   # eol of a
  # above b
  - b
  # above c
  - c
# end
"""


def _yaml() -> YAML:
    yaml = YAML()
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def _run(edit: Callable[[CommentedMap], object], text: str = DOC) -> str:
    root = _yaml().load(text)
    edit(root)
    out = io.StringIO()
    _yaml().dump(root, out)
    return out.getvalue()


def _without(text: str, *lines: str) -> str:
    kept = text.splitlines(keepends=True)
    for line in lines:
        kept.remove(line + "\n")
    return "".join(kept)


def _with(text: str, after: str, *lines: str) -> str:
    at = text.index(after + "\n") + len(after) + 1
    return text[:at] + "".join(line + "\n" for line in lines) + text[at:]


def test_untouched_text_is_written_back_as_it_was() -> None:
    assert _run(lambda root: None) == DOC


def _task(root: CommentedMap) -> tuple[CommentedMap, tuple[CommentedMap, Any]]:
    return root["task"], (root, "task")


def _exclude(root: CommentedMap) -> tuple[CommentedSeq, tuple[CommentedMap, Any]]:
    return root["exclude"], (root, "exclude")


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(lambda r: yaml_comments.remove(r, "title"), _without(DOC, "# above title", "title: t"),
                     id="a_key_with_the_comment_above_it"),
        pytest.param(lambda r: yaml_comments.remove(r, "schema"), _without(DOC, "schema: x   # eol of schema"),
                     id="the_first_key_leaves_the_header_and_the_next_keys_comment"),
        pytest.param(lambda r: yaml_comments.remove(*_task(r)[:1], "timeout", _task(r)[1]),
                     _without(DOC, "  # above timeout", "  timeout: PT1M   # eol of timeout"),
                     id="the_last_key_of_a_mapping_leaves_what_follows_the_mapping"),
        pytest.param(lambda r: yaml_comments.remove(_task(r)[0], "argv", _task(r)[1]),
                     _without(DOC, "  # above argv", "  argv: [a]"), id="the_first_key_of_a_nested_mapping"),
        pytest.param(lambda r: yaml_comments.remove(r, "task"),
                     _without(DOC, "task:   # eol of task", "  # above argv", "  argv: [a]", "  # above timeout",
                              "  timeout: PT1M   # eol of timeout"), id="a_whole_mapping"),
        pytest.param(lambda r: yaml_comments.remove(r, "exclude"),
                     _without(DOC, "# a section", "exclude:", "  - a   # eol of a", "  # above b", "  - b",
                              "  # above c", "  - c"), id="the_last_key_leaves_the_end_of_the_file"),
        pytest.param(lambda r: yaml_comments.remove(_exclude(r)[0], 1, _exclude(r)[1]),
                     _without(DOC, "  # above b", "  - b"), id="an_item"),
        pytest.param(lambda r: yaml_comments.remove(_exclude(r)[0], 0, _exclude(r)[1]),
                     _without(DOC, "  - a   # eol of a"), id="the_first_item"),
        pytest.param(lambda r: yaml_comments.remove(_exclude(r)[0], 2, _exclude(r)[1]),
                     _without(DOC, "  # above c", "  - c"), id="the_last_item"),
    ],
)  # fmt: skip
def test_remove(edit: Callable[[CommentedMap], object], expected: str) -> None:
    assert _run(edit) == expected


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(lambda r: yaml_comments.insert(r, 1, "revision", 1), _with(DOC, "schema: x   # eol of schema",
                     "revision: 1"), id="after_a_key_the_next_keys_comment_stays_above_it"),
        pytest.param(lambda r: yaml_comments.insert(r, 2, "kind", "calendar"), _with(DOC, "title: t", "kind: calendar"),
                     id="after_a_key_without_comments"),
        pytest.param(lambda r: yaml_comments.insert(r, 3, "end", "soon"),
                     _with(DOC, "  timeout: PT1M   # eol of timeout", "end: soon"),
                     id="after_a_nested_mapping_above_what_followed_it"),
        pytest.param(lambda r: yaml_comments.insert(_task(r)[0], 0, "kind", "command", _task(r)[1]),
                     _with(DOC, "task:   # eol of task", "  kind: command"),
                     id="first_in_a_nested_mapping_above_the_first_keys_comment"),
        pytest.param(lambda r: yaml_comments.insert(_exclude(r)[0], 1, None, "a2", _exclude(r)[1]),
                     _with(DOC, "  - a   # eol of a", "  - a2"), id="an_item"),
        pytest.param(lambda r: yaml_comments.insert(r, 4, "revision", 2), _with(DOC, "  - c", "revision: 2"),
                     id="at_the_end_above_the_files_last_comment"),
    ],
)  # fmt: skip
def test_insert(edit: Callable[[CommentedMap], object], expected: str) -> None:
    assert _run(edit) == expected


def test_replace_a_value_by_a_block_keeps_the_line_comment_and_what_follows() -> None:
    block = CommentedMap(a=1)
    block.fa.set_block_style()
    out = _run(lambda r: yaml_comments.replace(r, "schema", block))
    assert out.startswith("# header\nschema:     # eol of schema\n  a: 1\n# above title\ntitle: t\n")


def test_replace_a_block_by_a_value_keeps_what_followed_the_block() -> None:
    out = _run(lambda r: yaml_comments.replace(r, "task", "none"))
    assert "title: t\ntask: none # eol of task\n# after task\n\n# a section\n" in out
