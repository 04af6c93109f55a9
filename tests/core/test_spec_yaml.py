"""Round-trip editing of spec files: a changed field changes its line and nothing
else; comments, key order, quotes and flow lists stay; new files are block style
in the contract's order; hostile text is refused on this path as on every other."""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from spec_texts import COMMENTED

from core.errors import SpecFileError
from core.spec.canonical import KEY_ORDER
from core.spec.files import MAX_SPEC_DEPTH, MAX_SPEC_VALUES, dump_yaml, load_text
from core.spec.order import insertion_points, merged_order
from core.spec.roundtrip import same
from core.spec.yaml_io import SpecText, json_text


def diff(before: str, after: str) -> tuple[list[str], list[str]]:
    """The lines taken out and the lines put in."""
    lines = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    return [x[2:] for x in lines if x.startswith("- ")], [x[2:] for x in lines if x.startswith("+ ")]


def edited(edit: Callable[[dict[str, Any]], object], text: str = COMMENTED) -> tuple[dict[str, Any], str]:
    source = SpecText.parse(text)
    data = source.data
    edit(data)
    out = source.render(data)
    assert same(load_text(out), data)
    return data, out


def at(line: str, comment: str, column: int = 32) -> str:
    """``line`` with ``comment`` at ``column``: an end-of-line comment keeps its column while there is room."""
    return f"{line.ljust(column - 1)} {comment}"


G = "gapPolicy: {}"
GAP = "# no run at 02:30 on the spring day"
ARGV = '  argv: ["/bin/echo", "operating summary for {period}"{}]'


@pytest.mark.parametrize(
    ("edit", "removed", "added"),
    [
        pytest.param(lambda d: d.update(title="Ops summary"),
                     ['title: "Operating summary"      # shown in lists'],
                     [at('title: "Ops summary"', "# shown in lists")], id="quoted_title_keeps_quotes_and_comment"),
        pytest.param(lambda d: d.update(gapPolicy="SHIFT_FORWARD"), [at(G.format("SKIP"), GAP)],
                     [at(G.format("SHIFT_FORWARD"), GAP)], id="gap_policy"),
        pytest.param(lambda d: d.update(title="A much longer operating summary"),
                     ['title: "Operating summary"      # shown in lists'],
                     ['title: "A much longer operating summary" # shown in lists'], id="comment_after_a_longer_value"),
        pytest.param(lambda d: d.update(rule="FREQ=DAILY;BYHOUR=3;BYMINUTE=30"),
                     ["rule: FREQ=DAILY;BYHOUR=2;BYMINUTE=30   # 02:30 every day"],
                     ["rule: FREQ=DAILY;BYHOUR=3;BYMINUTE=30   # 02:30 every day"], id="rule"),
        pytest.param(lambda d: d.update(start="2026-02-01T09:00:00"),
                     ["start: 2026-01-01T00:00:00     # local wall time"],
                     ["start: 2026-02-01T09:00:00     # local wall time"], id="plain_date_stays_plain"),
        pytest.param(lambda d: d.update(revision=2), ["revision: 1"], ["revision: 2"], id="integer"),
        pytest.param(lambda d: d.update(title="yes"), ['title: "Operating summary"      # shown in lists'],
                     [at('title: "yes"', "# shown in lists")], id="text_that_looks_like_a_boolean"),
        pytest.param(lambda d: d["task"].update(timeout="PT5M"), ["  timeout: PT1M   # it is quick"],
                     ["  timeout: PT5M   # it is quick"], id="in_the_task"),
        pytest.param(lambda d: d["task"]["argv"].append("--verbose"), [ARGV.replace("{}", "")],
                     [ARGV.replace("{}", ', "--verbose"')], id="flow_list_grows_alike"),
        pytest.param(lambda d: d["task"]["argv"].__setitem__(0, "/bin/printf"), [ARGV.replace("{}", "")],
                     [ARGV.replace("{}", "").replace("echo", "printf")], id="flow_list_item"),
        pytest.param(lambda d: d.update(exclude=["2026-12-25"]), ["exclude: ['2026-12-25', 2026-07-04]"],
                     ["exclude: ['2026-12-25']"], id="flow_list_shrinks"),
        pytest.param(lambda d: d.update(exclude=[]), ["exclude: ['2026-12-25', 2026-07-04]"], ["exclude: []"],
                     id="flow_list_empties"),
        pytest.param(lambda d: d["retry"].update(maxBackoff="PT5M"),
                     ["retry: {maxAttempts: 3, initialBackoff: PT30S}"],
                     ["retry: {maxAttempts: 3, initialBackoff: PT30S, maxBackoff: PT5M}"], id="flow_mapping_grows"),
        pytest.param(lambda d: d["retry"].pop("maxAttempts"), ["retry: {maxAttempts: 3, initialBackoff: PT30S}"],
                     ["retry: {initialBackoff: PT30S}"], id="flow_mapping_shrinks"),
        pytest.param(lambda d: d["task"].update(env={"LANG": "C"}), ["  env: {}"], ["  env: {LANG: C}"],
                     id="empty_mapping_fills"),
        pytest.param(lambda d: d.update(tzdbVersion="2026a"), [], ["tzdbVersion: 2026a"], id="added_key"),
        pytest.param(lambda d: d["task"].update(cwd="/srv/reports"), [], ["  cwd: /srv/reports"], id="added_in_task"),
        pytest.param(lambda d: d.pop("maxCatchUp"), ["# how many missed runs to make up", "maxCatchUp: 1"], [],
                     id="removed_key_goes_with_its_comment"),
        pytest.param(lambda d: d.pop("scheduleId"), ["scheduleId: daily-ops-summary   # the id the ledger knows"], [],
                     id="removed_key_with_its_line_comment"),
    ],
)  # fmt: skip
def test_an_edit_changes_its_lines_only(
    edit: Callable[[dict[str, Any]], object], removed: list[str], added: list[str]
) -> None:
    _data, out = edited(edit)
    assert diff(COMMENTED, out) == (removed, added)


