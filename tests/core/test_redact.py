"""``mask_urls`` hides the password of every URL in a message, wherever the URL stands."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.team.redact import mask_urls


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        pytest.param("mysql://u:PW@h/x: unsupported", "mysql://u:***@h/x: unsupported", id="userinfo"),
        pytest.param("postgresql://u:p@PW@h/x y", "postgresql://u:***@h/x y", id="at_in_password"),
        pytest.param("postgresql://:PW@h/x", "postgresql://:***@h/x", id="no_user"),
        pytest.param("'sqlite://u:PW@/x.db'", "'sqlite://u:***@/x.db'", id="quoted"),
        pytest.param("://u:PW@h", "://u:***@h", id="no_scheme"),
        pytest.param(
            "a postgresql://u@h/d?password=PW: b", "a postgresql://u@h/d?password=***: b", id="query_then_colon"
        ),
        pytest.param("h/d?sslmode=x&PASSWORD=PW&a=1", "h/d?sslmode=x&PASSWORD=***&a=1", id="query_middle"),
        pytest.param("postgresql://u@h:5432/d is fine", "postgresql://u@h:5432/d is fine", id="no_password"),
        pytest.param("http://h:8080/x", "http://h:8080/x", id="port_is_no_password"),
        pytest.param("u:***@h", "u:***@h", id="no_url"),
    ],
)
def test_mask_urls(text: str, masked: str) -> None:
    assert mask_urls(text) == masked


_PASSWORD = st.text(st.characters(blacklist_categories=("Z", "C"), blacklist_characters="'\"/&"), min_size=1).filter(
    lambda p: not p.endswith(":")  # a colon before a space ends a URL in a message (``URL: what went wrong``)
)


@given(
    password=_PASSWORD, before=st.sampled_from(["", "x ", "(", "'", "at "]), after=st.sampled_from(["", ": y", " z"])
)
def test_a_password_in_a_url_never_survives(password: str, before: str, after: str) -> None:
    for url in ("postgresql+psycopg://user:{}@host:5432/db", "postgresql://u@h/d?sslmode=a&password={}"):
        assert mask_urls(before + url.format(password) + after) == before + url.format("***") + after
