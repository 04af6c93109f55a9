"""The schedule being edited: a spec mapping with undo, validation and a file.

Every widget of the designer reads and writes the same :class:`SpecDocument`.
The mapping holds exactly what the YAML file would hold (camelCase keys,
nested ``task`` and ``retry`` mappings, times as text), so saving writes what
the person sees and loading shows what the file says. Every change goes
through the undo stack; validation is the core's own ``parse_spec``.

Beside the mapping the document keeps the text it was opened from
(:class:`core.spec.yaml_io.SpecText`): saving writes the changes into that text
with ruamel.yaml's round-trip mode, so the person's comments, key order and
quoting stay, and a one-field edit is a one-line change. A document that was
never saved is written fresh in block style with the contract's key order. A
``.json`` file is saved as JSON.
"""

from __future__ import annotations

import copy
import os
import stat
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.errors import Problem, SpecError, SpecFileError, UserError
from core.spec.files import dump_yaml, read_spec_text
from core.spec.model import ScheduleSpec
from core.spec.order import merged_order
from core.spec.validation import parse_spec
from core.spec.yaml_io import SpecText, json_text
from scheduler_gui.undo import Command, UndoStack

_MISSING = object()


def get_path(data: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` (``task.argv``), or None when absent."""
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set (or, for None, remove) the value at a dotted path; empty parents are dropped."""
    parts = path.split(".")
    node = data
    trail: list[tuple[dict[str, Any], str]] = []
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            if value is None:
                return
            child = {}
            node[part] = child
        trail.append((node, part))
        node = child
    if value is None:
        node.pop(parts[-1], None)
        for parent, key in reversed(trail):
            if parent[key]:
                break
            del parent[key]
    else:
        node[parts[-1]] = copy.deepcopy(value)


class _Edit:
    """Set several dotted paths at once; undo restores what was there."""

    def __init__(self, doc: SpecDocument, changes: Mapping[str, Any], label: str, merge_key: str | None) -> None:
        self.text = label
        self.merge_key = merge_key
        # Weakly: the document owns its history, and the history need not keep the document alive.
        self._doc_ref = weakref.ref(doc)
        self._after = {k: copy.deepcopy(v) for k, v in changes.items()}
        self._before = {k: copy.deepcopy(get_path(doc.data, k)) for k in changes}
        self._pushed = False

    def merge(self, later: Command) -> bool:
        if not isinstance(later, _Edit):
            return False
        self._after.update(later._after)
        return True

    def redo(self) -> None:
        doc = self._doc_ref()
        if doc is None:
            return
        # The first redo is the push itself; a later one steps through the history, like undo: text
        # half-typed in a field belongs to neither state, so every field shows the document again.
        if self._pushed:
            doc.clear_field_problems()
        self._pushed = True
        doc._apply(self._after)

    def undo(self) -> None:
        doc = self._doc_ref()
        if doc is None:
            return
        doc.clear_field_problems()
        doc._apply(self._before)


class SpecDocument(QObject):
    """One spec being edited. Signals fire after every change, undo and redo included."""

    changed = Signal()
    """The mapping changed (edit, undo, redo, load)."""
    validityChanged = Signal(bool)
    pathChanged = Signal(str)
    dirtyChanged = Signal(bool)
    problemsChanged = Signal()
    """The problems changed: the spec's own, or a field's text that is not yet a value (see :meth:`blocking`)."""

    def __init__(self, data: Mapping[str, Any] | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.undo_stack = UndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self._data: dict[str, Any] = copy.deepcopy(dict(data)) if data else {}
        self._path: Path | None = None
        #: The text the document was opened from (or last saved as); None for a new document.
        self._source: SpecText | None = None
        self._spec: ScheduleSpec | None = None
        self._problems: list[Problem] = []
        #: Text in a field that is not (yet) a value, by field: it never reached the mapping.
        self._field_problems: dict[str, Problem] = {}
        #: The fields among them whose text differs from the mapping: typed work that would be lost.
        self._unfinished: set[str] = set()
        self._validate()

    def _on_clean_changed(self, clean: bool) -> None:
        self.dirtyChanged.emit(not clean)

    # --- reading -------------------------------------------------------------
    @property
    def data(self) -> dict[str, Any]:
        """The current mapping. Read it; change it only through :meth:`set_value`."""
        return self._data

    def value(self, path: str, default: Any = None) -> Any:
        found = get_path(self._data, path)
        return default if found is None else found

    @property
    def spec(self) -> ScheduleSpec | None:
        """The validated spec, or None while there are problems."""
        return self._spec

    @property
    def valid(self) -> bool:
        return self._spec is not None

    @property
    def problems(self) -> list[Problem]:
        return list(self._problems)

    @property
    def field_problems(self) -> list[Problem]:
        """Fields whose text is not a value yet, in the order they went wrong."""
        return list(self._field_problems.values())

    @property
    def unfinished_fields(self) -> list[Problem]:
        """The field problems of text typed but not in the mapping (closing would lose it)."""
        return [p for f, p in self._field_problems.items() if f in self._unfinished]

    def set_field_problem(
        self, field: str, message: str | None, *, key: str | None = None, unfinished: bool = True
    ) -> None:
        """Say that the field ``field`` holds text that is not a value (``message`` says why), or with None
        that it no longer does. While any field does, the document cannot be saved or published.

        ``key`` is the spec key the message names (default: ``field``). Nothing in the mapping changes.
        ``unfinished`` is false when the field shows the mapping's own value and only that value is refused
        (an id another file already has): nothing typed would be lost by closing.
        """
        old = self._field_problems.get(field)
        was_unfinished = field in self._unfinished
        if message:
            new = Problem(key if key is not None else field, message)
            if old == new and was_unfinished == unfinished:
                return
            self._field_problems[field] = new
            if unfinished:
                self._unfinished.add(field)
            else:
                self._unfinished.discard(field)
        else:
            if old is None:
                return
            del self._field_problems[field]
            self._unfinished.discard(field)
        self.problemsChanged.emit()

    def clear_field_problems(self) -> None:
        """Forget every field's unreadable text (the fields were rebuilt or reset; undo and redo do it too:
        a field whose problem is forgotten shows the document's value again)."""
        if self._field_problems:
            self._field_problems.clear()
            self._unfinished.clear()
            self.problemsChanged.emit()

    @property
    def can_save(self) -> bool:
        """True when the spec is valid and no field holds text that is not a value."""
        return self._spec is not None and not self._field_problems

    def blocking(self) -> Problem | None:
        """Why the document cannot be saved now, or None when it can: a field's unreadable text first
        (what the person is typing), else the spec's first problem."""
        if self._field_problems:
            return next(iter(self._field_problems.values()))
        if self._spec is None:
            return self._problems[0] if self._problems else Problem("", "the schedule is not complete yet")
        return None

    def problems_for(self, path: str) -> list[str]:
        """Messages for ``path`` and anything under it (``task`` covers ``task.argv``)."""
        return [p.message for p in self._problems if p.key == path or p.key.startswith(path + ".")]

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def dirty(self) -> bool:
        return not self.undo_stack.isClean()

    @property
    def display_name(self) -> str:
        if self._path is not None:
            return self._path.name
        return str(self._data.get("scheduleId") or "untitled") + ".yaml"

    # --- editing -------------------------------------------------------------
    def set_value(self, path: str, value: Any, *, label: str | None = None, merge: bool = False) -> None:
        """Set one dotted path (None removes it) as one undo step.

        ``merge`` folds consecutive edits of the same path (typing) into one step.
        """
        self.set_values({path: value}, label=label or f"Edit {path}", merge_key=path if merge else None)

    def set_values(self, changes: Mapping[str, Any], *, label: str, merge_key: str | None = None) -> None:
        """Set several paths as one undo step. Does nothing when nothing would change."""
        if all(get_path(self._data, k) == (None if v is None else v) for k, v in changes.items()):
            return
        self.undo_stack.push(_Edit(self, changes, label, merge_key))

    def _apply(self, changes: Mapping[str, Any]) -> None:
        for path, value in changes.items():
            _set_path(self._data, path, value)
        self._validate()
        self.changed.emit()

    def _validate(self) -> None:
        was = self._spec is not None
        try:
            self._spec = parse_spec(self._data)
            self._problems = []
        except SpecError as exc:
            self._spec = None
            self._problems = list(exc.problems)
        except UserError as exc:
            self._spec = None
            self._problems = [Problem("", str(exc))]
        if was != (self._spec is not None):
            self.validityChanged.emit(self._spec is not None)
        self.problemsChanged.emit()

    # --- files ---------------------------------------------------------------
    def replace(self, data: Mapping[str, Any], path: Path | None = None, *, source: SpecText | None = None) -> None:
        """Load new content as a fresh document: clears undo history, marks clean.

        ``source`` is the text ``data`` was read from; saving writes the changes into it.
        """
        self._data = copy.deepcopy(dict(data))
        self._path = path
        self._source = source
        self._field_problems.clear()
        self._unfinished.clear()
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self._validate()
        self.pathChanged.emit(str(path) if path else "")
        self.changed.emit()
        self.dirtyChanged.emit(False)

    @classmethod
    def read_source(cls, path: str | Path) -> SpecText:
        """The text of a spec file and what it holds, or :class:`SpecFileError` saying why it cannot be read."""
        source = SpecText.parse(read_spec_text(path), str(path))
        if not isinstance(source.data, dict):
            raise SpecFileError(f"{path}: a spec is a mapping of keys to values")
        return source

    @classmethod
    def read_mapping(cls, path: str | Path) -> dict[str, Any]:
        """The mapping in a spec file, or :class:`SpecFileError` saying why it cannot be read."""
        data = cls.read_source(path).data
        assert isinstance(data, dict)
        return data

    def load(self, path: str | Path) -> None:
        """Open a spec file. Invalid specs open (to be fixed); unreadable files raise."""
        p = Path(path)
        source = self.read_source(p)
        self.replace(source.data, p.resolve(), source=source)

    def to_yaml(self) -> str:
        """The YAML text of the document: the opened file's text with the changes written into it,
        or for a new document (or one opened from JSON) a fresh file."""
        if self._source is not None:
            return self._source.render(self._data)
        return dump_yaml(self._data)

    def to_text(self, path: Path) -> str:
        """What saving to ``path`` writes: JSON for a ``.json`` file, else :meth:`to_yaml`."""
        if path.suffix.lower() == ".json":
            if self._source is not None:
                return self._source.render_json(self._data)
            return json_text(merged_order(None, self._data))
        return self.to_yaml()

    def save(self, path: str | Path | None = None) -> Path:
        """Write the document to ``path`` (or the current file) atomically and mark clean.

        A file whose permissions say read-only is not written over (the atomic rename would
        otherwise replace it); a file written over keeps its permissions.
        """
        target = Path(path) if path is not None else self._path
        if target is None:
            raise SpecFileError("choose where to save this schedule")
        target = target.resolve()  # through a link, to the file it points at
        mode = _existing_mode(target)
        if mode is not None and not (mode & 0o222 and os.access(target, os.W_OK)):
            raise SpecFileError(f"{target}: is read-only; nothing was saved (Save As writes a copy)")
        text = self.to_text(target)
        tmp = target.with_name(f".{target.name}.saving")
        try:
            # newline="": the text carries the file's own line ends (\r\n stays \r\n).
            with tmp.open("w", encoding="utf-8", newline="") as out:
                out.write(text)
            if mode is not None:
                tmp.chmod(stat.S_IMODE(mode))
            tmp.replace(target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise SpecFileError(f"{target}: cannot be saved ({exc.strerror})") from None
        changed_path = target != self._path
        self._path = target
        # What was written is the text the next save edits.
        self._source = SpecText.parse(text, str(target))
        self.undo_stack.setClean()
        if changed_path:
            self.pathChanged.emit(str(self._path))
        return self._path


def _existing_mode(path: Path) -> int | None:
    """The permission bits of the file at ``path``, None when there is none yet."""
    try:
        return path.stat().st_mode
    except OSError:
        return None
