"""Task secrets without a ledger: the ``{secret: NAME}`` reference in the spec (validation,
canonical form, JSON Schema, a person's file rewritten), the input digest, the two stores
(keyring and the 0600 file) with their refusals, ``schedctl secret`` and the warning about
credentials in clear."""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import keyring
import pytest
from hypothesis import given
from hypothesis import strategies as st
from keyring.backends import chainer, fail

from core import cli
from core.engine.runner import TaskIdentity, prepare
from core.errors import SpecError
from core.spec.canonical import canonical_dict
from core.spec.files import dump_yaml, load_text
from core.spec.model import json_schema
from core.spec.roundtrip import rewrite
from core.spec.validation import parse_spec
from core.team import secrets
from tests.core.helpers import make_data
from tests.secret_stores import STORES, MemoryKeyring, schedctl, secret_store

VALUE = "s3cr3t-value-91"
IDENTITY = TaskIdentity("s", 1, "occ", None, "2026-03-01T06:00:00", None, None, "att", 1)


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with secret_store(request.param, tmp_path / "config", monkeypatch):
        yield request.param


@pytest.fixture
def in_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with secret_store("file", tmp_path / "config", monkeypatch):
        yield


def with_env(env: dict[str, Any]) -> dict[str, Any]:
    return make_data(task={"argv": ["/bin/true"], "env": env})


def problems(env: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as caught:
        parse_spec(with_env(env))
    return [str(p) for p in caught.value.problems]


# --- the reference in the spec ------------------------------------------------------------


def test_a_reference_is_validated_kept_and_written_in_the_canonical_form() -> None:
    spec = parse_spec(with_env({"API_TOKEN": {"secret": "api-token"}, "REGION": "eu"}))
    assert spec.task is not None
    assert spec.task.secret_names() == {"API_TOKEN": "api-token"}
    assert canonical_dict(spec)["task"]["env"] == {"API_TOKEN": {"secret": "api-token"}, "REGION": "eu"}
    # The canonical form reads back as the same spec.
    assert canonical_dict(parse_spec(canonical_dict(spec))) == canonical_dict(spec)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            {"secret": "9lives"},
            "'9lives' is not a secret name: 1-64 letters, digits, '_', '.' or '-', starting with a letter",
        ),
        (
            {"secret": "a b"},
            "'a b' is not a secret name: 1-64 letters, digits, '_', '.' or '-', starting with a letter",
        ),
        ({"secret": "x" * 65}, "is not a secret name"),
        ({"secret": 7}, "7 is not a secret name"),
        ({"secret": "ok", "default": "x"}, "a reference is written {secret: NAME}, got"),
        ({"name": "ok"}, "a reference is written {secret: NAME}, got"),
        (8080, "must be text (quote a number: '8080') or {secret: NAME}, got 8080"),
        ([1], "must be text (quote a number: '8080') or {secret: NAME}, got [1]"),
    ],
)
def test_a_bad_reference_is_one_clear_problem_on_its_variable(value: Any, message: str) -> None:
    (problem,) = problems({"API_TOKEN": value})
    assert problem.startswith("task.env.API_TOKEN: ")
    assert message in problem


