"""The floor archive on its own (no broker): idempotent on (table, seq), each table's
chain checked, what does not fit held with one alert per kind, a file of its own."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from station.core.table import Table
from station.floor.archive import Archive
from station.floor.arrival import Arrival, Malformed, parse_row
from station.floor.board import Board
from station.floor.config import FloorServiceConfig
from station.floor.schema import APPLICATION_ID, ArchiveError
from station.live.journal import Journal
from station.shared.rows import Pending, Row
from tests.floor.floorkit import make_journal, message, shoe_events


def arrivals(table: str, rows: list[Row], **changes: object) -> list[Arrival]:
    return [Arrival(table, message(table, r, **changes)) for r in rows]


def test_the_same_rows_twice_are_archived_once(tmp_path: Path) -> None:
    rows = make_journal(tmp_path / "t.db", "t1", shoe_events(seed=2, decks=1)[:12])
    with Archive(tmp_path / "floor.db") as archive:
        first = archive.commit(arrivals("t1", rows))
        again = archive.commit(arrivals("t1", rows))
        assert len(first.accepted) == len(rows) and first.duplicates == 0
        assert again.accepted == [] and again.duplicates == len(rows) and again.raised == []
        assert archive.count("t1") == len(rows) and archive.verify("t1") == []
        assert archive.heads["t1"] == (rows[-1].seq, rows[-1].hash)
    with Archive(tmp_path / "floor.db") as reopened:  # the heads come back from the file
        assert reopened.heads["t1"] == (rows[-1].seq, rows[-1].hash)
        db = sqlite3.connect(tmp_path / "floor.db")
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        db.close()


def test_a_replaced_journal_is_held_with_one_alert(tmp_path: Path) -> None:
    rows = make_journal(tmp_path / "a.db", "t1", shoe_events(seed=2, decks=1)[:12])
    other = make_journal(tmp_path / "b.db", "t1", shoe_events(seed=4, decks=1)[:20])
    with Archive(tmp_path / "floor.db") as archive:
        archive.commit(arrivals("t1", rows))
        done = archive.commit(arrivals("t1", other))
        assert done.accepted == [] and done.held == len(other)
        # Not one alert per row: rows 1-12 conflict, 13 does not link to 12, and 14-20
        # wait behind it.
        assert [a.kind for a in done.raised] == ["conflict", "chain", "gap"]
        assert "row 1 arrived again with other contents" in done.raised[0].message
        assert done.held_counts == {"t1": len(other)}
        assert archive.count("t1") == len(rows)
        assert archive.commit(arrivals("t1", other)).held == 0  # held once, not again


def test_a_message_that_is_not_a_row_is_held_once(tmp_path: Path) -> None:
    junk = [Arrival("t1", b"{not json"), Arrival("t1", b"[1, 2]"), Arrival("t1", b"{not json")]
    with Archive(tmp_path / "floor.db") as archive:
        done = archive.commit(junk)
        assert done.held == 2 and [a.kind for a in done.raised] == ["malformed"]
        assert "not JSON" in done.raised[0].message


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"seq": 0}, "seq must be 1 or more"),
        ({"seq": True}, "'seq' is missing or of the wrong type"),
        ({"hash": "ABC"}, "'hash' must be 64 lower-case hex digits"),
        ({"table": "t2"}, "the row says table 't2' but came on the subject of 't1'"),
        ({"verdict": {"ok": True}}, "the verdict must be null or an object with"),
        ({"event": [1]}, "'event' is missing or of the wrong type"),
    ],
)
def test_a_row_that_does_not_parse_says_why(
    tmp_path: Path, change: dict[str, object], words: str
) -> None:
    [row] = make_journal(tmp_path / "t.db", "t1", [])
    with pytest.raises(Malformed, match=words.replace("(", r"\(").replace(")", r"\)")):
        parse_row(message("t1", row, **change), "t1")
    assert parse_row(message("t1", row), "t1").to_row() == row


def test_a_station_journal_is_not_taken_as_an_archive(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE things (x)")
    db.commit()
    db.close()
    with pytest.raises(ArchiveError, match="tables things"):
        Archive(path)
    newer = tmp_path / "newer.db"
    Archive(newer).close()
    db = sqlite3.connect(newer)
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(ArchiveError, match="schema 99, written by a newer station"):
        Archive(newer)


def test_one_floor_service_per_archive(tmp_path: Path) -> None:
    busy = "another floor service is using the archive"
    with Archive(tmp_path / "floor.db"), pytest.raises(ArchiveError, match=busy):
        Archive(tmp_path / "floor.db")
    Archive(tmp_path / "floor.db").close()  # free again once the first has closed


def test_the_board_replays_and_says_when_its_rules_disagree(tmp_path: Path) -> None:
    """The floor replays each table with the station's core; a station whose verdicts the
    floor's rules would not give (another version) is said, its rows archived all the same."""
    events = shoe_events(seed=2, decks=1)[:12]
    rows = make_journal(tmp_path / "t.db", "t1", events)
    table = Table(decks=8)
    forged = tmp_path / "forged.db"
    with Journal(forged) as journal:
        journal.start("t2", table)
        for i, event in enumerate(events):
            verdict = dict(table.decide(event).verdict)
            if i == 5:
                verdict["ok"] = not verdict["ok"]
            journal.append([Pending("api", "test", event, verdict)])
        other = list(journal.rows())
    board = Board(FloorServiceConfig())
    with Archive(tmp_path / "floor.db") as archive:
        board.committed(archive.commit(arrivals("t1", rows) + arrivals("t2", other)))
        assert archive.count("t2") == len(other)
    one, two = board.table("t1"), board.table("t2")
    assert one["problem"] is None and one["shoe"] == 1 and one["archived_seq"] == len(rows)
    assert two["problem"] is not None and two["problem"].startswith("row 7: the floor's rules")