def test_added_keys_go_where_the_contract_orders_them() -> None:
    data, out = edited(lambda d: d.update(tzdbVersion="2026a", end="2027-01-01T00:00:00", jitter="PT0S", horizon="P7D"))
    keys = [line.split(":")[0] for line in out.splitlines() if line and line[0].isalpha()]
    assert keys == [k for k in KEY_ORDER if k in data]
    assert "tzdbVersion: 2026a\n" in out and "end: 2027-01-01T00:00:00\n" in out


def test_a_removed_task_goes_with_its_comments_and_the_rest_stays() -> None:
    _data, out = edited(lambda d: d.pop("task"))
    removed, added = diff(COMMENTED, out)
    assert added == [] and removed[0] == "task:" and len(removed) == 6
    assert out.endswith("# end of file\n")


def test_a_policy_removed_and_another_changed_at_once() -> None:
    _data, out = edited(lambda d: (d.update(misfirePolicy="SKIP"), d.pop("maxCatchUp")))
    assert diff(COMMENTED, out) == (
        ["misfirePolicy: CATCH_UP_BOUNDED", "# how many missed runs to make up", "maxCatchUp: 1"],
        ["misfirePolicy: SKIP"],
    )
    assert "# Catch up once after an outage\nmisfirePolicy: SKIP\n" in out


def test_an_unchanged_mapping_gives_the_text_back() -> None:
    source = SpecText.parse(COMMENTED)
    assert source.render(source.data) == COMMENTED


BLOCK_LISTS = """\
schema: scheduleSpec.v1
exclude:
    - 2026-12-25   # Christmas
    - 2026-07-04
task:
    argv:
        - /bin/echo
        - "hello"
"""


@pytest.mark.parametrize(
    ("edit", "removed", "added"),
    [
        pytest.param(lambda d: d["exclude"].append("2026-01-01"), [], ["    - 2026-01-01"],
                     id="item_added_like_the_others"),
        pytest.param(lambda d: d["exclude"].pop(0), ["    - 2026-12-25   # Christmas"], [], id="item_removed"),
        pytest.param(lambda d: d["exclude"].__setitem__(1, "2026-07-03"), ["    - 2026-07-04"], ["    - 2026-07-03"],
                     id="item_changed"),
        pytest.param(lambda d: d["task"]["argv"].__setitem__(1, "bye"), ['        - "hello"'], ['        - "bye"'],
                     id="quoted_item_stays_quoted"),
        pytest.param(lambda d: d["task"].update(timeout="PT1M"), [], ["    timeout: PT1M"], id="four_space_indent"),
        pytest.param(lambda d: d.update(exclude=[]),
                     ["exclude:", "    - 2026-12-25   # Christmas", "    - 2026-07-04"], ["exclude: []"],
                     id="block_list_empties"),
    ],
)  # fmt: skip
def test_block_lists_are_edited_item_by_item(
    edit: Callable[[dict[str, Any]], object], removed: list[str], added: list[str]
) -> None:
    _data, out = edited(edit, BLOCK_LISTS)
    assert diff(BLOCK_LISTS, out) == (removed, added)


