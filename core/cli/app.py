"""``main``: parse the command line, run the command, and turn what it raised into an exit status."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Sequence

from core.cli.common import EXIT_INTERNAL, EXIT_INVALID, EXIT_OK, Invalid, UsageError, problem_lines
from core.cli.output import err as _say
from core.cli.parser import build_parser
from core.render.terminal import terminal_safe


def _internal_error(exc: BaseException) -> int:
    import traceback  # only for a bug: a command that works never loads it

    from core.team.redact import mask_urls

    _say(f"schedctl: internal error: {type(exc).__name__}: {exc} (this is a bug; please report it)")
    sys.stderr.write(terminal_safe(mask_urls("".join(traceback.format_exception(exc)))))
    return EXIT_INTERNAL


def _silence_stdout() -> None:
    """After a closed pipe (``schedctl preview ... | head``), send what is left nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass


#: The commands that read a spec and end: run as the program, they collect young objects seldom
#: (:data:`SPEC_GEN0_THRESHOLD`) for as long as they run.
SPEC_COMMANDS = frozenset({"validate", "preview", "explain", "schema", "demos"})
#: The young generation's threshold of a spec command run as the program (Python's default is
#: 700). What its imports make (pydantic's and the core's modules, classes and functions) lives
#: until the process ends, so each collection while they load walks objects that all survive:
#: about 55 collections, 7 ms of a 150 ms ``validate``. Rows a preview writes are freed as they
#: go, so the collector still runs, about once every 50,000 objects held.
SPEC_GEN0_THRESHOLD = 50_000
#: pydantic's switch for its plugins (docs.pydantic.dev, "Plugins"). Tidemark uses none, so a spec
#: command run as the program turns them off unless the variable is set already: otherwise pydantic
#: asks importlib.metadata for the ``pydantic`` entry points at the first model, a scan of every
#: installed distribution (docs/decisions.md, "pydantic plugins in the spec commands").
PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``schedctl`` with ``argv`` (default: the process arguments); returns the exit status.

    Run as the program (``argv`` None), a spec command collects young objects seldom
    (:data:`SPEC_GEN0_THRESHOLD`; any other command keeps Python's thresholds) and turns pydantic's
    plugins off unless told otherwise (:data:`PLUGINS_VARIABLE`), and it hands every
    object it holds to the garbage collector's permanent generation before it returns: the
    process ends next, and the collections at the interpreter's exit would otherwise walk all
    that the imports made (a tenth of a small command's time) only for the process to give the
    memory back. Called with a line (the tests, the window), it leaves the collector alone."""
    if argv is not None:
        return _run(argv)
    thresholds = gc.get_threshold()
    gc.set_threshold(SPEC_GEN0_THRESHOLD, *thresholds[1:])
    try:
        return _run(argv, thresholds)
    finally:
        gc.freeze()


def _run(argv: Sequence[str] | None, thresholds: tuple[int, ...] | None = None) -> int:
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        _say(exc)
        return EXIT_INVALID
    except SystemExit as exc:  # --help and friends
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    if thresholds is not None:
        if args.command not in SPEC_COMMANDS:
            gc.set_threshold(*thresholds)
        else:
            os.environ.setdefault(PLUGINS_VARIABLE, "__all__")
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        _say("schedctl: choose a command (see schedctl --help)")
        return EXIT_INVALID
    where = getattr(args, "where", None) or f"schedctl {args.command}"
    try:
        return func(args)
    except Invalid as exc:
        for line in exc.lines:
            _say(line)
        return EXIT_INVALID
    except UsageError as exc:
        _say(f"{where}: {exc}")
        return EXIT_INVALID
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        _say("schedctl: interrupted")
        return EXIT_INTERNAL
    except Exception as exc:
        from core.errors import UserError

        if isinstance(exc, UserError):
            if getattr(args, "where", None) is not None:
                # Ledger errors name the ledger, the schedule or the occurrence themselves.
                lines = [f"{where}: {line}" for line in str(exc).splitlines() or [type(exc).__name__]]
            else:
                lines = problem_lines(getattr(args, "spec", "schedctl"), exc)
            for line in lines:
                _say(line)
            return EXIT_INVALID
        return _internal_error(exc)
