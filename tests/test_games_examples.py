"""The cercle games' worked examples (shared/spec/games-examples.jsonl), through the Table
and through the real `station replay` with the game's flags."""

from __future__ import annotations

from typing import Any

import pytest

from station.core.table import Table
from tests.spec import (
    ROOT,
    check_through_replay,
    check_through_the_table,
    games_examples,
    games_examples_file,
)

EXAMPLES = games_examples()


def table_for(options: dict[str, Any]) -> Table:
    """A table set as the example says; what it leaves out is the game's default."""
    return Table(
        game=options.get("game", "punto_banco"),
        decks=options.get("decks"),
        gated=options.get("gated", True),
        cut_policy=options.get("cut_policy"),
        burn=options.get("burn"),
    )


def replay_args(options: dict[str, Any]) -> list[str]:
    """The same settings as `station replay` flags (absent: the command's defaults)."""
    args = ["--game", options["game"]] if "game" in options else []
    for key, flag in (("decks", "--decks"), ("cut_policy", "--cut-policy"), ("burn", "--burn")):
        if key in options:
            args += [flag, str(options[key])]
    return [*args, "--ungated"] if options.get("gated") is False else args


def test_there_are_examples_of_every_game() -> None:
    games = {e["options"].get("game", "punto_banco") for e in EXAMPLES}
    assert games == {"punto_banco", "chemin_de_fer", "baccarat_banque"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_example_through_the_table(example: dict[str, Any]) -> None:
    check_through_the_table(example, table_for(example["options"]))


def test_all_examples_through_the_replay_command() -> None:
    check_through_replay(EXAMPLES, replay_args)


def test_the_vendored_copy_is_the_spec_when_the_spec_is_here() -> None:
    """tests/data holds a copy for clones without shared/; it must not drift from the spec."""
    here = games_examples_file()
    vendored = ROOT / "tests" / "data" / "games-examples.jsonl"
    if here == vendored:
        pytest.skip("shared/spec is not beside this checkout; only the copy is available")
    assert here.read_bytes() == vendored.read_bytes(), "refresh tests/data/games-examples.jsonl"