def test_the_json_schema_describes_the_reference() -> None:
    schema = json_schema()
    env = schema["$defs"]["Task"]["properties"]["env"]["additionalProperties"]
    assert env == {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/SecretRef"}]}
    ref = schema["$defs"]["SecretRef"]
    assert ref["required"] == ["secret"] and ref["additionalProperties"] is False
    assert ref["properties"]["secret"]["pattern"] == "^[A-Za-z][A-Za-z0-9_.-]{0,63}$"


def test_a_new_file_writes_the_reference_on_its_variables_line() -> None:
    spec = parse_spec(with_env({"API_TOKEN": {"secret": "push-token"}, "REGION": "eu"}))
    text = dump_yaml(canonical_dict(spec))
    assert "  env:\n    API_TOKEN: {secret: push-token}\n    REGION: eu\n" in text
    again = parse_spec(load_text(text, "new.yaml"))
    assert again.task is not None and again.task.secret_names() == {"API_TOKEN": "push-token"}


def test_a_persons_file_gets_the_reference_in_place_of_the_value() -> None:
    text = (
        "schema: scheduleSpec.v1\nscheduleId: push\nrevision: 1\ntimeZone: UTC\n"
        "rule: FREQ=DAILY\nstart: 2026-01-01T00:00:00\ngapPolicy: SKIP\nfoldPolicy: FIRST_ONLY\n"
        "task:\n  argv: [/bin/true]\n  env:\n    API_TOKEN: abc  # the push service\n    REGION: eu\n"
    )
    old = load_text(text, "push.yaml")
    new = json.loads(json.dumps(old))
    new["task"]["env"]["API_TOKEN"] = {"secret": "push-token"}
    written = rewrite(text, old, new)
    assert "abc" not in written and "# the push service" in written
    spec = parse_spec(load_text(written, "push.yaml"))
    assert spec.task is not None and spec.task.secret_names() == {"API_TOKEN": "push-token"}


# --- the digest and the prepared command ----------------------------------------------


def test_the_digest_holds_the_reference_never_the_value(store: str) -> None:
    secrets.store("api-token", VALUE)
    secrets.store("other", VALUE)
    ref = {"API_TOKEN": {"secret": "api-token"}}
    spec = parse_spec(with_env(ref))
    assert spec.task is not None
    first = prepare(["/bin/true"], None, spec.task.env, IDENTITY, {})
    assert first.env["API_TOKEN"] == VALUE and first.secrets == (VALUE,)
    assert VALUE not in repr(first)
    secrets.store("api-token", "another value")
    again = prepare(["/bin/true"], None, spec.task.env, IDENTITY, {})
    assert again.digest == first.digest  # a secret's value is not an input the ledger knows
    other = parse_spec(with_env({"API_TOKEN": {"secret": "other"}}))
    assert other.task is not None
    assert prepare(["/bin/true"], None, other.task.env, IDENTITY, {}).digest != first.digest
    clear = parse_spec(with_env({"API_TOKEN": VALUE}))
    assert clear.task is not None
    assert prepare(["/bin/true"], None, clear.task.env, IDENTITY, {}).digest != first.digest


def fed(data: bytes, values: list[str], cuts: tuple[int, ...] = ()) -> bytes:
    """``data`` through a :class:`secrets.SecretMask` of ``values``, in pieces cut at ``cuts``."""
    mask = secrets.SecretMask(values)
    return b"".join(mask.feed(data[a:b]) for a, b in pairwise([0, *cuts, len(data)])) + mask.end()


@pytest.mark.parametrize(
    ("data", "values", "masked"),
    [
        pytest.param(b"a abc ab", ["ab", "abc"], b"a *** ***", id="longest_first"),
        pytest.param(b"nothing here", ["", "zz"], b"nothing here", id="no_value_in_it"),
        pytest.param(b"pw=caf\xc3\xa9;", ["caf\u00e9"], b"pw=***;", id="utf8_value"),
        # A value read from bytes that are not UTF-8 (secret set from a Latin-1 file): Python holds
        # the byte 0xE9 as the surrogate U+DCE9, and the task receives (and prints) the byte itself.
        pytest.param(b"pw=caf\xe9; caf\xe9", ["caf\udce9"], b"pw=***; ***", id="latin1_value"),
        pytest.param(b"\xff\xfe\xff\xfe", ["\udcff\udcfe"], b"******", id="only_bytes_that_are_not_utf8"),
        pytest.param(b"xabcdefx", ["abcdef", "bc"], b"x***x", id="long_value_holds_a_short_one"),
        pytest.param(b"xabcdx", ["abcdef", "bc"], b"xa***dx", id="short_value_alone"),
        pytest.param(b"aaaaa", ["aa"], b"******a", id="overlapping_repeats"),
    ],
)
def test_a_value_is_masked_in_bytes_however_the_output_is_cut(data: bytes, values: list[str], masked: bytes) -> None:
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            assert fed(data, values, (i, j)) == masked, (i, j)


@given(
    value=st.binary(min_size=1, max_size=12).filter(lambda b: b"*" not in b),
    pieces=st.lists(st.one_of(st.binary(max_size=20), st.just(b"")), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
)
def test_no_value_survives_and_the_cuts_change_nothing(value: bytes, pieces: list[bytes], cuts: list[int]) -> None:
    """The value (any bytes, as the task received them) is put between random output; cut anywhere,
    the masked stream equals the stream masked whole, and holds the value nowhere."""
    data = value.join(p.replace(b"*", b"") for p in pieces) if pieces else value
    text = os.fsdecode(value)
    whole = fed(data, [text])
    assert value not in whole
    assert fed(data, [text], tuple(sorted(c for c in cuts if c <= len(data)))) == whole


# --- the stores ---------------------------------------------------------------------------


def test_a_stored_secret_is_found_listed_and_deleted(store: str) -> None:
    kept = secrets.store("db.password", VALUE)
    assert kept.value == store
    assert secrets.lookup("db.password") == VALUE
    (entry,) = secrets.entries()
    assert (entry.name, entry.store.value) == ("db.password", store)
    assert VALUE not in repr(entry)
    assert secrets.delete("db.password") == [kept]
    assert secrets.entries() == []
    with pytest.raises(secrets.SecretError, match=r"secret db\.password is not set on this host"):
        secrets.lookup("db.password")


def test_the_file_is_created_0600_in_a_0700_folder(in_file: None) -> None:
    secrets.store("a", VALUE)
    path = secrets.secrets_file()
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert json.loads(path.read_text()) == {"a": VALUE}


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_file_others_can_read_is_refused(in_file: None, mode: int) -> None:
    secrets.store("a", VALUE)
    path = secrets.secrets_file()
    path.chmod(mode)
    with pytest.raises(secrets.SecretError) as caught:
        secrets.lookup("a")
    assert str(caught.value) == (
        f"secret a cannot be read: {path} has mode {mode:04o}: others may read it, so it is not used; "
        f"run: chmod 600 {path}"
    )
    with pytest.raises(secrets.SecretError, match="others may read it"):
        secrets.store("b", VALUE)  # nor is one added to it


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_file_of_another_user_is_refused(in_file: None) -> None:
    secrets.store("a", VALUE)
    os.chown(secrets.secrets_file(), 65534, -1)
    with pytest.raises(secrets.SecretError, match="belongs to another user"):
        secrets.lookup("a")


def test_a_symlink_is_refused(in_file: None, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"a": VALUE}))
    target.chmod(0o600)
    path = secrets.secrets_file()
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    with pytest.raises(secrets.SecretError, match="is not a regular file"):
        secrets.lookup("a")


