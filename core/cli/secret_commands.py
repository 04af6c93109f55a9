"""``schedctl secret``: keep the values that task variables written ``{secret: NAME}`` receive
(core.team.secrets). A value is read from a hidden prompt on a terminal, else from standard input;
never from the command line, where other users' ``ps`` would see it. Nothing prints a value."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from core.cli.common import EXIT_OK, UsageError
from core.cli.output import out

if TYPE_CHECKING:
    import argparse


def _read_value(name: str) -> str:
    """The secret's value: typed at a hidden prompt on a terminal, else standard input less one final line break.

    Standard input is read as bytes, whatever the locale: bytes that are not UTF-8 are kept as
    they are (:func:`os.fsdecode`), and the task receives them so (masked as such in its output)."""
    if sys.stdin is not None and sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"value of {name} (not shown): ")
    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        text = os.fsdecode(stream.read())
    else:  # a text stream with no bytes beneath it
        text = sys.stdin.read() if sys.stdin is not None else ""
    return text.removesuffix("\n").removesuffix("\r")


def cmd_secret_set(args: argparse.Namespace) -> int:
    """Store a secret in the keyring (or the file with --file)."""
    from core.team.secrets import SecretError, Store, check_name, secrets_file, store

    if args.value is not None:
        raise UsageError(
            "the value is never taken from the command line (other users' ps would show it): "
            "type it at the prompt, or give it on standard input"
        )
    try:
        check_name(args.name)
        where = Store.FILE if args.file else None
        kept = store(args.name, _read_value(args.name), where=where)
    except SecretError as exc:
        raise UsageError(str(exc)) from None
    place = f"the file {secrets_file()}" if kept is Store.FILE else "the OS keyring (service tidemark)"
    out(f"stored secret {args.name} in {place}; write it in a spec as {{secret: {args.name}}}")
    return EXIT_OK


def cmd_secret_list(args: argparse.Namespace) -> int:
    """Every secret's name and where it is kept; never a value."""
    import json

    from core.team.secrets import SecretError, entries

    try:
        found = entries()
    except SecretError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        rows = [{"name": e.name, "store": e.store.value, "where": e.where} for e in found]
        out(json.dumps({"secrets": rows}, indent=2))
        return EXIT_OK
    if not found:
        out("no secrets stored on this host")
        return EXIT_OK
    width = max(len(e.name) for e in found)
    for entry in found:
        out(f"{entry.name:<{width}}  {entry.store.value:<7}  {entry.where}")
    return EXIT_OK


def cmd_secret_delete(args: argparse.Namespace) -> int:
    """Remove a secret from the keyring and the file."""
    from core.team.secrets import SecretError, delete

    try:
        removed = delete(args.name)
    except SecretError as exc:
        raise UsageError(str(exc)) from None
    if not removed:
        raise UsageError(f"no secret {args.name} is stored on this host")
    out(f"deleted secret {args.name} from the " + " and the ".join(s.value for s in removed))
    return EXIT_OK
