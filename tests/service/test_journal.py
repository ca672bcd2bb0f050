"""The journal: durable, hash-chained rows that replay into the same table."""

from __future__ import annotations

import io
import itertools
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from station.core.table import Table
from station.live.journal import Journal, JournalError, JournalUnavailable
from station.live.replay import replay
from station.shared.rows import Pending, notice

SHOE = [
    {"type": "shoe"},
    {"type": "card", "card": "3H"},
    {"type": "card", "card": "KS"},
    {"type": "card", "card": "QD"},
    {"type": "card", "card": "TC"},
    {"type": "close_bets"},
    {"type": "card", "card": "9S"},
    {"type": "card", "card": "2D"},
    {"type": "card", "card": "KH"},
    {"type": "card", "card": "5C"},
    {"type": "card", "card": None},
    {"type": "resume", "card": "4H"},
    {"type": "close_bets"},
    {"type": "card", "card": "AS"},
]


def write(path: Path, events: list[dict[str, object]] = SHOE) -> tuple[Journal, Table]:
    """A journal holding `events` with their verdicts, as the service writes it."""
    journal = Journal(path)
    table = Table()
    journal.start("t1", table)
    for i, event in enumerate(events):
        verdict = table.apply(event)
        rows = [Pending("api", "alice", event, verdict)]
        if i == 3:
            rows.append(notice("reader", "serial", "port reopened", port="/dev/x"))
        journal.append(rows)
    return journal, table


def tamper(path: Path, sql: str, *args: object) -> None:
    db = sqlite3.connect(path)
    db.execute(sql, args)
    db.commit()
    db.close()


def test_rows_are_chained_and_verify(tmp_path: Path) -> None:
    journal, _ = write(tmp_path / "j.db")
    rows = list(journal.rows())
    assert [r.seq for r in rows] == list(range(1, len(SHOE) + 3))
    assert rows[0].event["message"] == "journal created"
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(rows))
    report = journal.verify()
    assert report.ok, report.problems
    assert report.events == len(SHOE)
    assert report.rows == len(SHOE) + 2


def test_wal_and_full_sync(tmp_path: Path) -> None:
    journal, _ = write(tmp_path / "j.db")
    db = journal._db
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_replay_gives_the_same_table(tmp_path: Path) -> None:
    journal, live = write(tmp_path / "j.db")
    journal.close()
    again = Table()
    with Journal(tmp_path / "j.db") as reopened:
        done = reopened.replay_into(again)
    assert done.events == len(SHOE)
    assert again.copies == live.copies and again.round == live.round
    assert again.results == live.results and again.rounds_opened == live.rounds_opened
    assert again.suspension == live.suspension


def test_edited_row_is_detected(tmp_path: Path) -> None:
    write(tmp_path / "j.db")[0].close()
    tamper(
        tmp_path / "j.db",
        "UPDATE journal SET event = ? WHERE seq = 8",
        '{"card":"9H","type":"card"}',
    )
    report = Journal(tmp_path / "j.db").verify()
    assert not report.ok
    assert any("row 8" in p and "edited" in p for p in report.problems)


def test_edited_verdict_is_detected_even_with_a_fixed_hash(tmp_path: Path) -> None:
    """Someone who recomputes the whole chain still cannot change what the rules say."""
    from station.shared.rows import row_hash

    journal, _ = write(tmp_path / "j.db")
    journal.close()
    db = sqlite3.connect(tmp_path / "j.db")
    db.execute(
        'UPDATE journal SET verdict = replace(verdict, \'"winner":"player"\', '
        '\'"winner":"banker"\')'
    )
    changed = 'SELECT count(*) FROM journal WHERE verdict LIKE \'%"winner":"banker"%\''
    assert db.execute(changed).fetchone()[0] == 1
    prev = "0" * 64
    for seq, ts, src, actor, kind, ev, ver in db.execute(
        "SELECT seq, ts, source, actor, kind, event, verdict FROM journal ORDER BY seq"
    ).fetchall():
        h = row_hash(seq, ts, src, actor, kind, ev, ver, prev)
        db.execute("UPDATE journal SET prev_hash = ?, hash = ? WHERE seq = ?", (prev, h, seq))
        prev = h
    db.commit()
    db.close()
    (tmp_path / "j.db.head").unlink()
    report = Journal(tmp_path / "j.db").verify()
    assert not report.ok
    assert any("the rules now decide" in p for p in report.problems)


