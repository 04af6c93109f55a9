"""Files for the main window: new, new from template, open, save, save as, the
recent files menu, the unsaved-changes guard and the autosave offered back.

New schedules get ids used neither in the workspace (the ids inside its files,
and their names) nor in the open ledger. Save As checks the id again: a copy
whose id another file or a published schedule already has is offered a fresh
id (it is a new schedule, revision 1), or not saved.

A new schedule starts in the workspace's zone; if nobody changed it, its first
save asks once whether it should run there (:mod:`scheduler_gui.workspace.zone`).

A mixin of :class:`~scheduler_gui.main_window.MainWindow`; it only touches the
window through the attributes and methods listed on the class.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox

from core.errors import UserError
from core.spec.files import load_text
from scheduler_gui.monitor.states import HubState
from scheduler_gui.workspace.document import SpecDocument
from scheduler_gui.workspace.folder import blank_spec, from_template, list_specs, read_entry, templates
from scheduler_gui.workspace.schedule_names import NamesInUse, check_id, id_format_problem
from scheduler_gui.workspace.zone import UntouchedZone, WorkspaceZone, keep_untouched_zone

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMenu, QWidget

    from scheduler_gui.context import AppContext
    from scheduler_gui.monitor.hub import MonitorHub
    from scheduler_gui.workspace.autosave import Autosaver
    from scheduler_gui.workspace.recent import RecentFiles

#: The file types Save As offers.
SPEC_FILTER = "Schedules (*.yaml *.yml)"


class FilesMixin:
    """File handling; the window provides what is declared here."""

    ctx: AppContext
    hub: MonitorHub
    document: SpecDocument | None
    recent: RecentFiles
    autosaver: Autosaver
    recent_menu: QMenu
    workspace_zone: WorkspaceZone

    if TYPE_CHECKING:

        def _set_document(self, doc: SpecDocument) -> None: ...
        def refresh_sidebar(self) -> None: ...
        def show_view(self, key: str) -> None: ...
        def say(self, text: str, timeout_ms: int = 0) -> None: ...
        def _update_title(self) -> None: ...
        def focus_zone(self) -> None: ...

    def _parent(self) -> QWidget:
        return self  # type: ignore[return-value]

    def maybe_save(self) -> bool:
        """The unsaved-changes guard: True when it is fine to go on (saved, discarded or clean)."""
        doc = self.document
        if doc is None or not (doc.dirty or doc.unfinished_fields):
            return True
        buttons = QMessageBox.StandardButton
        unfinished = doc.unfinished_fields
        if unfinished:
            # Text typed into a field that is not a value yet cannot be saved: say what it is, and offer
            # to go back to it (the default) or to let it go with every other unsaved change.
            answer = QMessageBox.question(
                self._parent(),
                "Unfinished field",
                f"{doc.display_name} has a field whose text is not a value yet, so it cannot be saved: "
                f"{unfinished[0]}. Discard it{' and the other unsaved changes' if doc.dirty else ''}?",
                buttons.Discard | buttons.Cancel,
                buttons.Cancel,
            )
            if answer == buttons.Discard:
                self.autosaver.clear()
                return True
            return False
        answer = QMessageBox.question(
            self._parent(),
            "Unsaved changes",
            f"{doc.display_name} has changes that are not saved. Save them first?",
            buttons.Save | buttons.Discard | buttons.Cancel,
            buttons.Save,
        )
        if answer == buttons.Save:
            return self.save()
        if answer == buttons.Discard:
            self.autosaver.clear()
            return True
        return False

    def new_document(self, data: dict[str, Any] | None = None) -> bool:
        """File ▸ New: a blank daily schedule (or ``data``), not yet saved anywhere."""
        if not self.maybe_save():
            return False
        zone = None
        if data is None:
            zone = self.workspace_zone.zone
            data = blank_spec(self.ctx.clock, self.ctx.workspace, zone, taken=self.names_in_use().taken())
        doc = SpecDocument(data)
        if zone is not None:
            UntouchedZone.attach(doc, zone)
        self._set_document(doc)
        return True

    def new_from_template(self, template: Path | None = None) -> bool:
        """File ▸ New from Template: a copy of a demo schedule under a fresh id."""
        if template is None:
            options = templates()
            labels = [f"{e.label} — {e.title}" if e.title else e.label for e in options]
            choice, ok = QInputDialog.getItem(self._parent(), "New from template", "Start from:", labels, 0, False)
            if not ok:
                return False
            template = options[labels.index(choice)].path
        try:
            data = from_template(template, self.ctx.workspace, taken=self.names_in_use().taken())
        except UserError as exc:
            self._warn("Cannot use this template", str(exc))
            return False
        return self.new_document(data)

    def open_dialog(self) -> bool:
        if not self.maybe_save():
            return False
        name, _filter = QFileDialog.getOpenFileName(
            self._parent(), "Open schedule", str(self.ctx.workspace), "Schedules (*.yaml *.yml *.json);;All files (*)"
        )
        return self.open_path(Path(name), ask=False) if name else False

    def open_path(self, path: Path, *, ask: bool = True) -> bool:
        """Open a spec file (an invalid spec opens, to be fixed; an unreadable file says why)."""
        path = path.resolve()
        if self.document is not None and self.document.path == path:
            self.show_view("designer")
            return True
        if ask and not self.maybe_save():
            self.refresh_sidebar()
            return False
        doc = SpecDocument()
        try:
            doc.load(path)
        except UserError as exc:
            doc.deleteLater()
            self.recent.remove(path)
            self._warn("Cannot open the schedule", str(exc))
            self.refresh_sidebar()
            return False
        self.recent.add(path)
        self._set_document(doc)
        return True

    def import_schedules(self, paths: list[Path] | None = None) -> list[Path]:
        """File ▸ Import…: a crontab (``paths``, else asked for) reviewed in the import dialog; the chosen
        jobs are saved into the workspace as new files, unpublished and untrusted, and the first is
        opened as any file from disk. Returns the files written."""
        from scheduler_gui.workspace.import_dialog import IMPORT_FILTER, ImportDialog

        if paths is None:
            names, _filter = QFileDialog.getOpenFileNames(
                self._parent(), "Import schedules from", str(Path.home()), IMPORT_FILTER
            )
            paths = [Path(name) for name in names]
        if not paths:
            return []
        dialog = ImportDialog(
            paths,
            workspace=self.ctx.workspace,
            zone=self.workspace_zone.zone,
            clock=self.ctx.clock,
            taken=self.names_in_use().taken(),
            parent=self._parent(),
        )
        try:
            if not dialog.exec():
                return []
            written = list(dialog.written)
        finally:
            dialog.deleteLater()
        self.refresh_sidebar()
        listed = ", ".join(path.name for path in written)
        self.say(
            f"Imported into the workspace: {listed}. Not published; each asks to be trusted before its task runs.",
            15_000,
        )
        if written:
            self.open_path(written[0])
        return written

    def save(self) -> bool:
        doc = self.document
        if doc is None or not self._zone_kept(doc):
            return False
        if doc.path is None:
            return self.save_as()
        return self._write(doc, doc.path)

    def save_as(self, path: Path | None = None) -> bool:
        doc = self.document
        if doc is None or not self._zone_kept(doc):
            return False
        if path is None:
            suggested = doc.path or (self.ctx.workspace / doc.display_name)
            name, _filter = QFileDialog.getSaveFileName(self._parent(), "Save schedule as", str(suggested), SPEC_FILTER)
            if not name:
                return False
            path = Path(name)
        return self._write(doc, _with_suffix(path))

    def _zone_kept(self, doc: SpecDocument) -> bool:
        """False when the person, asked on a new schedule's first save, wants another zone (the picker has focus)."""
        if doc.blocking() is not None:
            return True  # the save is refused for its own reason first; the zone is asked about when it can go on
        if keep_untouched_zone(doc, self._parent()) is False:
            self.focus_zone()
            self.say("Not saved: choose the schedule's time zone, then save.", 8000)
            return False
        return True

    def names_in_use(self) -> NamesInUse:
        """The ids taken now: in the workspace, and in the ledger when it is open."""
        summaries = self.hub.summaries if self.hub.state is HubState.OPEN else None
        return NamesInUse.read(self.ctx.workspace, summaries)

    def _name_is_free(self, doc: SpecDocument, path: Path) -> bool:
        """Check the id again for the file ``path`` it is about to be written to; True when it may be.

        Saving the file in place with an id that has meanwhile become another
        file's is refused. A copy (Save As) whose id another file or a schedule
        published from another file has is a new schedule: a fresh id and
        revision 1 are offered, and nothing is saved without them.
        """
        sid = doc.value("scheduleId")
        if not isinstance(sid, str) or id_format_problem(sid) is not None:
            return True  # the spec's own problem says what is wrong, and blocks the save
        target = path.resolve()
        on_disk = read_entry(target).schedule_id if target.is_file() else None
        names = self.names_in_use()
        check = check_id(sid, own=target, on_disk=on_disk, names=names)
        if check.problem is None:
            return True
        if target == doc.path or not check.taken:
            self._warn("Cannot save the schedule", check.problem)
            return False
        fresh = names.fresh_id(target.stem)
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(
            self._parent(),
            "Save as a new schedule?",
            f"{check.problem} A copy is a schedule of its own: save {target.name} with the id “{fresh}” "
            "as revision 1 of a new schedule?",
            buttons.Save | buttons.Cancel,
            buttons.Save,
        )
        if answer != buttons.Save:
            self.say(f"Not saved: “{sid}” is taken.", 5000)
            return False
        doc.set_values({"scheduleId": fresh, "revision": 1}, label="New id for the copy")
        self.say(f"{target.name} is a new schedule: its id is “{fresh}”.", 8000)
        return True

    def new_schedule_from_current(self) -> bool:
        """The designer's "Make a new schedule from this…": the open schedule (with its unsaved edits) under
        a fresh id, as revision 1, saved where the person says and opened in its place. The published schedule
        and its file stay as they are. Nothing happens when the person cancels the Save dialog."""
        doc = self.document
        if doc is None:
            return False
        from scheduler_gui.designer.trust import TrustStore

        data = copy.deepcopy(doc.data)
        base = str(data.get("title") or data.get("scheduleId") or "schedule")
        fresh = self.names_in_use().fresh_id(base)
        data["scheduleId"], data["revision"] = fresh, 1
        name, _filter = QFileDialog.getSaveFileName(
            self._parent(), "Save the new schedule as", str(self.ctx.workspace / f"{fresh}.yaml"), SPEC_FILTER
        )
        if not name:
            return False
        trusted = not TrustStore(self.ctx.settings).needs_trust(doc)  # a copy of an untrusted task is untrusted
        new = SpecDocument(data)
        if not self._write(new, _with_suffix(Path(name)), trusted=trusted):
            new.deleteLater()
            return False
        self._set_document(new)
        return True

    def _write(self, doc: SpecDocument, path: Path, *, trusted: bool | None = None) -> bool:
        """Save ``doc`` to ``path``. What the person made or trusted here stays trusted once written
        (``trusted``: whether it is, when the document cannot say), so publishing right after the save
        never asks about the window's own file; a document from an untrusted file stays untrusted."""
        from scheduler_gui.designer.trust import TrustStore

        store = TrustStore(self.ctx.settings)
        if trusted is None:
            trusted = store.document_trusted(doc)
        steps = doc.undo_stack.index()
        if not self._name_is_free(doc, path):
            return False
        renamed = doc.undo_stack.index() != steps  # the copy took a fresh id: undone if it is not saved
        blocked = doc.blocking()
        if blocked is not None:
            self._warn("Cannot save yet", str(blocked))
            return False
        try:
            saved = doc.save(path)
        except UserError as exc:
            if renamed:
                doc.undo_stack.undo()
            self._warn("Cannot save the schedule", str(exc))
            return False
        if trusted:
            store.trust_file(saved)
        self.recent.add(saved)
        self.ctx.settings.setValue("files/last", str(saved))
        self.autosaver.clear()
        self.say(f"Saved {saved}", 5000)
        self._update_title()
        self.refresh_sidebar()
        return True

    def _warn(self, title: str, message: str) -> None:
        self.say(message)
        QMessageBox.warning(self._parent(), title, message)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        paths = self.recent.existing()
        for path in paths:
            act = self.recent_menu.addAction(path.name)
            act.setToolTip(str(path))
            act.setStatusTip(str(path))
            act.triggered.connect(lambda _checked=False, p=path: self.open_path(p))
        if not paths:
            none = self.recent_menu.addAction("No recent files")
            none.setEnabled(False)
        self.recent_menu.addSeparator()
        clear = self.recent_menu.addAction("Clear the list")
        clear.setToolTip("Forget the recent files")
        clear.setEnabled(bool(paths))
        clear.triggered.connect(self.recent.clear)

    def open_initial(self, spec: Path | None = None) -> None:
        """The file to show first: ``spec``, else the last one open, else the workspace's first, else a blank one."""
        candidates: list[Path] = []
        if spec is not None:
            candidates.append(spec)
        last = self.ctx.settings.value("files/last", "")
        if last:
            candidates.append(Path(str(last)))
        candidates += [e.path for e in list_specs(self.ctx.workspace) if e.problem is None]
        for path in candidates:
            if path.is_file() and self.open_path(path, ask=False):
                return
        self.new_document()

    def offer_recovery(self) -> bool:
        """Offer back an autosave left by a session that ended without saving; True when restored."""
        found = self.autosaver.pending()
        if found is None:
            return False
        name = found.original.name if found.original else "a new schedule"
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(
            self._parent(),
            "Restore unsaved changes?",
            f"Tidemark closed before the changes to {name} were saved. Restore them?",
            buttons.Yes | buttons.No,
            buttons.Yes,
        )
        if answer != buttons.Yes:
            self.autosaver.clear()
            return False
        try:
            recovered = load_text(found.text, "the autosave")
            if not isinstance(recovered, dict):
                raise UserError("the autosave is not a schedule")
        except UserError as exc:
            self.autosaver.clear()
            self._warn("Cannot restore the changes", str(exc))
            return False
        doc = SpecDocument()
        if found.original is not None and found.original.is_file():
            try:
                doc.load(found.original)
            except UserError:
                doc = SpecDocument()
        keys = set(doc.data) | set(recovered)
        doc.set_values({k: recovered.get(k) for k in keys}, label="Restore unsaved changes")
        self._set_document(doc)
        return True


def _with_suffix(path: Path) -> Path:
    """``path`` ending in .yaml or .yml (``morning`` → ``morning.yaml``)."""
    return path if path.suffix.lower() in (".yaml", ".yml") else path.with_name(path.name + ".yaml")