def test_a_new_mapping_is_written_in_block_style_in_the_files_indent() -> None:
    _data, out = edited(lambda d: d.update(retry={"maxBackoff": "PT5M", "maxAttempts": 2}), BLOCK_LISTS)
    assert "retry:\n    maxAttempts: 2\n    maxBackoff: PT5M\ntask:\n" in out


def test_windows_line_ends_stay() -> None:
    text = COMMENTED.replace("\n", "\r\n")
    _data, out = edited(lambda d: (d.update(title="Ops"), d["task"].update(cwd="/srv")), text)
    assert out.count("\r\n") == out.count("\n") == text.count("\n") + 1
    assert at('title: "Ops"', "# shown in lists") + "\r\n" in out and "  cwd: /srv\r\n" in out


def test_a_file_without_a_final_line_break() -> None:
    text = "schema: scheduleSpec.v1\ntitle: x"
    _data, out = edited(lambda d: d.update(title="y", revision=1), text)
    assert out == "schema: scheduleSpec.v1\nrevision: 1\ntitle: y"


def test_unchanged_dates_keep_their_text_and_stay_text() -> None:
    text = "start: 2026-01-01 00:00:00\nend: '2026-12-31'\ncutoverAt: 2026-11-01T06:00:00Z\ntitle: a\n"
    source = SpecText.parse(text)
    assert source.data["start"] == "2026-01-01 00:00:00" and source.data["cutoverAt"] == "2026-11-01T06:00:00Z"
    _data, out = edited(lambda d: d.update(title="b", end="2027-06-30"), text)
    assert diff(text, out) == (["end: '2026-12-31'", "title: a"], ["end: '2027-06-30'", "title: b"])


def test_a_file_written_as_one_flow_line_is_saved_in_block_style() -> None:
    # What the old writer produced for a schedule without a task.
    text = "# mine\n{schema: scheduleSpec.v1, scheduleId: a, revision: 1, timeZone: UTC}\n"
    _data, out = edited(lambda d: d.update(revision=2), text)
    assert out == "# mine\nschema: scheduleSpec.v1\nscheduleId: a\nrevision: 2\ntimeZone: UTC\n"


def test_nulls_and_numbers_keep_their_spelling() -> None:
    text = (
        "schema: scheduleSpec.v1\nend: ~\nhorizon:\ncutoverAt: Null\nrevision: +5\njitter: 1.0e+3\n"
        "x: 5.26107766905897e+16\ny: [~, 0x1F, -.Inf]\ntitle: a\n"
    )
    _data, out = edited(lambda d: d.update(title="b"), text)
    assert diff(text, out) == (["title: a"], ["title: b"])


def test_a_new_null_is_written_null() -> None:
    _data, out = edited(lambda d: d.update(end=None))
    assert "\nend: null\n" in out


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("# mine\n---\nschema: scheduleSpec.v1\ntitle: a\n", id="comment_above_document_start"),
        pytest.param("%YAML 1.1\n---\n# mine\nschema: scheduleSpec.v1\ntitle: a\n", id="directive"),
    ],
)
def test_the_document_start_stays(text: str) -> None:
    _data, out = edited(lambda d: d.update(title="b"), text)
    assert diff(text, out) == (["title: a"], ["title: b"])


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("schema:   scheduleSpec.v1\ntitle:    a\nrevision: 1\n", id="spaces_after_a_colon"),
        pytest.param("schema: scheduleSpec.v1\nexclude: [2026-12-25,\n  2026-07-04]\ntitle: a\n",
                     id="flow_list_over_lines"),
        pytest.param("schema: scheduleSpec.v1   \ntitle: a\n...\n", id="trailing_spaces_and_document_end"),
        pytest.param("schema: scheduleSpec.v1\ntitle: 'a\n\n    b'\nrevision: 1\n", id="quoted_text_over_lines"),
        pytest.param("--- # mine\nschema: scheduleSpec.v1\ntitle: a\n", id="comment_on_the_start_line"),
        pytest.param("schema: scheduleSpec.v1\nretry:\n    maxAttempts: 2\ntask:\n  argv:\n  - x\ntitle: a\n",
                     id="mixed_indentation"),
        pytest.param('schema: scheduleSpec.v1\ntitle: a\nbusinessPeriod: "\\U0001F600 \\x41"\n', id="escapes"),
    ],
)  # fmt: skip
def test_layouts_written_otherwise_still_save_exactly_the_data(text: str) -> None:
    # ruamel.yaml writes these its own way (docs/decisions.md lists them); what the file holds is exact.
    data, out = edited(lambda d: d.update(title="b", revision=2), text)
    assert load_text(out) == data


