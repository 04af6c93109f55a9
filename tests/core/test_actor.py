"""The actor of a process: OS user, host (or TIDEMARK_HOSTNAME) and database role."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import sys

import pytest

from core.team.actor import HOSTNAME_VARIABLE, Actor, current_actor, host_name, os_user


@pytest.mark.parametrize(
    ("actor", "text"),
    [
        (Actor("alice", "alpha"), "alice@alpha"),
        (Actor("alice", "alpha", "alice"), "alice@alpha"),
        (Actor("alice", "alpha", "tidemark_publisher"), "alice@alpha (role tidemark_publisher)"),
    ],
)
def test_an_actor_reads_as_user_at_host_with_a_role_only_when_it_differs(actor: Actor, text: str) -> None:
    assert str(actor) == text


def test_the_host_is_the_machines_unless_tidemark_hostname_names_another(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(HOSTNAME_VARIABLE, raising=False)
    assert host_name() == socket.gethostname()
    monkeypatch.setenv(HOSTNAME_VARIABLE, "  beta ")
    assert host_name() == "beta"
    monkeypatch.setenv(HOSTNAME_VARIABLE, "   ")
    assert host_name() == socket.gethostname()


def test_the_user_is_the_os_account_of_the_uid_and_a_uid_when_there_is_no_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert os_user() == pwd.getpwuid(os.getuid()).pw_name

    def nameless(uid: int) -> pwd.struct_passwd:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", nameless)
    monkeypatch.setattr("os.getuid", lambda: 4242)
    assert os_user() == "4242"


@pytest.mark.parametrize("variable", ["LOGNAME", "USER", "LNAME", "USERNAME"])
def test_the_user_is_never_read_from_the_environment(variable: str) -> None:
    """A process that says it is root (or anyone) is the user its uid says, in a process of its own."""
    claimed = "root" if os.getuid() != 0 else "somebody-else"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LOGNAME": claimed, "USER": claimed, variable: claimed}
    done = subprocess.run(
        [sys.executable, "-c", "from core.team.actor import os_user; print(os_user())"],
        env={**env, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == pwd.getpwuid(os.getuid()).pw_name != claimed


def test_the_current_actor_has_no_role_until_a_session_says_which(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOSTNAME_VARIABLE, "alpha")
    actor = current_actor()
    assert (actor.host, actor.role) == ("alpha", None)
    assert actor.with_role("viewer") == Actor(actor.user, "alpha", "viewer")
