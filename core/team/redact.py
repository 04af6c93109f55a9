"""Keeping database passwords out of what Tidemark says.

:func:`mask_urls` is applied to every message that could carry a database URL:
the ledger's own errors, and everything ``schedctl`` writes to stderr.
"""

from __future__ import annotations

import re

MASK = "***"

#: ``scheme://user:PASSWORD@``: the password runs to the last ``@`` of the word,
#: so one written with a bare ``@`` in it is hidden whole (hiding too much is safe).
_USERINFO = re.compile(r"(?P<head>(?:\b[A-Za-z][A-Za-z0-9+.-]*)?://[^\s:/@'\"]*:)(?P<secret>[^\s'\"]*)(?=@)")
#: ``?password=...`` or ``&password=...`` in a URL's query (libpq accepts it there).
#: A colon just before a space ends the URL (``URL: message``), not the password.
_QUERY = re.compile(r"(?P<head>[?&](?:password|passwd|pwd)=)(?P<secret>[^&\s'\"]*?)(?=&|:?[\s'\"]|$)", re.IGNORECASE)


def mask_urls(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***``."""
    text = _USERINFO.sub(lambda m: m["head"] + MASK, text)
    return _QUERY.sub(lambda m: m["head"] + MASK, text)
