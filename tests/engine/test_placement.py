"""Which engine runs a revision (core.engine.placement): labels, runsOn, trust, and
the ``--label`` syntax, as tables."""

from __future__ import annotations

from typing import Any

import pytest

from core.actor import Actor
from core.engine.placement import LabelError, Placement, Wants, parse_label, parse_labels, refusal

ALICE_ON_ALPHA = Placement.of(Actor("alice", "alpha"), {"gpu": "yes"})


@pytest.mark.parametrize(
    ("runs_on", "publisher", "host", "why"),
    [
        pytest.param(None, "alice", "alpha", None, id="absent_publishing_host"),
        pytest.param(None, "alice", "beta", "runs on an engine with host=beta", id="absent_other_host"),
        pytest.param(None, None, None, None, id="published_before_0008_runs_anywhere"),
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
    ("trusts", "publisher", "runs"),
    [
        pytest.param((), "alice", True, id="own_user_on_any_host"),
        pytest.param((), "bob", False, id="another_user"),
        pytest.param(("bob",), "bob", True, id="trusted_user"),
        pytest.param(("bob",), "carol", False, id="only_the_named"),
        pytest.param(("*",), "carol", True, id="anyone"),
    ],
)
def test_trust(trusts: tuple[str, ...], publisher: str, runs: bool) -> None:
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
