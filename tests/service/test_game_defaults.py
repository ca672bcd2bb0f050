"""`[table]` keys whose default is the game's: the example config writes none of them out,
so switching its game switches them too; a config that pins one to another value than
its game's default is said at start, in one line."""

from __future__ import annotations

import contextlib
import signal
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from station.core.games import GAMES
from station.core.paytables import GAME_PAYTABLES
from station.live.config import GAME_KEYS, TableConfig, load
from tests.conftest import spawn_run
from tests.netkit import free_port

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "config" / "example.toml"


def example_for(game: str, tmp_path: Path) -> Path:
    """A copy of the example config whose one change is the game."""
    text = EXAMPLE.read_text()
    assert text.count('\ngame = "punto_banco"\n') == 1
    path = tmp_path / "station.toml"
    path.write_text(text.replace('\ngame = "punto_banco"\n', f'\ngame = "{game}"\n'))
    return path


def test_the_example_writes_no_value_that_depends_on_the_game() -> None:
    table = tomllib.loads(EXAMPLE.read_text())["table"]
    assert table["game"] == "punto_banco"
    assert not set(GAME_KEYS) & set(table), "a game's default written out in the example"
    # ... but shows each of them, commented out, under a line saying where it comes from
    text = EXAMPLE.read_text()
    for key in GAME_KEYS:
        assert f"\n# {key} = " in text
    assert "the default comes from the game" in text


@pytest.mark.parametrize("name", list(GAMES))
def test_switching_the_example_to_a_game_gives_that_games_defaults(
    name: str, tmp_path: Path
) -> None:
    table = load(example_for(name, tmp_path)).table
    game = GAMES[name]
    assert table.game == name
    assert (table.decks, table.burn, table.cut_policy) == (game.decks, game.burn, game.cut_policy)
    assert table.paytable == GAME_PAYTABLES[name]
    assert table.load_paytable().game == name
    assert table.pinned() == {} and table.pinned_notice() is None
    dealt = table.new_table()
    assert (dealt.game.name, dealt.decks, dealt.burn, dealt.cut_policy) == (
        name,
        game.decks,
        game.burn,
        game.cut_policy,
    )


def test_a_value_pinned_to_the_games_default_is_no_news() -> None:
    assert TableConfig(game="chemin_de_fer", decks=6, burn="none").pinned_notice() is None
    assert TableConfig(decks=8, paytable="traditional").pinned_notice() is None


def test_a_value_pinned_against_the_games_default_is_said_in_one_line() -> None:
    assert TableConfig(game="chemin_de_fer", decks=8).pinned_notice() == (
        "table: decks = 8 pinned by the config; chemin de fer's default is 6"
    )
    table = TableConfig(game="baccarat_banque", decks=8, burn="reveal", cut_policy="one_more")
    assert table.pinned() == {
        "decks": (8, 6),
        "burn": ("reveal", "none"),
        "cut_policy": ("one_more", "stop"),
    }
    assert table.pinned_notice() == (
        'table: decks = 8, burn = "reveal", cut_policy = "one_more" pinned by the config; '
        'baccarat banque\'s defaults are 6, "none", "stop"'
    )
    assert TableConfig(paytable="no_commission").pinned_notice() == (
        'table: paytable = "no_commission" pinned by the config; punto banco\'s default is '
        '"traditional"'
    )


@pytest.mark.server
def test_station_run_says_at_start_what_the_config_pins(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "station.toml"
    config.write_text(f"""
[table]
game = "chemin_de_fer"
decks = 8
[journal]
path = "{tmp_path / "j.db"}"
[api]
bind = "127.0.0.1:{port}"
public_read = true
""")
    proc = spawn_run(config, log_level="info")
    try:
        for _ in range(300):  # until it listens and has replayed its journal
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/api/state").status_code == 200:
                    break
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    notices = [line for line in err.splitlines() if "pinned by the config" in line]
    assert len(notices) == 1, err
    assert notices[0].endswith(
        "INFO station.run: table: decks = 8 pinned by the config; chemin de fer's default is 6"
    )
