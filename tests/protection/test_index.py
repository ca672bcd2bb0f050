"""The SQLite history: lookups as the memory one, a restart, a foreign file refused."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from drivers.sim.shoe import VirtualShoe
from station.core.protection.sequence import MemoryHistory, SequenceWatch, encode, gram_key
from station.shared.protection_index import ProtectionIndexError, SqliteHistory


def fair_shoe(decks: int, rng: random.Random) -> bytes:
    return encode(VirtualShoe(decks, rng).order)


def test_the_index_survives_a_restart(tmp_path: Path) -> None:
    rng = random.Random(21)
    path = tmp_path / "protection.sqlite"
    index = SqliteHistory(path)
    memory = MemoryHistory()
    shoes = [fair_shoe(6, rng) for _ in range(12)]
    for i, cards in enumerate(shoes):
        assert index.add(cards, f"shoe {i}", f"T1:{i}") is not None
        memory.add(cards, f"shoe {i}", f"T1:{i}")
    assert index.add(shoes[0], "again", "T1:0") is None  # the same source: stored once
    index.close()

    index = SqliteHistory(path)
    assert index.shoes() == 12 and index.cards(5) == shoes[4] and index.label(5) == "shoe 4"
    key = gram_key(shoes[3][8:13])
    assert index.lookup(key) == [(shoe + 1, start) for shoe, start in memory.lookup(key)]
    watch = SequenceWatch(index, 6)
    hits = [m for card in fair_shoe(6, rng)[:5] + shoes[7][40:80] for m in watch.card(card)]
    assert len(hits) == 1 and hits[0].earlier == "shoe 7" and hits[0].earlier_start == 40
    index.close()


def test_another_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE journal (seq INTEGER)")
    db.close()
    with pytest.raises(ProtectionIndexError, match="not a protection index"):
        SqliteHistory(path)
