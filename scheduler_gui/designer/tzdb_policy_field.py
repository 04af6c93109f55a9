"""The zone's rules: follow the installed tz database, or pin the rules as published
(``tzdbPolicy``), with what that means for this zone in words (:mod:`core.time.tzdb_policy`)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QVBoxLayout, QWidget

from core.enums import TzdbPolicy
from core.time.tzdb_policy import consequence
from core.time.zones import tzdb_version
from scheduler_gui.a11y import accessible
from scheduler_gui.designer.notes import meaning_label
from scheduler_gui.designer.when_fields import field_row
from scheduler_gui.workspace.document import SpecDocument

POLICY_CHOICES = (
    (TzdbPolicy.FOLLOW.value, "Follow changes of the law"),
    (TzdbPolicy.PIN.value, "Keep the rules as published"),
)


class TzdbPolicyField(QWidget):
    """A combo of the two policies and one line saying what the chosen one does in the document's zone."""

    def __init__(self, document: SpecDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._doc = document
        self._syncing = False
        self.combo = QComboBox(self)
        for value, words in POLICY_CHOICES:
            self.combo.addItem(words, value)
        accessible(
            self.combo,
            "Zone rules",
            "Whether runs not planned yet follow the installed tz database, or keep the zone's rules as "
            "published, on every machine (tzdbPolicy)",
        )
        self.meaning = meaning_label(self, "Zone rules: meaning")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(1)
        layout.addWidget(field_row(self.combo))
        layout.addWidget(self.meaning)
        self.combo.activated.connect(self._chosen)

    def show_document(self) -> None:
        """Show the document's policy and its consequence (writes nothing back)."""
        value = self._doc.value("tzdbPolicy", TzdbPolicy.FOLLOW.value)
        self._syncing = True
        try:
            index = self.combo.findData(value)
            self.combo.setCurrentIndex(index if index >= 0 else 0)
        finally:
            self._syncing = False
        policy = TzdbPolicy(self.combo.currentData())
        zone = self._doc.value("timeZone")
        named = zone if isinstance(zone, str) and zone else "the zone"
        self.meaning.setText(consequence(policy, named, tzdb_version()))

    def _chosen(self, index: int) -> None:
        value = self.combo.itemData(index)
        if self._syncing or value == self._doc.value("tzdbPolicy", TzdbPolicy.FOLLOW.value):
            return
        # FOLLOW is the default: choosing it takes the key out of the file rather than writing it.
        written = None if value == TzdbPolicy.FOLLOW.value else value
        self._doc.set_value("tzdbPolicy", written, label=f"Zone rules: {self.combo.itemText(index)}")