def test_deleted_row_is_detected(tmp_path: Path) -> None:
    write(tmp_path / "j.db")[0].close()
    tamper(tmp_path / "j.db", "DELETE FROM journal WHERE seq = 5")
    report = Journal(tmp_path / "j.db").verify()
    assert not report.ok
    assert any("row 6" in p and "deleted" in p for p in report.problems)


def test_deleted_last_row_is_detected_by_the_head_anchor(tmp_path: Path) -> None:
    journal, _ = write(tmp_path / "j.db")
    last = journal.last_seq
    journal.close()
    tamper(tmp_path / "j.db", "DELETE FROM journal WHERE seq = ?", last)
    report = Journal(tmp_path / "j.db").verify()
    assert not report.ok
    assert any(f"row {last} was committed" in p for p in report.problems)


def test_reordered_rows_are_detected(tmp_path: Path) -> None:
    write(tmp_path / "j.db")[0].close()
    db = sqlite3.connect(tmp_path / "j.db")
    columns = "seq, ts, source, actor, kind, event, verdict, prev_hash, hash"
    a = db.execute(f"SELECT {columns} FROM journal WHERE seq = 7").fetchone()
    b = db.execute(f"SELECT {columns} FROM journal WHERE seq = 8").fetchone()
    for seq, row in ((7, b), (8, a)):
        db.execute(
            "UPDATE journal SET ts=?, source=?, actor=?, kind=?, event=?, verdict=?, "
            "prev_hash=?, hash=? WHERE seq=?",
            (*row[1:], seq),
        )
    db.commit()
    db.close()
    report = Journal(tmp_path / "j.db").verify()
    assert not report.ok
    assert any(p.startswith("row 7") for p in report.problems)


def test_export_is_accepted_by_station_replay(tmp_path: Path) -> None:
    journal, _ = write(tmp_path / "j.db")
    out = io.BytesIO()
    assert journal.export(out) == len(SHOE)
    lines = [orjson.loads(line) for line in out.getvalue().splitlines()]
    assert all(line["type"] != "notice" for line in lines)
    replayed = io.BytesIO()
    replay(Table(), io.BytesIO(out.getvalue()), replayed)
    verdicts = [orjson.loads(line) for line in replayed.getvalue().splitlines()]
    assert len(verdicts) == len(lines)
    for line, verdict in zip(lines, verdicts, strict=True):
        assert {k: verdict[k] for k in line["verdict"]} == line["verdict"]
    assert [line["journal"]["seq"] for line in lines][:4] == [2, 3, 4, 5]


def test_other_table_settings_are_refused(tmp_path: Path) -> None:
    write(tmp_path / "j.db")[0].close()
    with Journal(tmp_path / "j.db") as journal, pytest.raises(JournalError, match="decks"):
        journal.start("t1", Table(decks=6))


CRASHER = """
import os, sys
from station.shared.rows import Pending
from station.live.journal import Journal
from station.core.table import Table
j = Journal(sys.argv[1]); t = Table(); j.start("t1", t)
j.append([Pending("api", "x", {"type": "shoe"}, t.apply({"type": "shoe"}))])
for i in range(200):
    e = {"type": "card", "card": "AS" if i % 2 else "KD"}
    j.append([Pending("reader", "serial", e, t.apply(e))])
    print(j.last_seq, flush=True)
os.kill(os.getpid(), 9)
"""


