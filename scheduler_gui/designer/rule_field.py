"""The RRULE text of a calendar schedule, in sync with the calendar form.

Typing in it writes the text to the document whenever the whole text is a
rule (the steps of one stretch of typing merge into one undo step) and the
form follows; text that is not a rule ("FREQ=SOMETIMES", an empty field)
stays in the field with its message under it, and the document keeps the
last rule. Every form edit rewrites the text. A valid rule the form cannot
show leaves the form disabled with a note under the text, which stays
editable.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QLineEdit, QVBoxLayout, QWidget

from core.recurrence.rules import parse_rule
from scheduler_gui.a11y import accessible
from scheduler_gui.designer.when_state import WhenState
from scheduler_gui.designer.zone_picker import tabular

CANNOT_SHOW = "This rule uses parts the form cannot show; edit it as text."


def read_rule(text: str) -> str:
    """The typed rule as it will be stored (trimmed); RuleError when the text is not a rule."""
    parse_rule(text)
    return text.strip()


class RuleTextField(QWidget):
    """The rule as RRULE text: it follows the form, and typing in it moves the form."""

    def __init__(self, state: WhenState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.rule = QLineEdit(self)
        self.rule.setObjectName("ruleText")
        self.rule.setFont(tabular(self.rule.font()))
        self.rule.setPlaceholderText("FREQ=DAILY;BYHOUR=2;BYMINUTE=30")
        accessible(
            self.rule,
            "RRULE",
            "The rule as RFC 5545 RRULE text. It follows the form above, and editing it updates the form.",
        )
        self.rule_note = QLabel(CANNOT_SHOW, self)
        self.rule_note.setWordWrap(True)
        self.rule_note.setAccessibleName("Rule note")
        self.rule_note.setVisible(False)
        line = state.error_line("rule", self, "RRULE")
        self.field = state.typed(
            "rule",
            "rule",
            line,
            self.rule,
            parse=read_rule,
            current=state.rule_value,
            write=lambda text: state.doc.set_value("rule", text, label="Edit the rule", merge=True),
            show=self._show_text,
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(1)
        layout.addWidget(self.rule)
        layout.addWidget(line)
        layout.addWidget(self.rule_note)

    def show_document(self, shown_in_form: bool) -> None:
        """Show the document's rule text; the note when the text is valid but ``shown_in_form`` is false."""
        text = self._state.rule_value()
        if not self.field.problem.holds(text) and self.rule.text().strip() != text:
            # The document's own text, even when it is not a rule (a file opened to be fixed).
            self.field.reset()
        self.rule_note.setVisible(not shown_in_form and self._state.rule_parse_error is None and bool(text))

    def forget(self) -> None:
        """The schedule is not a calendar one: the text's problem must not hold it back."""
        self.field.forget()

    def _show_text(self, text: str) -> None:
        self.rule.setText(text)
        self.rule.setCursorPosition(0)
