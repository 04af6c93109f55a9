"""A schedule's names: the title a person types and the id derived from it, and
whether an id is free, taken, or this file's own published one.

An id names one schedule across the workspace folder and the ledger. The
ledger records the file each revision was published from
(``ScheduleSummary.source_path``), so a file is told apart from another file
that carries the same id. Plain Python (no Qt): the designer's title and id
row, the sidebar, Save As and Publish all ask the same questions here.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.spec.model import SCHEDULE_ID
from scheduler_gui.workspace.folder import ids_in_use, names_in_use, slug, unique_id

if TYPE_CHECKING:
    from core.ledger.queries import PublishedSchedule, ScheduleSummary


def this_host() -> str:
    """This machine's name, as ``core.ledger.publish.RevisionSource`` records it (not imported from
    there: the ledger package loads SQLAlchemy, which the window's first paint does not need)."""
    return socket.gethostname()


@dataclass(frozen=True)
class Published:
    """What the ledger holds under an id: its active revision and the file it came from."""

    schedule_id: str
    revision: int
    title: str | None
    #: The spec file the active revision was published from and its host; None when not recorded.
    source_path: str | None
    source_host: str | None

    @classmethod
    def of(cls, found: ScheduleSummary | PublishedSchedule) -> Published:
        revision = found.active_revision
        return cls(found.schedule_id, revision, found.title, found.source_path, found.source_host)

    @property
    def source_known(self) -> bool:
        return self.source_path is not None

    def came_from(self, path: Path | None) -> bool:
        """Whether this schedule was published from the file ``path`` (on this host).

        A revision that did not record its file (published from standard input,
        or before the ledger recorded files) is taken to be the file's that
        holds its id: the ledger cannot say otherwise.
        """
        if self.source_path is None:
            return path is not None
        if path is None or self.source_host != this_host():
            return False
        return Path(self.source_path) == path.resolve()

    def replaced_by(self, path: Path | None) -> bool:
        """Whether publishing the file ``path`` would replace a schedule not known to be that file's:
        published from another file or host, or from a file the ledger did not record (standard input,
        an older ledger). Unlike :meth:`came_from`, an unrecorded origin is not given the benefit of the
        doubt: publishing over it is confirmed once, and from then on the file is recorded."""
        if self.source_path is None:
            return True
        return not self.came_from(path)

    def where(self) -> str:
        """``a.yaml`` (with its folder when asked for the tooltip), ``a.yaml on host beta``, or why it is unknown."""
        if self.source_path is None:
            return "a file the ledger did not record"
        name = Path(self.source_path).name
        if self.source_host != this_host():
            return f"{name} on host {self.source_host}"
        return name


@dataclass(frozen=True)
class NamesInUse:
    """The ids in use when a question is asked: in the workspace's files, and in the ledger."""

    folder: Path
    #: Published schedules by id; None while the ledger is not open (then only the workspace is known).
    ledger: Mapping[str, Published] | None

    @classmethod
    def read(cls, folder: Path, summaries: Iterable[ScheduleSummary] | None) -> NamesInUse:
        """The names now: ``summaries`` are the ledger's (None when it is not open)."""
        ledger = None if summaries is None else {s.schedule_id: Published.of(s) for s in summaries}
        return cls(folder, ledger)

    def taken(self, own: Path | None = None) -> set[str]:
        """What a new id for the file ``own`` (None: not saved yet) must avoid: every other
        file's id and name in the workspace, and every id in the ledger not published from ``own``."""
        found = names_in_use(self.folder, besides=own)
        if self.ledger:
            found |= {sid for sid, p in self.ledger.items() if not (p.source_known and p.came_from(own))}
        return found

    def fresh_id(self, base: str, own: Path | None = None) -> str:
        """``base`` (a title or an id) as an id free for ``own``."""
        return unique_id(base, self.taken(own))


@dataclass(frozen=True)
class IdCheck:
    """What is known of an id: a problem that blocks saving, or a note, and the ledger's schedule."""

    problem: str | None = None
    note: str | None = None
    #: The ledger's schedule under this id, whichever file it came from.
    published: Published | None = None
    #: Published from this very file: the id no longer changes (a new id is a new schedule).
    locked: bool = False
    #: True when the problem is that another file or schedule has the id (a fresh one fixes it).
    taken: bool = False


def id_format_problem(text: str) -> str | None:
    """Why ``text`` cannot be a schedule id (docs/contract.md §1), or None."""
    if not text:
        return "Give the schedule an id: it names the schedule in the ledger."
    if SCHEDULE_ID.fullmatch(text):
        return None
    if SCHEDULE_ID.fullmatch(text.lower()):
        return f"“{text}” has capitals: an id is lower-case only (“{text.lower()}”)."
    if len(text) > 64:
        return f"An id is at most 64 characters; this one has {len(text)}."
    return (
        f"“{text}” cannot be an id: use lower-case letters, digits, '.', '_' or '-', starting with a letter or digit."
    )


def check_id(
    text: str, *, own: Path | None, on_disk: str | None, names: NamesInUse, unpublishable: str | None = None
) -> IdCheck:
    """Whether the file ``own`` (None: not saved yet) may have the id ``text``.

    ``on_disk`` is the id the file holds on disk now. Another workspace file
    with the same id is a problem; so is an id published from another file,
    unless it is the one the file already holds on disk: publishing that file
    is then a replacement the person confirms at Publish (a note says so here).
    ``unpublishable`` is why this window cannot publish (a viewer's): the note
    then says which file the schedule was published from, and nothing of a
    replacement nobody here can make.
    """
    problem = id_format_problem(text)
    if problem is not None:
        return IdCheck(problem=problem)
    other = ids_in_use(names.folder, besides=own).get(text)
    if other is not None:
        return IdCheck(problem=f"“{text}” is already the id of {other.name} in the workspace.", taken=True)
    if names.ledger is None:
        return IdCheck(note="Checked against the workspace only: the ledger is not open. Publish checks again.")
    published = names.ledger.get(text)
    if published is None:
        return IdCheck()
    if published.came_from(own) and (published.source_known or text == on_disk):
        return IdCheck(published=published, locked=True)
    if text == on_disk and unpublishable is not None:
        where = published.where()
        return IdCheck(note=f"“{text}” is published from {where}. This window cannot publish: {unpublishable}.")
    if text == on_disk:
        return IdCheck(
            note=(
                f"“{text}” is also published, from {published.where()}: publishing this file replaces "
                "that schedule (you are asked first)."
            ),
            published=published,
        )
    return IdCheck(problem=f"“{text}” is already published, from {published.where()}.", published=published, taken=True)


_SUFFIX = re.compile(r"-[0-9]+$")


def follows_title(schedule_id: str, title: str | None) -> bool:
    """Whether ``schedule_id`` is what ``title`` gives (its slug, or the slug with a ``-2``… suffix
    added to make it unique): such an id goes on following the title as it is edited."""
    if not title or not title.strip():
        return False
    base = slug(title)
    return schedule_id == base or (schedule_id.startswith(base) and bool(_SUFFIX.fullmatch(schedule_id[len(base) :])))
