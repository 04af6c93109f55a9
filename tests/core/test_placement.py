"""Which engine runs a revision (core.team.placement): labels, runsOn, trust, and
the ``--label`` syntax, as tables."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.team.actor import Actor
from core.team.placement import (
    NO_PUBLISHER,
    LabelError,
    Placement,
    SeenEngine,
    Wants,
    parse_label,
    parse_labels,
    parse_trust,
    parse_trusts,
    refusal,
    waiting_text,
)

ALICE_ON_ALPHA = Placement.of(Actor("alice", "alpha"), {"gpu": "yes"})


@pytest.mark.parametrize(
    ("runs_on", "publisher", "host", "why"),
    [
        pytest.param(None, "alice", "alpha", None, id="absent_publishing_host"),
        pytest.param(None, "alice", "beta", "runs on an engine with host=beta", id="absent_other_host"),
        pytest.param(None, None, None, NO_PUBLISHER, id="no_recorded_publisher_is_not_trusted"),
        pytest.param({"any": True}, None, "alpha", NO_PUBLISHER, id="no_recorded_publisher_anywhere"),
        pytest.param(None, None, "beta", "runs on an engine with host=beta", id="host_known_user_not"),
        pytest.param({"any": True}, "alice", "beta", None, id="any_engine"),
        pytest.param({"host": "alpha"}, "alice", "beta", None, id="runs_on_host"),
        pytest.param({"host": "alpha", "gpu": "yes"}, "alice", "beta", None, id="every_label_matches"),
        pytest.param({"gpu": "no"}, "alice", "alpha", "runs on an engine with gpu=no", id="label_differs"),
        pytest.param({"site": "lab", "gpu": "yes"}, "alice", "beta", "runs on an engine with site=lab",
                     id="label_missing"),
        pytest.param({"user": "alice"}, "alice", "beta", None, id="user_label"),
        pytest.param({"any": True}, "bob", "alpha",
                     "published by bob, whom this engine does not trust (schedctl engine run --trust)",
                     id="untrusted_publisher"),
        pytest.param({"host": "beta"}, "bob", "alpha", "runs on an engine with host=beta", id="labels_said_first"),
    ],
)  # fmt: skip
def test_refusal(runs_on: dict[str, Any] | None, publisher: str | None, host: str | None, why: str | None) -> None:
    assert refusal(ALICE_ON_ALPHA, Wants(runs_on, publisher, host)) == why


@pytest.mark.parametrize(
    ("wants", "why"),
    [
        pytest.param(Wants({"any": True}, "alice", "beta", by_role=True), None, id="the_role_of_the_engines_user"),
        pytest.param(Wants({"any": True}, "bob", "alpha", by_role=True),
                     "published by role bob, whom this engine does not trust (schedctl engine run --trust)",
                     id="another_role"),
        pytest.param(Wants({"any": True}, None, "alpha", by_role=True), NO_PUBLISHER, id="no_recorded_role"),
    ],
)  # fmt: skip
def test_refusal_on_postgresql_names_the_role(wants: Wants, why: str | None) -> None:
    assert refusal(ALICE_ON_ALPHA, wants) == why


@pytest.mark.parametrize(
    ("trusts", "publisher", "runs"),
    [
        pytest.param((), "alice", True, id="own_user_on_any_host"),
        pytest.param((), "bob", False, id="another_user"),
        pytest.param(("bob",), "bob", True, id="trusted_user"),
        pytest.param(("bob",), "carol", False, id="only_the_named"),
        pytest.param(("*",), "carol", True, id="anyone"),
        pytest.param((), None, False, id="no_recorded_publisher"),
        pytest.param(("bob",), None, False, id="no_recorded_publisher_named_trusts"),
        pytest.param(("*",), None, True, id="no_recorded_publisher_anyone"),
    ],
)
def test_trust(trusts: tuple[str, ...], publisher: str | None, runs: bool) -> None:
    placement = Placement.of(Actor("alice", "alpha"), trusts=trusts)
    assert (refusal(placement, Wants({"any": True}, publisher, "zeta")) is None) is runs


def test_wants_read_from_a_stored_revision() -> None:
    assert Wants.of_revision('{"runsOn": {"host": "beta"}}', "a", "alpha").labels() == {"host": "beta"}
    assert Wants.of_revision('{"scheduleId": "x"}', "a", "alpha").labels() == {"host": "alpha"}
    assert Wants.of_revision("not json", "a", "alpha").labels() == {"host": "alpha"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("gpu", "--label 'gpu': write KEY=VALUE, e.g. --label gpu=yes", id="no_equals"),
        pytest.param("=yes", "--label '=yes': the label's name is empty; write KEY=VALUE", id="empty_key"),
        pytest.param("gpu=", "--label 'gpu=': the label's value is empty; write KEY=VALUE", id="empty_value"),
        pytest.param("host=beta", "--label 'host=beta': host is built in (the engine's own); choose another name",
                     id="built_in_host"),
        pytest.param("user=root", "--label 'user=root': user is built in (the engine's own); choose another name",
                     id="built_in_user"),
        pytest.param("any=1", "--label 'any=1': any is reserved (runsOn: {any: true}); choose another name",
                     id="reserved_any"),
    ],
)  # fmt: skip
def test_bad_labels(text: str, message: str) -> None:
    with pytest.raises(LabelError) as info:
        parse_label(text)
    assert str(info.value) == message


def test_labels() -> None:
    assert parse_labels(["gpu=yes", " site = lab ", "gpu=no", "path=a=b"]) == {
        "gpu": "no",
        "site": "lab",
        "path": "a=b",
    }
    placement = Placement.of(Actor("alice", "alpha"), {"gpu": "yes"})
    assert placement.labels == {"host": "alpha", "user": "alice", "gpu": "yes"}
    assert placement.trusts == {"alice"}
    with pytest.raises(LabelError, match="host is built in"):
        Placement.of(Actor("alice", "alpha"), {"host": "x"})


NOW = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)


def seen(
    labels: dict[str, str] | None, *, ago: timedelta = timedelta(0), trusts: tuple[str, ...] = ("alice",)
) -> SeenEngine:
    return SeenEngine(labels, trusts if labels is not None else None, NOW - ago, ago < timedelta(seconds=30))


ALPHA = {"host": "alpha", "user": "alice"}
BETA = {"host": "beta", "user": "alice"}


@pytest.mark.parametrize(
    ("wants", "engines", "line"),
    [
        pytest.param(Wants(None, "alice", "alpha"), [seen(ALPHA)], None, id="its_host_is_live"),
        pytest.param(Wants(None, "alice", "alpha"), [seen(BETA)],
                     "waiting for an engine with host=alpha; none seen on this ledger", id="never_seen"),
        pytest.param(Wants(None, "alice", "alpha"), [seen(ALPHA, ago=timedelta(hours=3, minutes=20)), seen(BETA)],
                     "waiting for an engine with host=alpha; none seen for 3 h 20 min", id="gone_for_hours"),
        pytest.param(Wants(None, "alice", "alpha"), [seen(ALPHA, ago=timedelta(seconds=45))],
                     "waiting for an engine with host=alpha; none seen for 45 s", id="gone_for_seconds"),
        pytest.param(Wants(None, "alice", "alpha"),
                     [seen(ALPHA, ago=timedelta(days=2, seconds=59)), seen(ALPHA, ago=timedelta(days=3))],
                     "waiting for an engine with host=alpha; none seen for 2 days", id="freshest_of_the_gone"),
        pytest.param(Wants({"gpu": "yes", "host": "beta"}, "alice", "alpha"), [seen(BETA)],
                     "waiting for an engine with gpu=yes, host=beta; none seen on this ledger", id="labels"),
        pytest.param(Wants({"any": True}, "alice", "alpha"), [seen(BETA)], None, id="any_engine"),
        pytest.param(Wants({"any": True}, "alice", "alpha"), [],
                     "waiting for an engine; none seen on this ledger", id="no_engine_at_all"),
        pytest.param(Wants(None, "bob", "alpha"), [seen(ALPHA), seen(BETA, trusts=("*",))],
                     "waiting for an engine with host=alpha; publisher bob is not trusted by the live engines",
                     id="untrusted"),
        pytest.param(Wants(None, "bob", "alpha"), [seen(ALPHA, trusts=("alice", "bob"))], None, id="trusted"),
        pytest.param(Wants(None, "bob", "alpha"), [seen(None)], None, id="engine_from_before_0008_runs_all"),
        pytest.param(Wants(None, None, "alpha"), [seen(ALPHA)],
                     "waiting for an engine with host=alpha; it has no recorded publisher: publish it again "
                     "(schedctl apply)", id="no_recorded_publisher"),
        pytest.param(Wants(None, None, "alpha"), [seen(ALPHA, trusts=("*",))], None,
                     id="no_recorded_publisher_trusting_anyone"),
        pytest.param(Wants(None, "bob", "alpha", by_role=True), [seen(ALPHA)],
                     "waiting for an engine with host=alpha; publisher role bob is not trusted by the live engines",
                     id="untrusted_role"),
    ],
)  # fmt: skip
def test_waiting_text(wants: Wants, engines: list[SeenEngine], line: str | None) -> None:
    assert waiting_text(wants, engines, NOW) == line


NOT_A_NAME = (
    "is not a publisher's name; give a database role (PostgreSQL) or an OS user's login name (SQLite), "
    "or '*' for anyone"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("a b", f"--trust 'a b' {NOT_A_NAME}", id="space"),
        pytest.param(" ", f"--trust ' ' {NOT_A_NAME}", id="blank"),
        pytest.param("bo\x00b", "--trust 'bo\\x00b': contains a NUL byte, which no program argument, environment"
                     " variable or ledger can hold", id="nul"),
    ],
)  # fmt: skip
def test_bad_trusts(text: str, message: str) -> None:
    with pytest.raises(LabelError) as info:
        parse_trust(text)
    assert str(info.value) == message


def test_trusts() -> None:
    assert parse_trusts([" bob ", "*", "bob"]) == ("bob", "*")
    assert parse_trust("carol") == "carol"


def test_a_label_that_no_ledger_can_hold_is_refused() -> None:
    with pytest.raises(LabelError, match="--label 'gpu=\\\\x00': contains a NUL byte"):
        parse_label("gpu=\x00")


@pytest.mark.parametrize(
    ("parse", "option", "text", "what"),
    [
        pytest.param(parse_label, "--label", "gpu=yes\nUser=root", "a line break", id="label_line_break"),
        pytest.param(parse_label, "--label", "gpu=yes\r", "a line break", id="label_carriage_return"),
        pytest.param(
            parse_label, "--label", "gpu=\x1b[31mred", "a control character (U+001B)", id="label_terminal_escape"
        ),
        pytest.param(
            parse_label, "--label", "gpu=yes\u2028x", "a control character (U+2028)", id="label_line_separator"
        ),
        pytest.param(parse_trust, "--trust", "alice\nbob", "a line break", id="trust_line_break"),
        pytest.param(parse_trust, "--trust", "alice\x85", "a control character (U+0085)", id="trust_next_line"),
    ],
)
def test_a_label_or_trust_of_more_than_one_line_is_refused(
    parse: Callable[[str], object], option: str, text: str, what: str
) -> None:
    """``engine run --label`` and ``--trust`` refuse a line break or control character, as
    ``install-service`` does: it would be stored in the engines row and shown in every log."""
    with pytest.raises(LabelError) as refused:
        parse(text)
    assert str(refused.value) == f"{option} {text!r} has {what}: a label or a name is one line of text"


@pytest.mark.parametrize(
    ("role", "trusts"),
    [
        pytest.param(None, {"alice"}, id="sqlite_has_no_role"),
        pytest.param("engine_alpha", {"alice", "engine_alpha"}, id="its_own_role"),
        pytest.param("alice", {"alice"}, id="a_role_named_as_its_user"),
    ],
)
def test_an_engine_also_trusts_the_role_it_logs_in_as(role: str | None, trusts: set[str]) -> None:
    assert Placement.of(Actor("alice", "alpha")).trusting_role(role).trusts == trusts
