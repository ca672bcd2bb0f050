"""A stream that says its table: `station journal export` writes the journal's table
settings into its first line (`journal.table`), and `station replay` plays the stream at
that table, or refuses it when --game or --config names another game. And the export
never replaces a file that is there, as `backup` does not."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from station.core.table import Table
from station.live.journal import Journal
from station.live.replay import first_line
from station.shared.rows import Pending, notice
from tests.conftest import run_station


def banque_journal(path: Path) -> list[dict[str, object]]:
    """A baccarat banque journal of one simulated shoe (decided by the core, as the writer
    does, with a notice among the rows); returns the events."""
    out = run_station("simulate", "--game", "baccarat_banque", "--seed", "3", "--rounds", "12")
    assert out.returncode == 0, out.stderr
    events = [orjson.loads(line) for line in out.stdout.splitlines()]
    table = Table(game="baccarat_banque")
    with Journal(path) as journal:
        journal.start("banque-1", table)
        rows = [notice("reader", "sim", "sim dealer started")]
        rows += [Pending("api", "test", event, table.apply(event)) for event in events]
        journal.append(rows)  # one commit
    return events


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("banque") / "j.db"
    banque_journal(path)
    return path


def export(journal: Path, *more: str) -> bytes:
    out = run_station("journal", "export", "--journal", str(journal), *more)
    assert out.returncode == 0, out.stderr
    return out.stdout


def verdicts(lines: bytes) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in lines.splitlines()]


def test_the_export_says_its_table_on_its_first_line_only(journal: Path) -> None:
    lines = verdicts(export(journal))
    assert lines[0]["journal"]["table"] == {  # type: ignore[index]
        "id": "banque-1",
        "game": "baccarat_banque",
        "decks": 6,
        "gated": True,
        "cut_policy": "stop",
        "burn": "none",
    }
    assert all("table" not in line["journal"] for line in lines[1:])  # type: ignore[operator]


def test_replay_plays_an_exported_stream_at_its_own_game(journal: Path) -> None:
    """Without --game: the banque verdicts the journal holds, not punto banco's nonsense."""
    stream = export(journal)
    played = run_station("replay", stdin=stream)
    assert played.returncode == 0, played.stderr
    rows = verdicts(played.stdout)
    held = [line["verdict"] for line in verdicts(stream)]
    assert [{k: v for k, v in r.items() if k != "seq"} for r in rows] == held
    assert any(r["role"] == "T1.1" for r in rows)
    named = run_station("replay", "--game", "baccarat_banque", stdin=stream)
    assert named.stdout == played.stdout


def test_the_options_given_win_over_the_recorded_ones(journal: Path) -> None:
    stream = export(journal)
    one_deck = run_station("replay", "--decks", "1", stdin=stream)
    assert one_deck.returncode == 0
    assert b"EXCESS_COPIES" in one_deck.stdout  # six decks' cards in a one-deck shoe


@pytest.mark.parametrize(
    ("options", "named_by"),
    [(["--game", "punto_banco"], "--game"), (["--config", "CONFIG"], "[table] game of --config")],
)
def test_a_stream_of_another_game_is_refused(
    tmp_path: Path, journal: Path, options: list[str], named_by: str
) -> None:
    stream = export(journal)
    config = tmp_path / "station.toml"
    config.write_text('[table]\ngame = "chemin_de_fer"\n')
    options = [str(config) if o == "CONFIG" else o for o in options]
    game = "punto_banco" if named_by == "--game" else "chemin_de_fer"
    refused = run_station("replay", *options, stdin=stream)
    assert refused.returncode == 2 and refused.stdout == b""
    assert refused.stderr.decode() == (
        "station replay: the stream is the record of a baccarat_banque table (its first "
        f"line's journal.table says so), but {named_by} says {game}: the verdicts would be "
        f"{game}'s; give --game baccarat_banque, or neither --game nor --config to play "
        "the stream's own table\n"
    )


