"""The "Zone rules" row of the When box: follow the installed tz database or keep the rules as
published (tzdbPolicy), with its consequence for the schedule's zone in words."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QComboBox, QLabel

from core.time.zones import tzdb_version
from scheduler_gui.designer.when_form import WhenForm
from scheduler_gui.workspace.document import SpecDocument


@pytest.fixture
def form(document: SpecDocument, ctx: Any, qtbot: Any) -> WhenForm:
    widget = WhenForm(document, ctx)
    qtbot.addWidget(widget)
    widget.resize(640, widget.sizeHint().height())
    widget.show()
    return widget


def named(form: WhenForm, kind: type[Any], name: str) -> Any:
    [found] = [w for w in form.findChildren(kind) if w.accessibleName() == name]
    return found


def test_a_person_pins_the_zone_rules_and_reads_what_it_means(form: WhenForm, document: SpecDocument) -> None:
    combo: QComboBox = named(form, QComboBox, "Zone rules")
    meaning: QLabel = named(form, QLabel, "Zone rules: meaning")
    assert combo.currentText() == "Follow changes of the law"
    assert meaning.text() == (
        f"Runs by America/New_York's rules as the installed tz database has them (now {tzdb_version()}); "
        "when a government changes them, runs not yet planned follow."
    )
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)
    assert document.value("tzdbPolicy") == "PIN"
    assert document.spec is not None and document.spec.tzdb_policy.value == "PIN"
    assert combo.currentText() == "Keep the rules as published"
    assert meaning.text() == (
        f"Runs by America/New_York's rules as tz database {tzdb_version()} has them, on every machine; "
        "a later change of the law moves nothing until you republish."
    )
    form.grab().save("/tmp/tzdb-policy-designer.png")
    QTest.keyClick(combo, Qt.Key.Key_Up)
    assert "tzdbPolicy" not in document.data  # FOLLOW is the default: the file does not spell it out
    document.undo_stack.undo()
    assert combo.currentText() == "Keep the rules as published"
