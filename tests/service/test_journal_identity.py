"""The journal file says what it is: SQLite's application_id and a schema version.

A foreign database given as `[journal] path` is refused untouched, a newer schema is
refused with what to do, and a journal of station 0.1.0 (unstamped) is migrated
explicitly, with a notice row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from station.core.table import Table
from station.live.journal import Journal, JournalError
from station.live.journal.schema import APPLICATION_ID, SCHEMA, SCHEMA_VERSION
from station.shared.rows import notice


def pragmas(path: Path) -> tuple[int, int]:
    db = sqlite3.connect(path)
    try:
        return (
            db.execute("PRAGMA application_id").fetchone()[0],
            db.execute("PRAGMA user_version").fetchone()[0],
        )
    finally:
        db.close()


def test_a_new_journal_is_stamped(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.db") as journal:
        assert journal.migrated_from is None
    assert pragmas(tmp_path / "j.db") == (APPLICATION_ID, SCHEMA_VERSION)


def test_another_programs_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "crm.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO customers (name) VALUES ('A. Player')")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(JournalError, match=r"not a station journal .*tables customers.*own"):
        Journal(path)
    assert path.read_bytes() == before
    db = sqlite3.connect(path)
    names = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    db.close()
    assert names == ["customers"]  # no journal table added to it


def test_a_database_of_another_application_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA application_id = 1234")
    db.execute(SCHEMA)  # even with a table of the same shape
    db.commit()
    db.close()
    with pytest.raises(JournalError, match="not a station journal"):
        Journal(path)


def test_a_newer_schema_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    Journal(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(JournalError, match=r"newer station .*upgrade the station"):
        Journal(path)


def test_a_journal_of_station_0_1_is_migrated_with_a_notice(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Journal(path) as journal:  # write a journal, then make it look unstamped
        journal.start("t-1", Table())
        journal.append([notice("station", "station", "hello")])
    db = sqlite3.connect(path)
    db.execute("DROP TABLE outbox")  # 0.1.0 had the journal table only
    db.execute("ALTER TABLE journal DROP COLUMN signature")  # and no signatures
    db.execute("PRAGMA application_id = 0")
    db.execute("PRAGMA user_version = 0")
    db.commit()
    db.close()
    with Journal(path) as journal:
        assert journal.migrated_from == 0
        journal.start("t-1", Table())
        last = list(journal.rows())[-1]
        assert last.event["message"] == "journal migrated"
        assert (last.event["from_schema"], last.event["to_schema"]) == (0, SCHEMA_VERSION)
        assert journal.verify().ok
    assert pragmas(path) == (APPLICATION_ID, SCHEMA_VERSION)


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database at all, but long enough to have a header " * 20)
    with pytest.raises(JournalError, match="cannot open the journal"):
        Journal(path)


def test_a_journal_of_schema_1_gains_the_webhook_outbox(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    with Journal(path) as journal:
        journal.start("t-1", Table())
    db = sqlite3.connect(path)
    db.execute("DROP TABLE outbox")  # as schema 1 made it
    db.execute("ALTER TABLE journal DROP COLUMN signature")
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    with Journal(path) as journal:
        assert journal.migrated_from == 1
        assert journal.owed() == []
        journal.owe([("hook", 1, "t-1:1:x", b"{}")])
        assert journal.owed() == [("hook", 1, "t-1:1:x", b"{}")]
        journal.settle([("hook", "t-1:1:x")])
        assert journal.owed() == []
        assert journal.verify().ok
    assert pragmas(path) == (APPLICATION_ID, SCHEMA_VERSION)