def test_a_round_trip_that_does_not_read_back_is_written_fresh(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("core.spec.yaml_io.rewrite", lambda text, old, new: text)  # the old data: wrong
    source = SpecText.parse(COMMENTED, "mine.yaml")
    data = source.data
    data["revision"] = 2
    out = source.render(data)
    assert same(load_text(out), data) and out.startswith("# Operating summary")
    assert "mine.yaml: written fresh in block style: the round trip did not read back" in caplog.text


def test_anchors_survive_an_edit_elsewhere_and_an_alias_is_edited_where_it_is() -> None:
    text = "schema: scheduleSpec.v1\ntitle: x\ntask:\n  argv: &cmd [/bin/check, a]\n  verify: *cmd\n  timeout: PT1M\n"
    _data, out = edited(lambda d: d.update(title="y"), text)
    assert diff(text, out) == (["title: x"], ["title: y"])
    _data, out = edited(lambda d: d["task"].update(verify=["/bin/probe"]), text)
    assert diff(text, out) == (["  verify: *cmd"], ["  verify: [/bin/probe]"])
    # The anchored value changes but its alias must not: the alias now holds the old value, written out.
    _data, out = edited(lambda d: d["task"].update(argv=["/bin/other"]), text)
    assert load_text(out)["task"] == {"argv": ["/bin/other"], "verify": ["/bin/check", "a"], "timeout": "PT1M"}


def test_a_comment_after_an_alias_moves_below_it_and_the_data_is_right() -> None:
    # ruamel.yaml writes a comment after an alias on the line below it; what the file holds stays exact.
    text = "schema: scheduleSpec.v1\ntitle: x\ntask:\n  argv: &cmd [/bin/check, a]\n  verify: *cmd  # same\n"
    data, out = edited(lambda d: d.update(title="y"), text)
    assert "title: y\n" in out and "# same" in out and load_text(out) == data


def test_insertion_points_follow_the_contract() -> None:
    assert insertion_points(["schema", "title", "task"], ["revision", "zzz", "kind", "scheduleId"], ()) == [
        (0, ["scheduleId", "revision"]),
        (1, ["kind"]),
        (2, ["zzz"]),
    ]
    # A file in its own order keeps it; a new key goes after the last one the contract puts before it.
    assert insertion_points(["task", "schema"], ["title"], ()) == [(1, ["title"])]
    assert insertion_points(["timeout"], ["argv"], ("task",)) == [(None, ["argv"])]


# --- new files ------------------------------------------------------------------------------------

NO_TASK = {
    "task": None,
    "gapPolicy": "SKIP",
    "schema": "scheduleSpec.v1",
    "timeZone": "UTC",
    "scheduleId": "a",
    "revision": 1,
    "rule": "FREQ=DAILY",
    "start": "2026-01-01T00:00:00",
}


def test_a_new_file_without_a_task_is_block_style_in_contract_order() -> None:
    data = {k: v for k, v in NO_TASK.items() if v is not None}
    text = dump_yaml(data)
    assert not text.lstrip().startswith("{")
    assert [line.split(":")[0] for line in text.splitlines()] == [k for k in KEY_ORDER if k in data]
    assert "start: 2026-01-01T00:00:00\n" in text
    assert load_text(text) == data


def test_a_new_file_nests_in_block_style_and_keeps_short_lists_on_one_line() -> None:
    data = {
        "task": {"effect": "none", "env": {}, "argv": ["/bin/echo", "hi"]},
        "retry": {"maxBackoff": "PT5M", "maxAttempts": 2},
        "schema": "scheduleSpec.v1",
        "exclude": [f"2026-12-{d:02}" for d in range(1, 31)],
    }
    text = dump_yaml(data)
    assert text.startswith("schema: scheduleSpec.v1\nexclude:\n  - 2026-12-01\n")
    assert (
        "retry:\n  maxAttempts: 2\n  maxBackoff: PT5M\ntask:\n  argv: [/bin/echo, hi]\n  env: {}\n  effect: none\n"
        in text
    )
    assert load_text(text) == data


def test_dump_yaml_writes_the_contracts_order_in_block_style() -> None:
    assert dump_yaml({"title": "t", "schema": "scheduleSpec.v1"}) == "schema: scheduleSpec.v1\ntitle: t\n"
    assert (
        dump_yaml({"title": "t", "schema": "scheduleSpec.v1"}, keep_order=True) == "title: t\nschema: scheduleSpec.v1\n"
    )


# --- JSON -----------------------------------------------------------------------------------------


def test_json_keeps_its_order_and_layout() -> None:
    data = {"title": "t", "schema": "scheduleSpec.v1", "task": {"argv": ["x"]}}
    text = json.dumps(data, indent=4) + "\n"
    source = SpecText.parse(text, "spec.json")
    assert source.is_json and source.data == data
    changed = {**data, "title": "u", "revision": 2}
    out = source.render_json(changed)
    assert json.loads(out) == changed
    assert list(json.loads(out)) == ["title", "schema", "revision", "task"]
    assert diff(text, out) == (['    "title": "t",'], ['    "title": "u",', '    "revision": 2,'])
    assert json_text({"a": 1}, '{"b": 2}') == '{"a": 1}'


# --- hostile text -----------------------------------------------------------------------------------


def _laughs(levels: int) -> str:
    lines = ["schema: scheduleSpec.v1", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join([*lines, f"exclude: *a{levels - 1}"]) + "\n"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param(_laughs(9), f"more than {MAX_SPEC_VALUES:,} values once its aliases", id="billion_laughs"),
        pytest.param("a: &x [1, *x]\n", "an alias refers to the value that holds it", id="alias_to_itself"),
        pytest.param("a: " + "[" * 500 + "]" * 500 + "\n", f"nested more than {MAX_SPEC_DEPTH} levels", id="deep"),
        pytest.param("a: !!python/object/apply:os.system [echo hi]\n", "could not determine a constructor",
                     id="python_object"),
        pytest.param("a: !custom 1\n", "could not determine a constructor", id="unknown_tag"),
        pytest.param("a: 1\na: 2\n", "appears twice", id="duplicate_key"),
        pytest.param("a: 1\n---\nb: 2\n", "found another document", id="two_documents"),
    ],
)  # fmt: skip
def test_hostile_text_is_refused_on_the_round_trip_path(text: str, fragment: str) -> None:
    began = time.monotonic()
    with pytest.raises(SpecFileError, match=r"not valid YAML|values|alias") as info:
        SpecText.parse(text, "evil.yaml")
    assert fragment in str(info.value) and str(info.value).startswith("evil.yaml: ")
    with pytest.raises(SpecFileError):
        load_text(text, "evil.yaml")
    assert time.monotonic() - began < 5  # refused before anything walks the expansion


