"""`--config` for the commands that set up a table: the `[table]` section fills the flags
that are not given; a flag on the command line wins; a bad config exits 2."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import CliResult, run_station

# A one-deck table: the second ace of spades is foreign. Ungated: the card after the burn
# opens round 1 by itself.
EVENTS = b'{"type":"shoe"}\n{"type":"card","card":"AS"}\n{"type":"card","card":"AS"}\n'


def replay(*args: str) -> CliResult:
    return run_station("replay", *args, stdin=EVENTS)


def errors(out: bytes) -> list[str | None]:
    return [json.loads(line)["error"] for line in out.splitlines()]


def test_replay_takes_the_table_from_the_config(tmp_path: Path) -> None:
    config = tmp_path / "station.toml"
    config.write_text('[table]\nid = "t9"\ndecks = 1\ngated = false\n')
    assert errors(replay("--config", str(config)).stdout) == [None, None, "EXCESS_COPIES"]
    # The command line wins over the config.
    assert errors(replay("--config", str(config), "--decks", "2").stdout) == [None, None, None]
    assert errors(replay().stdout) == [None, None, None]


def test_a_bad_config_exits_2_and_names_the_key(tmp_path: Path) -> None:
    config = tmp_path / "station.toml"
    config.write_text("[table]\ndecks = 0\n")
    out = replay("--config", str(config))
    assert out.returncode == 2 and b"decks" in out.stderr and out.stdout == b""
    missing = replay("--config", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and missing.stderr


def test_simulate_takes_the_table_from_the_config(tmp_path: Path) -> None:
    config = tmp_path / "station.toml"
    config.write_text("[table]\ngated = false\n")
    out = run_station("simulate", "--config", str(config), "--seed", "3", "--rounds", "2")
    assert out.returncode == 0, out.stderr
    types = [json.loads(line)["type"] for line in out.stdout.splitlines()]
    assert "close_bets" not in types and types.count("shoe") == 1