def test_no_usable_keyring_means_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with secret_store("file", tmp_path, monkeypatch):
        assert not secrets.keyring_usable()
        keyring.set_keyring(chainer.ChainerBackend())
        monkeypatch.setattr(chainer.ChainerBackend, "backends", [])
        assert not secrets.keyring_usable()
        keyring.set_keyring(MemoryKeyring())
        assert secrets.keyring_usable()
        keyring.set_keyring(fail.Keyring())
        assert secrets.store("a", VALUE) is secrets.Store.FILE


class BrokenKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("the collection is locked")


def test_a_failing_keyring_falls_back_to_the_file_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with secret_store("file", tmp_path, monkeypatch):
        secrets.store("a", VALUE)
        keyring.set_keyring(BrokenKeyring())
        assert secrets.lookup("a") == VALUE
        with pytest.raises(secrets.SecretError) as caught:
            secrets.lookup("b")
        assert str(caught.value) == (
            f"secret b is not set on this host (neither in the keyring (service tidemark) nor "
            f"{secrets.secrets_file()}); the keyring failed: the collection is locked"
        )


@pytest.mark.parametrize(
    ("name", "looks"),
    [
        ("API_TOKEN", True),
        ("GITHUB_TOKEN", True),
        ("DB_PASSWORD", True),
        ("db_passwd", True),
        ("DB_PWD", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("apiKey", True),
        ("APIKEY", True),
        ("client_secret", True),
        ("KEYBOARD_LAYOUT", False),
        ("TOKENIZER_MODEL", False),
        ("MONKEY_COUNT", False),
        ("PWD", False),
        ("REGION", False),
        ("HOME", False),
    ],
)
def test_which_names_look_like_credentials(name: str, looks: bool) -> None:
    assert secrets.looks_like_credential(name) is looks


# --- schedctl secret --------------------------------------------------------------------


def test_secret_set_list_and_delete(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = schedctl(capsys, "secret", "set", "api-token", stdin=VALUE + "\n")
    assert (status, err) == (0, "")
    assert out.startswith("stored secret api-token in ") and out.rstrip().endswith("{secret: api-token}")
    assert secrets.lookup("api-token") == VALUE  # one final line break dropped
    status, out, err = schedctl(capsys, "secret", "list")
    assert status == 0 and out.split()[:2] == ["api-token", store] and VALUE not in out
    status, out, _ = schedctl(capsys, "secret", "list", "--format", "json")
    assert [(s["name"], s["store"]) for s in json.loads(out)["secrets"]] == [("api-token", store)]
    assert schedctl(capsys, "secret", "delete", "api-token")[:2] == (0, f"deleted secret api-token from the {store}\n")
    assert schedctl(capsys, "secret", "list")[:2] == (0, "no secrets stored on this host\n")


def test_secret_set_reads_a_hidden_prompt_on_a_terminal(
    in_file: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("getpass.getpass", lambda prompt: asked.append(prompt) or VALUE)
    monkeypatch.setattr(sys, "stdin", Terminal())
    assert cli.main(["secret", "set", "api-token"]) == 0
    assert asked == ["value of api-token (not shown): "]
    assert secrets.lookup("api-token") == VALUE


def test_secret_set_file_keeps_it_in_the_file_even_with_a_keyring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with secret_store("keyring", tmp_path, monkeypatch):
        status, out, _ = schedctl(capsys, "secret", "set", "--file", "a", stdin=VALUE)
        assert status == 0 and str(secrets.secrets_file()) in out
        assert [e.store for e in secrets.entries()] == [secrets.Store.FILE]


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (["secret", "set", "api-token", VALUE], VALUE, "the value is never taken from the command line"),
        (["secret", "set", "api token"], VALUE, "'api token' is not a secret name"),
        (["secret", "set", "api-token"], "\n", "the secret api-token would be empty; give it a value"),
        (["secret", "delete", "nothing-here"], "", "no secret nothing-here is stored on this host"),
        (["secret"], "", "choose set, list or delete"),
    ],
)
def test_bad_secret_commands_are_one_line_and_change_nothing(
    in_file: None, capsys: pytest.CaptureFixture[str], argv: list[str], stdin: str, message: str
) -> None:
    status, out, err = schedctl(capsys, *argv, stdin=stdin)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert VALUE not in err
    assert secrets.entries() == []


def test_secret_list_refuses_a_file_others_can_read(in_file: None, capsys: pytest.CaptureFixture[str]) -> None:
    secrets.store("a", VALUE)
    secrets.secrets_file().chmod(0o644)
    status, out, err = schedctl(capsys, "secret", "list")
    assert (status, out) == (2, "")
    assert "has mode 0644" in err and len(err.strip().splitlines()) == 1


# --- the warning about credentials in clear --------------------------------------------


def test_validate_warns_about_a_credential_in_clear_without_refusing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "push.yaml"
    env = {"API_TOKEN": VALUE, "KEYBOARD_LAYOUT": "fr", "DB_PASSWORD": {"secret": "db"}, "EMPTY_KEY": ""}
    path.write_text(json.dumps(with_env(env)))
    status, out, err = schedctl(capsys, "validate", str(path))
    assert (status, out) == (0, "ok\n")
    assert err == (
        f"{path}: warning: task.env.API_TOKEN: looks like a credential and is in clear in the spec (and the "
        "ledger); keep it as a secret: schedctl secret set API_TOKEN then write API_TOKEN: {secret: API_TOKEN}\n"
    )