def test_aliases_within_the_bound_still_load() -> None:
    data = load_text(_laughs(3))
    assert len(data["exclude"]) == 10 and len(data["exclude"][0]) == 10


# --- the property ------------------------------------------------------------------------------------

# Within the BMP: PyYAML, which writes these files, escapes a character past U+FFFF in double quotes
# (`\\U0001F600`) where ruamel.yaml writes the character itself, the same text.
_TEXT = st.text(
    st.characters(max_codepoint=0xFFFF, blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12
)
_SCALAR = st.one_of(
    _TEXT,
    st.sampled_from(["SKIP", "yes", "null", "1:30", "007", "2026-01-01T00:00:00", "# no", "a: b", "-x", "'q'", ""]),
    st.integers(-5, 1000),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
_KEYS = [k for k in KEY_ORDER if k not in ("task", "retry", "exclude")]
_VALUE = st.one_of(_SCALAR, st.lists(_SCALAR, max_size=4))
_TASK = st.fixed_dictionaries(
    {"argv": st.lists(_TEXT, min_size=1, max_size=4)},
    optional={"timeout": _SCALAR, "env": st.dictionaries(st.sampled_from(["A", "B", "LANG"]), _TEXT, max_size=2)},
)
_MAPPINGS = st.fixed_dictionaries(
    {"schema": st.just("scheduleSpec.v1")},
    optional={
        **{k: _VALUE for k in _KEYS[1:]},
        "exclude": st.lists(_SCALAR, max_size=4),
        "retry": st.dictionaries(st.sampled_from(["maxAttempts", "multiplier"]), _SCALAR, max_size=2),
        "task": _TASK,
    },
)


class _FileDumper(yaml.SafeDumper):
    """How the property's files are written: text with line breaks in double quotes on one line
    (ruamel.yaml indents the continuation lines of a quoted text its own way)."""


_FileDumper.add_representer(
    str,
    lambda dumper, text: dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style='"' if any(c in text for c in "\r\n\x85\u2028\u2029") else None
    ),
)


def _dump(value: Any, **kwargs: Any) -> str:
    return str(yaml.dump(value, Dumper=_FileDumper, allow_unicode=True, width=1 << 16, **kwargs))


@st.composite
def _commented(draw: st.DrawFn) -> tuple[str, dict[str, Any], dict[str, str]]:
    """A commented text of a random mapping, with each key's own lines (to check they stay)."""
    data = draw(_MAPPINGS)
    order = draw(st.permutations(list(data)))
    data = {k: data[k] for k in order}
    chunks = ["# a header\n"]
    own: dict[str, str] = {}
    indent = draw(st.sampled_from([2, 4]))  # one indentation a file: the one ruamel.yaml is set to
    for key in data:
        value = data[key]
        if isinstance(value, dict | list) and draw(st.booleans()):  # flow: `key: [a, b]`
            body = f"{key}: {_dump(value, default_flow_style=True).strip()}\n"
        else:
            body = _dump({key: value}, default_flow_style=False, indent=indent)
        first_line_is_whole = body.count("\n") == 1 or body.partition("\n")[0].endswith(":")
        if first_line_is_whole and draw(st.booleans()):
            first, _, rest = body.partition("\n")
            body = f"{first}  # about {key}\n{rest}"
        if draw(st.booleans()):
            chunks.append(f"\n# before {key}\n")
        own[key] = body
        chunks.append(body)
    return "".join(chunks), data, own


@st.composite
def _edits(draw: st.DrawFn, data: dict[str, Any]) -> dict[str, Any]:
    new = dict(data)
    for key in draw(st.lists(st.sampled_from(list(data)), unique=True, max_size=3)):
        if key != "schema" and draw(st.booleans()):
            del new[key]
        else:
            nested = key in ("task", "retry", "exclude")
            new[key] = draw(_MAPPINGS.map(lambda m, k=key: m.get(k)) if nested else _VALUE)
            if new[key] is None and nested:
                del new[key]
    for key in draw(st.lists(st.sampled_from(_KEYS), unique=True, max_size=2)):
        if key not in new:
            new[key] = draw(_VALUE)
    if "task" in new and draw(st.booleans()):
        task = dict(new["task"])
        task["argv"] = [*task["argv"], draw(_TEXT)]
        new["task"] = task
    return new


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_random_edits_of_a_commented_file(data: st.DataObject) -> None:
    text, old, own = data.draw(_commented())
    assume(same(load_text(text), old))  # PyYAML's own writer folds some line breaks (\x85) away
    new = data.draw(_edits(old))
    out = SpecText.parse(text).render(new)
    # Reading the result gives exactly the new mapping...
    assert same(load_text(out), new)
    # ...and every key that did not change keeps its lines, comments included, in the same order.
    untouched = [k for k in old if k in new and same(old[k], new[k])]
    at = 0
    for key in untouched:
        found = out.find(own[key], at)
        assert found >= 0, (key, own[key], out)
        at = found + len(own[key])
    assert out.startswith("# a header\n")


def test_merged_order_keeps_the_old_order_and_places_new_keys() -> None:
    old = {"task": {"timeout": "PT1M", "argv": ["x"]}, "schema": "scheduleSpec.v1"}
    new = {"schema": "scheduleSpec.v1", "task": {"argv": ["x"], "timeout": "PT1M", "kind": "command"}, "title": "t"}
    out = merged_order(old, new)
    assert list(out) == ["task", "schema", "title"] and list(out["task"]) == ["kind", "timeout", "argv"]
