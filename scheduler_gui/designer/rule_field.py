"""The RRULE text of a calendar schedule, in sync with the calendar form.

Typing in it writes the text to the document as typed (one undo step while
typing) and the form follows; every form edit rewrites it. A valid rule the
form cannot show leaves the form disabled with a note under the text, which
stays editable; an invalid rule shows its message under the field.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QLineEdit, QVBoxLayout, QWidget

from scheduler_gui.designer.when_fields import tip
from scheduler_gui.designer.when_state import WhenState
from scheduler_gui.designer.zone_picker import tabular

CANNOT_SHOW = "This rule uses parts the form cannot show; edit it as text."


class RuleTextField(QWidget):
    """The rule as RRULE text: it follows the form, and typing in it moves the form."""

    def __init__(self, state: WhenState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.rule = QLineEdit(self)
        self.rule.setObjectName("ruleText")
        self.rule.setFont(tabular(self.rule.font()))
        self.rule.setPlaceholderText("FREQ=DAILY;BYHOUR=2;BYMINUTE=30")
        tip(
            self.rule,
            "RRULE",
            "The rule as RFC 5545 RRULE text. It follows the form above, and editing it updates the form.",
        )
        self.rule.textEdited.connect(self._on_text)
        self.rule_note = QLabel(CANNOT_SHOW, self)
        self.rule_note.setWordWrap(True)
        self.rule_note.setAccessibleName("Rule note")
        self.rule_note.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(1)
        layout.addWidget(self.rule)
        layout.addWidget(state.error_line("rule", self))
        layout.addWidget(self.rule_note)

    def show_document(self, shown_in_form: bool) -> None:
        """Show the document's rule text; the note when the text is valid but ``shown_in_form`` is false."""
        text = self._state.rule_value()
        if self.rule.text() != text:
            self.rule.setText(text)
            self.rule.setCursorPosition(0)
        self.rule_note.setVisible(not shown_in_form and self._state.rule_parse_error is None and bool(text))

    def _on_text(self, text: str) -> None:
        if self._state.updating:
            return
        self._state.set_local_error("form", None)
        self._state.doc.set_value("rule", text.strip() or None, label="Edit the rule", merge=True)
