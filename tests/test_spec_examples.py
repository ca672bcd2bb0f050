"""The spec's worked examples, through the Table and through the real `station replay`."""

from __future__ import annotations

from typing import Any

import pytest

from station.core.table import Table
from tests.spec import ROOT, check_through_replay, check_through_the_table, examples, examples_file

EXAMPLES = examples()


def replay_args(options: dict[str, Any]) -> list[str]:
    args = [
        "--decks",
        str(options.get("decks", 8)),
        "--cut-policy",
        options.get("cut_policy", "one_more"),
    ]
    return [*args, "--ungated"] if options.get("gated") is False else args


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_example_through_the_table(example: dict[str, Any]) -> None:
    options = example["options"]
    table = Table(
        decks=options.get("decks", 8),
        gated=options.get("gated", True),
        cut_policy=options.get("cut_policy", "one_more"),
    )
    check_through_the_table(example, table)


def test_all_examples_through_the_replay_command() -> None:
    check_through_replay(EXAMPLES, replay_args)


def test_the_vendored_copy_is_the_spec_when_the_spec_is_here() -> None:
    """tests/data holds a copy for clones without shared/; it must not drift from the spec."""
    here = examples_file()
    vendored = ROOT / "tests" / "data" / "spec-examples.jsonl"
    if here == vendored:
        pytest.skip("shared/spec is not beside this checkout; only the copy is available")
    assert here.read_bytes() == vendored.read_bytes(), "refresh tests/data/spec-examples.jsonl"
