"""What newly needs a person and the one text a batch is told in (``core.desktop.notify.needs``):
pure, the time an argument, as tables."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from core.desktop.notify.needs import TITLE, FirstLook, Need, NeedKind, NoticeBook, needs_of, notice_text

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
K = NeedKind


@dataclass(frozen=True)
class Occ:
    occurrence_id: str
    schedule_id: str
    state: str


@dataclass(frozen=True)
class Item:
    occurrence: Occ


@dataclass(frozen=True)
class Drift:
    schedule_id: str
    new_code: bool = False


@dataclass(frozen=True)
class Summary:
    schedule_id: str
    waiting: str | None = None
    held: str | None = None


def need(key: str, kind: NeedKind = K.UNKNOWN_EFFECT, sid: str = "backup.nightly") -> Need:
    return Need(key, kind, sid)


def test_needs_of_names_the_five_kinds_in_order() -> None:
    held = "held by the engines: revision 2: the pinned rules of Europe/Paris cannot be read: …"
    found = needs_of(
        [Item(Occ("r#2", "report.daily", "FAILED")), Item(Occ("b#1", "backup.nightly", "UNKNOWN_EFFECT"))],
        [Drift("billing"), Drift("payroll", new_code=True)],
        [
            Summary("sync", "waiting for an engine; none seen on this ledger"),
            Summary("quiet"),
            Summary("pin", held=held),
        ],
    )
    assert found == [
        Need("b#1", K.UNKNOWN_EFFECT, "backup.nightly"),
        Need("r#2", K.FAILED, "report.daily"),
        Need("sync (waiting for an engine)", K.WAITING, "sync"),
        Need("billing (tz drift)", K.DRIFT, "billing"),
        Need("payroll (tz drift)", K.NEW_CODE, "payroll"),
        Need("pin (held)", K.HELD, "pin"),
    ]


@pytest.mark.parametrize(
    ("needs", "text"),
    [
        pytest.param([need("b#1")], "1 run needs a decision: backup.nightly unknown effect", id="one_run"),
        pytest.param(
            [need("b#1"), need("b#2"), need("r#1", K.FAILED, "report.daily")],
            "3 runs need a decision: backup.nightly unknown effect (2), report.daily failed",
            id="runs_grouped_by_schedule",
        ),
        pytest.param(
            [need("p (held)", K.HELD, "pin")],
            "1 schedule needs a decision: pin held by the engines",
            id="held_schedule",
        ),
        pytest.param(
            [need("s", K.WAITING, "sync")],
            "1 schedule needs a decision: sync waiting for an engine",
            id="one_schedule",
        ),
        pytest.param(
            [need("b#1"), need("d", K.DRIFT, "billing")],
            "2 things need a decision: backup.nightly unknown effect, billing tzdata drift",
            id="runs_and_schedules",
        ),
        pytest.param(
            [need(f"o{i}", K.FAILED, f"s{i}") for i in range(6)],
            "6 runs need a decision: s0 failed, s1 failed, s2 failed, s3 failed and 2 more",
            id="many_counted",
        ),
        pytest.param(
            [need("d", K.DRIFT, "billing"), need("b#1")],
            "2 things need a decision: backup.nightly unknown effect, billing tzdata drift",
            id="ordered_by_kind",
        ),
    ],
)
def test_notice_text(needs: list[Need], text: str) -> None:
    assert notice_text(needs) == text


A, B, C = need("a"), need("b", K.FAILED, "report.daily"), need("c", K.WAITING, "sync")

#: Each step: (seconds after T0, what waits, quiet, the keys told in a notice or None).
STEPS = {
    "first_look_tells_what_waits": [(0, [A, B], False, ["a", "b"])],
    "same_needs_never_again": [(0, [A], False, ["a"]), (120, [A], False, None), (240, [A], False, None)],
    "only_the_new_one": [(0, [A], False, ["a"]), (120, [A, B], False, ["b"])],
    "too_soon_waits_for_the_next_batch": [
        (0, [A], False, ["a"]),
        (10, [A, B], False, None),
        (20, [A, B, C], False, None),
        (60, [A, B, C], False, ["b", "c"]),
    ],
    "gone_before_told_is_never_told": [(0, [A], False, ["a"]), (10, [A, B], False, None), (60, [A], False, None)],
    "back_after_leaving_is_news": [(0, [C], False, ["c"]), (60, [], False, None), (120, [C], False, ["c"])],
    "quiet_counts_as_told": [(0, [A], True, None), (120, [A], False, None), (240, [A, B], False, ["b"])],
    "nothing_waits": [(0, [], False, None), (60, [], False, None)],
}


@pytest.mark.parametrize("name", list(STEPS))
def test_notice_book(name: str) -> None:
    book = NoticeBook()
    for seconds, waiting, quiet, told in STEPS[name]:
        notice = book.look(waiting, T0 + timedelta(seconds=seconds), quiet=quiet)
        assert (None if notice is None else [n.key for n in notice.needs]) == told, (name, seconds)
        if notice is not None:
            assert notice.title == TITLE
            assert notice.text == notice_text(list(notice.needs))


def test_quiet_first_look_takes_what_waits_as_known() -> None:
    book = NoticeBook(first_look=FirstLook.QUIET)
    assert book.look([A, B], T0) is None
    assert book.told == {"a", "b"}
    notice = book.look([A, B, C], T0 + timedelta(seconds=1))
    assert notice is not None and notice.text == "1 schedule needs a decision: sync waiting for an engine"


def test_min_gap_is_the_books_own() -> None:
    book = NoticeBook(min_gap=timedelta(0))
    assert book.look([A], T0) is not None
    assert book.look([A, B], T0) is not None
