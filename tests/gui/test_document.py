"""The edited spec: undo and redo, validation per key, saving and loading."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_support import DEMO

from core.errors import SpecFileError
from core.spec.files import load_spec, load_text
from scheduler_gui.workspace.document import SpecDocument, get_path


def test_loaded_demo_is_valid_and_clean(document: SpecDocument) -> None:
    assert document.valid
    assert not document.dirty
    assert document.spec is not None and document.spec.time_zone == "America/New_York"
    assert document.display_name == "daily-ops-summary.yaml"


def test_edit_undo_redo(document: SpecDocument, qtbot) -> None:
    with qtbot.waitSignal(document.changed):
        document.set_value("timeZone", "Europe/Paris")
    assert document.dirty and document.spec is not None and document.spec.time_zone == "Europe/Paris"
    document.undo_stack.undo()
    assert document.value("timeZone") == "America/New_York" and not document.dirty
    document.undo_stack.redo()
    assert document.value("timeZone") == "Europe/Paris"


def test_typing_merges_into_one_undo_step(document: SpecDocument) -> None:
    for text in ("O", "Op", "Ops"):
        document.set_value("title", text, merge=True)
    assert document.undo_stack.count() == 1
    document.undo_stack.undo()
    assert document.value("title") == "Operating summary"


def test_invalid_value_names_its_key_and_blocks(document: SpecDocument, qtbot) -> None:
    with qtbot.waitSignal(document.validityChanged) as blocker:
        document.set_value("timeZone", "EST")
    assert blocker.args == [False]
    assert not document.valid
    assert document.problems_for("timeZone")
    assert not document.problems_for("rule")


def test_a_field_problem_blocks_saving_without_touching_the_mapping(document: SpecDocument, qtbot) -> None:
    before = dict(document.data)
    with qtbot.waitSignal(document.problemsChanged):
        document.set_field_problem("times", "25:61 is not a time of day", key="rule")
    assert document.valid and not document.can_save
    assert str(document.blocking()) == "rule: 25:61 is not a time of day"
    assert document.data == before and document.undo_stack.count() == 0
    # A second field going wrong does not take the first one's place; the first fixed, the second shows.
    document.set_field_problem("start", "2027-02-30 is not a date")
    assert document.blocking() is not None and document.blocking().key == "rule"
    document.set_field_problem("times", None)
    assert str(document.blocking()) == "start: 2027-02-30 is not a date"
    document.set_field_problem("start", None)
    assert document.can_save and document.blocking() is None


def test_blocking_is_the_current_spec_problem(document: SpecDocument) -> None:
    document.set_value("timeZone", "EST")
    first = document.blocking()
    assert first is not None and first.key == "timeZone"
    document.set_value("timeZone", "America/New_York")
    document.set_value("rule", "FREQ=SOMETIMES")
    now = document.blocking()
    assert now is not None and now.key == "rule"


def test_loading_forgets_field_problems(document: SpecDocument, tmp_path: Path) -> None:
    document.set_field_problem("times", "not a time")
    target = tmp_path / "copy.yaml"
    document.save(target)
    document.load(target)
    assert document.can_save


def test_nested_paths_create_and_prune(document: SpecDocument) -> None:
    document.set_value("retry.maxAttempts", 5)
    assert get_path(document.data, "retry") == {"maxAttempts": 5}
    document.set_value("retry.maxAttempts", None)
    assert "retry" not in document.data
    assert document.spec is not None and document.spec.retry.max_attempts == 3


def test_no_op_edit_pushes_nothing(document: SpecDocument) -> None:
    document.set_value("timeZone", "America/New_York")
    assert document.undo_stack.count() == 0


def test_save_round_trips_through_core(document: SpecDocument, tmp_path: Path) -> None:
    document.set_value("title", "Renamed")
    target = document.save(tmp_path / "out.yaml")
    assert not document.dirty and document.path == target
    assert load_spec(target).title == "Renamed"
    again = SpecDocument()
    again.load(target)
    assert again.data == document.data


def test_unreadable_file_raises_and_keeps_document(document: SpecDocument, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"\x00\x01")
    with pytest.raises(SpecFileError, match="binary"):
        document.load(bad)
    assert document.value("scheduleId") == "daily-ops-summary"


def test_save_into_missing_folder_says_so(document: SpecDocument, tmp_path: Path) -> None:
    with pytest.raises(SpecFileError, match="cannot be saved"):
        document.save(tmp_path / "nope" / "x.yaml")
    assert document.path is not None and document.path.name == "daily-ops-summary.yaml"


def test_a_dropped_document_is_freed_at_once_not_by_the_cycle_collector(qtbot) -> None:
    """Its undo stack must not hold it in a cycle: tearing such a cycle down crashed the process."""
    import gc
    import weakref

    was = gc.isenabled()
    gc.disable()
    try:
        doc = SpecDocument({"schema": "scheduleSpec.v1", "title": "a"})
        for text in ("b", "c"):
            doc.set_value("title", text)
        doc.undo_stack.undo()
        gone = weakref.ref(doc)
        del doc
        assert gone() is None
    finally:
        if was:
            gc.enable()


def _commented_demo(tmp_path: Path) -> tuple[Path, str]:
    text = (DEMO / "daily-ops-summary.yaml").read_text(encoding="utf-8")
    text = text.replace("title: Operating summary\n", "title: Operating summary   # shown in lists\n# when\n")
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    return path, text


def test_save_as_of_an_opened_file_keeps_its_comments(tmp_path: Path) -> None:
    path, text = _commented_demo(tmp_path)
    doc = SpecDocument()
    doc.load(path)
    doc.set_value("title", "Ops", merge=True)
    copy = doc.save(tmp_path / "copy.yaml")
    # The comment keeps its column.
    titled = text.replace("title: Operating summary   #", "title: Ops                 #")
    assert copy.read_text(encoding="utf-8") == titled
    assert path.read_text(encoding="utf-8") == text
    # The next save edits what was written last.
    doc.set_value("revision", 2)
    doc.save()
    assert copy.read_text(encoding="utf-8") == titled.replace("revision: 1", "revision: 2")


def test_a_new_document_without_a_task_is_not_one_flow_line(tmp_path: Path) -> None:
    data = load_text((DEMO / "daily-ops-summary.yaml").read_text(encoding="utf-8"))
    del data["task"]
    doc = SpecDocument(dict(reversed(list(data.items()))))
    text = doc.save(tmp_path / "new.yaml").read_text(encoding="utf-8")
    assert text.startswith("schema: scheduleSpec.v1\nscheduleId: daily-ops-summary\n")
    assert "{" not in text.replace('"{nominal', "").replace("'{nominal", "")
    assert load_text(text) == data


def test_saving_keeps_the_files_permissions(tmp_path: Path) -> None:
    path, _text = _commented_demo(tmp_path)
    path.chmod(0o600)
    doc = SpecDocument()
    doc.load(path)
    doc.set_value("revision", 3)
    doc.save()
    assert path.stat().st_mode & 0o777 == 0o600 and load_spec(path).revision == 3


def test_a_file_of_endless_aliases_is_refused_and_changes_nothing(document: SpecDocument, tmp_path: Path) -> None:
    lines = ["schema: scheduleSpec.v1", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 6)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join([*lines, "exclude: *a5"]) + "\n", encoding="utf-8")
    with pytest.raises(SpecFileError, match=r"more than 100,000 values once its aliases"):
        document.load(bomb)
    assert document.value("scheduleId") == "daily-ops-summary" and not document.dirty


def test_runs_on_survives_an_edit_and_a_save(document: SpecDocument, tmp_path: Path) -> None:
    """The designer shows no runsOn yet; a file that has one keeps it, in the contract's place."""
    document.set_value("runsOn", {"host": "beta"})
    document.set_value("title", "Renamed")
    target = document.save(tmp_path / "out.yaml")
    assert load_spec(target).runs_on == {"host": "beta"}
    text = target.read_text()
    assert text.index("runsOn:") < text.index("task:")
    again = SpecDocument()
    again.load(target)
    assert again.value("runsOn") == {"host": "beta"}
