"""schedctl's parser, walked command by command: every command of the table is reachable and
runs what the table says, every argument explains itself, and no two arguments collide."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cli import UsageError, build_parser
from core.cli.parser import COMMANDS, Command, Later


def _parsers(parser: argparse.ArgumentParser, prog: str = "schedctl") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser under ``parser``, by its command line (``schedctl engine run``), ``parser`` first."""
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{prog} {name}")


def _commands(commands: tuple[Command, ...] = COMMANDS, prog: str = "schedctl") -> Iterator[tuple[str, Command]]:
    for command in commands:
        yield f"{prog} {command.name}", command
        yield from _commands(command.subcommands, f"{prog} {command.name}")


PARSERS = dict(_parsers(build_parser()))
TABLE = dict(_commands())


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._SubParsersAction | argparse._HelpAction)]


def _smallest_line(prog: str, parser: argparse.ArgumentParser) -> list[str]:
    """``prog``'s arguments with each required one given once."""
    line = prog.split()[1:]
    for action in _arguments(parser):
        if not action.option_strings:
            line.append("1")
        elif action.required:
            line += [action.option_strings[0], str(next(iter(action.choices))) if action.choices else "1"]
    for group in parser._mutually_exclusive_groups:
        if group.required:
            line.append(group._group_actions[0].option_strings[0])
    return line


def test_every_command_of_the_table_is_a_command_line_and_no_other() -> None:
    assert set(PARSERS) - {"schedctl"} == set(TABLE)


@pytest.mark.parametrize("prog", sorted(TABLE))
def test_each_command_runs_what_the_table_says(prog: str) -> None:
    command = TABLE[prog]
    args = build_parser().parse_args(_smallest_line(prog, PARSERS[prog]))
    assert PARSERS[prog].prog == prog
    if command.subcommands:
        # A group alone names every subcommand and where to read about them.
        with pytest.raises(UsageError) as raised:
            args.func(args)
        for sub in command.subcommands:
            assert sub.name in str(raised.value)
        assert f"(see {prog} --help)" in str(raised.value)
    else:
        assert args.func is command.run
    assert getattr(args, "where", None) == (prog if command.names_itself else None)


def _help(parser: argparse.ArgumentParser, line: list[str]) -> str:
    """What ``line --help`` prints."""
    with pytest.raises(SystemExit), contextlib.redirect_stdout(io.StringIO()) as printed:
        parser.parse_args([*line, "--help"])
    return printed.getvalue()