def test_committed_rows_survive_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER, str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == -9, proc.stderr
    acknowledged = int(proc.stdout.split()[-1])
    with Journal(path) as journal:
        assert journal.last_seq >= acknowledged
        report = journal.verify()
        assert report.ok, report.problems


def test_one_writer_per_journal(tmp_path: Path) -> None:
    first, _ = write(tmp_path / "j.db", SHOE[:2])
    second = Journal(tmp_path / "j.db")
    with pytest.raises(JournalError, match="another station is writing"):
        second.start("t1", Table())
    assert second.verify().ok  # reading is fine meanwhile
    first.close()
    second.start("t1", Table())  # the lock went with the first writer
    second.close()


def test_a_notice_may_carry_any_detail_even_one_named_like_its_own_keys(tmp_path: Path) -> None:
    """A driver's details are its own business: `source`, `actor`, `type` or `message`
    must neither crash the journal nor overwrite what the row says it is."""
    with Journal(tmp_path / "j.db") as journal:
        details = {"source": "/dev/video0", "actor": "x", "type": "y", "message": "z"}
        (row,) = journal.append([notice("reader", "camera", "opened", **details)])
    assert row.kind == "notice" and row.source == "reader" and row.actor == "camera"
    assert row.event == {
        "type": "notice",
        "message": "opened",
        "source": "/dev/video0",
        "actor": "x",
        "detail_type": "y",
        "detail_message": "z",
    }


def test_a_failed_commit_raises_its_own_error_and_changes_nothing(tmp_path: Path) -> None:
    """SQLite rolls a transaction back by itself when COMMIT fails on a full or failing
    disk; the error the station stops with must be that one, not the ROLLBACK's."""
    journal, _ = write(tmp_path / "j.db")
    last = journal.last_seq, journal.last_hash
    db = journal._db

    class FailingCommit:
        @property
        def in_transaction(self) -> bool:
            return db.in_transaction

        def execute(self, sql: str, *args: object) -> object:
            if sql == "COMMIT":
                db.execute("ROLLBACK")
                raise sqlite3.OperationalError("disk I/O error")
            return db.execute(sql, *args)

        def executemany(self, sql: str, rows: object) -> object:
            return db.executemany(sql, rows)  # type: ignore[arg-type]

    journal._db = FailingCommit()  # type: ignore[assignment]
    with pytest.raises(JournalUnavailable, match="disk I/O error") as failed:
        journal.append([Pending("api", "alice", {"type": "void"}, Table().apply({"type": "void"}))])
    assert isinstance(failed.value.__cause__, sqlite3.OperationalError)
    journal._db = db
    assert (journal.last_seq, journal.last_hash) == last
    assert journal.verify().ok


def test_an_anchor_left_behind_is_written_by_write_anchor_or_close(tmp_path: Path) -> None:
    """The live writer commits with `anchor=False` and rewrites the head anchor once the
    batch is broadcast (`write_anchor`): between the two the anchor lags (never leads),
    one write catches up any number of commits, and `close` writes one left behind."""
    from station.live.journal import anchor as anchors

    journal, table = write(tmp_path / "j.db")
    head = journal.head_path
    anchored = journal.last_seq
    assert anchors.read(head).seq == anchored
    for card in ("2S", "3S"):
        event = {"type": "card", "card": card}
        journal.append([Pending("api", "alice", event, table.apply(event))], anchor=False)
    assert anchors.read(head).seq == anchored  # behind: the rows are committed
    journal.write_anchor()
    assert anchors.read(head).seq == journal.last_seq == anchored + 2
    assert anchors.read(head).hash == journal.last_hash
    event = {"type": "card", "card": "4S"}
    journal.append([Pending("api", "alice", event, table.apply(event))], anchor=False)
    journal.close()  # the anchor behind is written before the file is let go
    assert anchors.read(head).seq == anchored + 3
    journal.write_anchor()  # closed: nothing (the anchor's file is not opened again)
    assert Journal(tmp_path / "j.db").verify().ok