def test_a_stream_that_says_no_table_is_played_as_before() -> None:
    """Hand-written streams (and older exports) name no table: punto banco, the defaults."""
    stream = b'\n{"type": "shoe"}\n{"type": "card", "card": "2H"}\n'
    played = run_station("replay", stdin=stream)
    assert [r["role"] for r in verdicts(played.stdout)] == [None, "burn_reveal"]


def test_a_table_no_game_has_is_refused() -> None:
    stream = b'{"type": "shoe", "journal": {"table": {"game": "bridge", "decks": 6}}}\n'
    refused = run_station("replay", stdin=stream)
    assert refused.returncode == 2
    assert refused.stderr.decode() == (
        "station replay: the stream's first line names no table: its journal.table game "
        "'bridge' is none of punto_banco, chemin_de_fer, baccarat_banque\n"
    )


def test_the_first_line_is_found_without_consuming_the_stream() -> None:
    chunks = [b'\n  \n{"ty', b'pe": "shoe"}\n{"type"', b': "cut"}\n']
    line, rest = first_line(iter(chunks))
    assert line == b'{"type": "shoe"}'
    assert b"".join(rest) == b"".join(chunks)
    assert first_line(iter([b"\n", b"  "]))[0] == b""


def test_export_refuses_a_file_that_is_there(tmp_path: Path, journal: Path) -> None:
    there = tmp_path / "export.jsonl"
    there.write_text("keep me\n")
    refused = run_station("journal", "export", "--journal", str(journal), "-o", str(there))
    assert refused.returncode == 2
    assert refused.stderr.decode() == (
        f"station journal export: {there} exists already; give a new file for the export\n"
    )
    assert there.read_text() == "keep me\n"
    fresh = tmp_path / "new.jsonl"
    written = run_station("journal", "export", "--journal", str(journal), "-o", str(fresh))
    assert written.returncode == 0
    assert fresh.read_bytes() == export(journal)


def test_a_simulated_stream_says_its_table_and_replay_plays_it_there() -> None:
    """`station simulate --game baccarat_banque | station replay`, no --game: the banque's
    verdicts, every one the error its event expects (punto banco's would be nonsense)."""
    dealt = run_station(
        "simulate", "--game", "baccarat_banque", "--seed", "9", "--faults", "all=0.05"
    )
    assert dealt.returncode == 0, dealt.stderr
    events = verdicts(dealt.stdout)
    assert events[0]["journal"] == {  # the first line only
        "table": {
            "game": "baccarat_banque",
            "decks": 6,
            "gated": True,
            "cut_policy": "stop",
            "burn": "none",
        }
    }
    assert all("journal" not in e for e in events[1:])
    played = run_station("replay", stdin=dealt.stdout)
    assert played.returncode == 0, played.stderr
    rows = verdicts(played.stdout)
    assert [r["error"] for r in rows] == [e.get("expect") for e in events]
    assert any(r["role"] == "T2.1" for r in rows)


def test_protect_plays_a_stream_at_its_own_table_or_refuses_another_game() -> None:
    """A banque shoe riffled four times from the last: `station protect` without --game
    raises the WEAK_SHUFFLE it raises with --game baccarat_banque; --game punto_banco is
    refused, not checked as the wrong game (which found nothing, and said nothing)."""
    args = ["--game", "baccarat_banque", "--seed", "5", "--shoes", "2", "--shuffle", "riffle:4"]
    dealt = run_station("simulate", *args)
    assert dealt.returncode == 0, dealt.stderr
    own = run_station("protect", stdin=dealt.stdout)
    named = run_station("protect", "--game", "baccarat_banque", stdin=dealt.stdout)
    assert own.returncode == named.returncode == 1, own.stderr  # an alert: exit 1
    assert [a["code"] for a in verdicts(own.stdout)] == ["WEAK_SHUFFLE"]
    assert own.stdout == named.stdout
    refused = run_station("protect", "--game", "punto_banco", stdin=dealt.stdout)
    assert refused.returncode == 2 and refused.stdout == b""
    assert refused.stderr.decode().startswith(
        "station protect: the stream is the record of a baccarat_banque table"
    )
