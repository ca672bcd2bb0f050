"""Every option and positional of every `station` subcommand says what it is (a new one
without help fails here), and `--help` works for the command and each subcommand."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from station.cli import COMMANDS, build_parser
from tests.conftest import run_station


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """`parser` and every subparser under it, each with the words that select it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, (*path, name))


def commands() -> list[tuple[str, ...]]:
    return [path for path, _ in parsers(build_parser())]


def test_every_subcommand_module_is_walked() -> None:
    walked = {path[0] for path in commands() if path}
    assert walked == {name.replace("_", "-") for name in COMMANDS}


@pytest.mark.parametrize("path", commands(), ids=lambda p: " ".join(p) or "station")
def test_every_argument_has_help(path: tuple[str, ...]) -> None:
    parser = dict(parsers(build_parser()))[path]
    actions: list[argparse.Action] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            actions += action._choices_actions  # each subcommand's line in the list
        else:
            actions.append(action)
    missing = [
        "/".join(action.option_strings) or action.metavar or action.dest
        for action in actions
        if not action.help or action.help == argparse.SUPPRESS or not action.help.strip()
    ]
    assert not missing, f"station {' '.join(path)}: no help for {', '.join(missing)}"


@pytest.mark.parametrize("path", commands(), ids=lambda p: " ".join(p) or "station")
def test_a_default_is_named_in_the_help(path: tuple[str, ...]) -> None:
    """An option with a default value (not a flag's False, not None = 'not given') says
    it in its help, so the user need not read the code."""
    parser = dict(parsers(build_parser()))[path]
    silent = [
        f"{'/'.join(action.option_strings) or action.dest} (default {action.default!r})"
        for action in parser._actions
        if not any(action.default is v for v in (None, False, argparse.SUPPRESS))
        and not isinstance(action, argparse._SubParsersAction)
        and _shown(action.default) not in (action.help or "")
        and "%(default)" not in (action.help or "")
    ]
    assert not silent, f"station {' '.join(path)}: help does not name the default of {silent}"


def _shown(default: object) -> str:
    """How a default reads in a help text: a path by its name, a tuple without brackets."""
    if isinstance(default, tuple | list):
        return ",".join(str(v) for v in default)
    return str(default)


@pytest.mark.parametrize("path", commands(), ids=lambda p: " ".join(p) or "station")
def test_help_exits_0(path: tuple[str, ...]) -> None:
    out = run_station(*path, "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(b"usage: station"), out.stdout[:200]


@pytest.mark.parametrize(
    "argv",
    [
        ["scan", "--source", "x.avi", "--barcode", "text", "--min-confidence", "1.5"],
        ["calibrate", "report", "--labelled", "x", "--min-confidence", "-0.1"],
        ["calibrate", "camera", "--reference", "x", "--out", "m.npz", "--min-confidence", "nan"],
        ["calibrate", "camera", "--reference", "x", "--out", "m.npz", "--min-confidence", "high"],
    ],
)
def test_a_confidence_outside_0_to_1_is_a_usage_error(argv: list[str]) -> None:
    out = run_station(*argv)
    assert out.returncode == 2 and b"--min-confidence" in out.stderr, out.stderr


def test_the_commands_that_take_a_game_share_its_options() -> None:
    """--game and --burn come from one place (`add_game_options`): the same choices and
    the same words in every command that takes them."""
    shown: dict[str, set[tuple[object, ...]]] = {"--game": set(), "--burn": set()}
    takers = set()
    for path, parser in parsers(build_parser()):
        for action in parser._actions:
            for flag in set(action.option_strings) & set(shown):
                shown[flag].add((tuple(action.choices or ()), action.help))
                takers.add(" ".join(path))
    assert {"simulate", "replay", "sim-shoe", "protect"} <= takers
    assert all(len(forms) == 1 for forms in shown.values()), shown


def test_an_option_reads_the_same_in_every_command() -> None:
    """One option, one metavar across the commands (`--decks N` everywhere, not `DECKS`
    in one of them); counts are N, files FILE (not PATH)."""
    seen: dict[str, dict[str, str]] = {}
    for path, parser in parsers(build_parser()):
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0 or action.choices:
                continue
            metavar = str(action.metavar or action.dest.upper())
            seen.setdefault(action.option_strings[-1], {})[" ".join(path)] = metavar
    differ = {option: used for option, used in seen.items() if len(set(used.values())) > 1}
    assert not differ, differ
    for option in ("--decks", "--shoes", "--rounds"):
        assert set(seen[option].values()) == {"N"}, (option, seen[option])
    paths = {o: u for o, u in seen.items() if any(m.endswith("PATH") for m in u.values())}
    assert not paths, paths