@pytest.mark.parametrize("prog", sorted(TABLE))
def test_a_parser_built_for_its_line_reads_it_as_the_whole_parser_does(prog: str) -> None:
    """``main`` gives arguments only to the command its line names: the same namespace, the same
    help for that command and for schedctl itself, and the other commands still there by name."""
    line = _smallest_line(prog, PARSERS[prog])
    narrow = build_parser(line)
    read, whole = vars(narrow.parse_args(line)), vars(build_parser().parse_args(line))
    run, whole_run = read.pop("func"), whole.pop("func")
    assert read == whole
    # A group's own function is made per parser (it names the subcommands); a command's is the table's.
    assert run == whole_run if isinstance(whole_run, Later) else run.__qualname__ == whole_run.__qualname__
    words = prog.split()[1:]
    assert _help(narrow, words) == _help(build_parser(), words)
    assert _help(build_parser(line), []) == _help(build_parser(), [])
    assert set(dict(_parsers(narrow))) >= {f"schedctl {c.name}" for c in COMMANDS}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param(["valdate", "x.yaml"], "invalid choice: 'valdate'", id="misspelt_command"),
        pytest.param(["validate"], "the following arguments are required: SPEC", id="missing_argument"),
        pytest.param(["--version", "validate"], None, id="option_first"),
    ],
)
def test_a_line_that_names_no_command_first_gets_the_whole_parser(line: list[str], message: str | None) -> None:
    narrow, whole = build_parser(line), build_parser()
    if message is None:
        assert len(list(_parsers(narrow))) == len(list(_parsers(whole)))
        return
    with pytest.raises(UsageError) as narrow_error:
        narrow.parse_args(line)
    with pytest.raises(UsageError) as whole_error:
        whole.parse_args(line)
    assert message in str(narrow_error.value)
    assert str(narrow_error.value) == str(whole_error.value)


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_every_argument_says_what_it_is(prog: str) -> None:
    parser = PARSERS[prog]
    without = {a.option_strings[0] if a.option_strings else a.dest for a in _arguments(parser) if not a.help}
    assert without == set()
    for action in parser._actions:
        if action.help:
            # The style of argparse's own "-h": lower case, no full stop.
            assert action.help[0].islower() or action.help[0] in "$-", action.help
            assert not action.help.endswith("."), action.help
        if action.default not in (None, False, argparse.SUPPRESS) and action.option_strings:
            assert "default" in (action.help or ""), f"{action.option_strings[0]} hides its default"
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
            assert action.metavar and str(action.metavar).isupper(), action.dest


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_no_two_arguments_collide(prog: str) -> None:
    parser = PARSERS[prog]
    names = [name for action in parser._actions for name in action.option_strings]
    assert len(names) == len(set(names))
    # Only the choices of one exclusive group write the same destination (reconcile's decision).
    by_dest: dict[str, list[argparse.Action]] = {}
    for action in _arguments(parser):
        by_dest.setdefault(action.dest, []).append(action)
    groups = [set(map(id, g._group_actions)) for g in parser._mutually_exclusive_groups]
    for dest, actions in by_dest.items():
        if len(actions) > 1:
            assert any({id(a) for a in actions} <= group for group in groups), dest


@pytest.mark.parametrize("prog", sorted(TABLE))
def test_commands_are_listed_in_a_few_words_and_described_in_sentences(prog: str) -> None:
    command = TABLE[prog]
    assert command.help[0].islower() and not command.help.endswith("."), command.help
    if command.description:
        assert command.description[0].isupper() and command.description.endswith("."), command.description


def test_every_command_that_opens_the_ledger_names_itself() -> None:
    taking_db = {prog for prog, parser in PARSERS.items() if any("--db" in a.option_strings for a in parser._actions)}
    assert taking_db and all(TABLE[prog].names_itself for prog in taking_db)


_TIME_FLAGS = ("--from", "--to", "--until", "--since")


def _time_flags(parser: argparse.ArgumentParser) -> list[str]:
    return [name for a in parser._actions for name in a.option_strings if name in _TIME_FLAGS]


@pytest.mark.parametrize("prog", sorted(PARSERS))
def test_each_command_says_what_it_does_and_explains_only_the_times_it_takes(prog: str) -> None:
    parser = PARSERS[prog]
    assert parser.description and parser.description.strip().endswith("."), prog
    flags = _time_flags(parser)
    footer = parser.epilog or ""
    if not flags:
        assert "Times (" not in footer, prog
        return
    named = footer.split("Times (", 1)[1].split(")", 1)[0].split(", ")
    assert set(flags) <= set(named) <= {*flags, "--now"}, prog


def _schedctl(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    return subprocess.run(
        [sys.executable, "-m", "core.cli", *argv], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_version_prints_the_installed_tidemark(tmp_path: Path) -> None:
    from core.version import tidemark_version

    done = _schedctl(tmp_path, "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"schedctl (Tidemark) {tidemark_version()}\n", "")


@pytest.mark.parametrize("given", [["--now"], ["--now", "2026-03-08T07:00:00Z"]], ids=["bare", "with_time"])
def test_install_service_refuses_now_instead_of_ignoring_it(tmp_path: Path, given: list[str]) -> None:
    done = _schedctl(tmp_path, "engine", "install-service", "--db", str(tmp_path / "t.db"), *given)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "schedctl engine install-service: --now is not taken here: the service is always enabled and started "
        "at once (as systemctl enable --now does); nothing was installed"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == []
