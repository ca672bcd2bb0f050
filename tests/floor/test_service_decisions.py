"""A supervisor's decisions in the floor archive (no broker): a gap or a broken chain
accepted lets the table go on, checked from the accepted row on, recorded with who and
kept across a restart; an alert acknowledged stays in the history. And the fast start:
each table replayed from its latest shoe shows what a replay of every row shows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from station.floor.alerts import PROTECTION_ACTOR
from station.floor.archive import Archive
from station.floor.arrival import Arrival, parse_row
from station.floor.board import Board
from station.floor.config import FloorServiceConfig
from station.floor.decisions import DecisionRefused
from station.floor.schema import SCHEMA_VERSION
from station.live.journal import Journal
from station.shared.rows import Row, notice
from tests.conftest import run_station
from tests.floor.floorkit import make_journal, message, shoe_events

BOSS = ("pit-boss", "supervisor")


def arrivals(table: str, rows: list[Row]) -> list[Arrival]:
    return [Arrival(table, message(table, r)) for r in rows]


def shoes(seed: int, count: int, decks: int = 1, faults: str | None = None) -> list[dict[str, Any]]:
    """`count` simulated shoes (events only), with `faults` injected if given."""
    args = ["simulate", "--seed", str(seed), "--decks", str(decks), "--shoes", str(count)]
    if faults is not None:
        args += ["--faults", faults]
    done = run_station(*args)
    assert done.returncode == 0, done.stderr
    drop = ("actor", "expect", "fault")
    return [
        {k: v for k, v in orjson.loads(line).items() if k not in drop}
        for line in done.stdout.splitlines()
    ]


@contextmanager
def refused(status: int, words: str) -> Iterator[None]:
    """The decision is refused with `status` and these words."""
    with pytest.raises(DecisionRefused, match=words) as caught:
        yield
    assert caught.value.status == status


def test_an_accepted_gap_lets_the_table_go_on_checked_from_the_accepted_row(
    tmp_path: Path,
) -> None:
    rows = make_journal(tmp_path / "t.db", "t1", shoe_events(seed=2, decks=1)[:14])
    path = tmp_path / "floor.db"
    with Archive(path) as archive:
        archive.commit(arrivals("t1", rows[:3] + rows[5:8]))  # rows 4 and 5 lost
        [gap] = [a for a in archive.alerts() if a.kind == "gap"]
        with refused(404, "unknown table 't9'"):
            archive.accept_gap("t9", 4, 5, *BOSS, "lost")
        with refused(409, r"no such gap: table t1's gap is rows 4-5 \(the archive ends at row 3"):
            archive.accept_gap("t1", 4, 4, *BOSS, "lost")
        with refused(422, "give a reason"):
            archive.accept_gap("t1", 4, 5, *BOSS, "  ")
        assert archive.heads["t1"][0] == 3 and archive.decisions() == []  # refusals: nothing
        done = archive.accept_gap("t1", 4, 5, *BOSS, "rows lost with the broker's disk")
        assert [r.seq for r in done.accepted] == [6, 7, 8] and done.held_counts == {}
        decision = done.decision
        assert decision is not None
        assert (decision.kind, decision.from_seq, decision.to_seq) == ("accept_gap", 4, 5)
        assert (decision.by, decision.role, decision.hash) == (
            "pit-boss",
            "supervisor",
            rows[5].hash,
        )
        [resolved] = [a for a in done.alerts if a.id == gap.id]
        assert resolved.resolved is not None and resolved.resolved_by == decision
        with refused(409, "table t1 has no gap"):
            archive.accept_gap("t1", 4, 5, *BOSS, "again")
        # From row 6 on the chain is checked as ever: the next rows are taken, a row of
        # another journal (it does not link to row 10) is held.
        archive.commit(arrivals("t1", rows[8:10]))
        other = make_journal(tmp_path / "o.db", "t1", shoe_events(seed=5, decks=1)[:12])
        assert [a.kind for a in archive.commit(arrivals("t1", other[10:11])).raised] == ["chain"]
        assert archive.heads["t1"][0] == 10 and archive.verify("t1") == []
    with Archive(path) as reopened:  # a restart of the floor service: all of it kept
        assert reopened.decisions() == [decision]
        assert reopened.heads["t1"] == (10, rows[9].hash) and reopened.verify("t1") == []
        # Row 11 of the right journal: taken (the other journal's row 11 stays held).
        assert reopened.commit(arrivals("t1", rows[10:])).accepted[-1].seq == len(rows)
        # Row 4 comes after all: held, said, never slipped in behind the decision.
        late = reopened.commit(arrivals("t1", rows[3:4]))
        assert late.held == 1 and [a.kind for a in late.raised] == ["late"]
        assert "after pit-boss accepted rows 4-5 as missing" in late.raised[0].message
        assert reopened.row("t1", 4) is None and reopened.verify("t1") == []
    db = sqlite3.connect(path)
    assert db.execute("SELECT actor, reason FROM decision").fetchall() == [
        ("pit-boss", "rows lost with the broker's disk")
    ]
    db.close()


def test_verify_still_finds_a_gap_no_one_accepted(tmp_path: Path) -> None:
    """The decision covers its own gap only: the verifier is not switched off by it."""
    rows = make_journal(tmp_path / "t.db", "t1", shoe_events(seed=2, decks=1)[:8])
    with Archive(tmp_path / "floor.db") as archive:
        archive.commit(arrivals("t1", rows[:2] + rows[3:]))
        archive.accept_gap("t1", 3, 3, *BOSS, "row 3 lost")
        assert archive.verify("t1") == []
        archive._db.execute("DELETE FROM row WHERE table_id = 't1' AND seq = 6")
        assert archive.verify("t1") == [
            "row 7: expected row 6",
            "row 7: prev_hash does not match row 6",
        ]


def test_an_accepted_chain_takes_the_new_journal_from_its_row(tmp_path: Path) -> None:
    rows = make_journal(tmp_path / "a.db", "t1", shoe_events(seed=2, decks=1)[:12])
    other = make_journal(tmp_path / "b.db", "t1", shoe_events(seed=4, decks=1)[:20])
    n = len(rows)  # the new journal's row n + 1 does not link to row n
    path = tmp_path / "floor.db"
    with Archive(path) as archive:
        archive.commit(arrivals("t1", rows))
        held = archive.commit(arrivals("t1", other))
        assert [a.kind for a in held.raised] == ["conflict", "chain", "gap"]
        with refused(409, f"the row held for a broken chain is {n + 1}; accept row {n + 1}"):
            archive.accept_chain("t1", n + 2, *BOSS, "the PC was replaced")
        done = archive.accept_chain("t1", n + 1, *BOSS, "the PC was replaced, journal lost")
        assert [r.seq for r in done.accepted] == list(range(n + 1, len(other) + 1))
        open_kinds = [a.kind for a in done.alerts if a.resolved is None]
        assert open_kinds == ["conflict"]  # rows 1-n of the new journal stay held
        assert done.held_counts == {"t1": n}
        assert archive.verify("t1") == []
        with refused(409, "table t1 has no broken chain"):
            archive.accept_chain("t1", len(other) + 1, *BOSS, "again")
    with Archive(path) as reopened:
        assert reopened.verify("t1") == [] and reopened.heads["t1"] == (len(other), other[-1].hash)
        assert [d.kind for d in reopened.decisions("t1")] == ["accept_chain"]


def test_an_acknowledged_alert_stays_in_the_history(tmp_path: Path) -> None:
    rows = make_journal(tmp_path / "t.db", "t1", shoe_events(seed=2, decks=1)[:6])
    path = tmp_path / "floor.db"
    with Archive(path) as archive:
        [alert] = archive.commit(arrivals("t1", rows[:2] + rows[3:])).raised
        with refused(404, "no alert 99 in the archive"):
            archive.acknowledge(99, *BOSS, "seen")
        done = archive.acknowledge(alert.id, *BOSS, "the station is being checked")
        [seen] = done.alerts
        assert seen.resolved is None and seen.acknowledged == done.decision
        with refused(409, f"alert {alert.id} was acknowledged by pit-boss at"):
            archive.acknowledge(alert.id, "other", "supervisor", "me too")
        assert done.held_counts == {"t1": len(rows) - 3}  # acknowledged is not accepted
    with Archive(path) as reopened:
        [seen] = reopened.alerts()
        assert seen.acknowledged is not None and seen.acknowledged.by == "pit-boss"
        assert seen.to_api()["acknowledged"]["reason"] == "the station is being checked"


def full_replay(rows: list[Row], table: str = "t1") -> dict[str, Any]:
    """The table on the board of a floor service that saw every row arrive."""
    board = Board(FloorServiceConfig())
    for row in rows:
        board.view(table).apply(parse_row(message(table, row), table))
    return board.table(table)


@pytest.mark.parametrize(
    ("seed", "count", "cut", "faults"),
    [(3, 4, None, None), (5, 3, -20, None), (7, 3, -3, "unreadable=0.05,while_suspended=0.5")],
)
def test_the_fast_start_shows_what_every_row_shows(
    tmp_path: Path, seed: int, count: int, cut: int | None, faults: str | None
) -> None:
    """Replayed from its latest shoe (the tip), a table shows what a replay of its every
    row shows: shoe count, round, results, suspension; mid-shoe or between shoes."""
    events = shoes(seed, count, faults=faults)
    if cut is not None:
        events = events[:cut]
    rows = make_journal(tmp_path / "t.db", "t1", events, decks=1)
    with Archive(tmp_path / "floor.db") as archive:
        archive.commit(arrivals("t1", rows))
        tip = archive.tips["t1"]
    assert tip.seq == len(rows) and tip.created_seq == 1 and tip.shoes == count
    assert tip.shoe_seq is not None and tip.shoe_seq > len(rows) // count  # not shoe 1's
    board = Board(FloorServiceConfig())
    with Archive(tmp_path / "floor.db") as reopened:
        board.load(reopened)
    fast, every = board.table("t1"), full_replay(rows)
    assert fast == every
    assert fast["shoe"] == count and fast["results"]


def test_an_old_archive_gets_its_tips_once(tmp_path: Path) -> None:
    """An archive of schema 1 (before decisions and tips) is upgraded in place at its
    first open: its tips from its rows, as a new archive's."""
    rows = make_journal(tmp_path / "t.db", "t1", shoes(3, 2), decks=1)
    path = tmp_path / "floor.db"
    with Archive(path) as archive:
        archive.commit(arrivals("t1", rows))
        tips = dict(archive.tips)
    db = sqlite3.connect(path, isolation_level=None)
    for sql in (
        "DROP TABLE tip",
        "ALTER TABLE alert DROP COLUMN acknowledged",
        "ALTER TABLE alert DROP COLUMN resolved_by",
        "DROP TABLE decision",
        *(f"DROP TABLE {t}" for t in ("table_key", "signature", "epoch", "superseded")),
        "DROP TABLE heartbeat",
        "DROP TABLE dropped",
        "ALTER TABLE alert DROP COLUMN code",
        "ALTER TABLE alert DROP COLUMN params",
        "PRAGMA user_version = 1",
    ):
        db.execute(sql)
    db.close()
    with Archive(path) as upgraded:
        assert upgraded.tips == tips and upgraded.heads["t1"] == (len(rows), rows[-1].hash)
        assert upgraded.decisions() == []
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6
    db.close()


def test_after_an_accepted_gap_the_state_is_unsure_until_the_next_shoe(tmp_path: Path) -> None:
    """Rows accepted as missing: the table's state is replayed without them (said on its
    line), and its next shoe starts it afresh, as the station's."""
    events = shoes(3, 2)
    rows = make_journal(tmp_path / "t.db", "t1", events, decks=1)
    second = next(r.seq for r in rows if r.seq > 10 and r.event.get("type") == "shoe")
    board = Board(FloorServiceConfig())
    with Archive(tmp_path / "floor.db") as archive:
        board.committed(archive.commit(arrivals("t1", rows[:10] + rows[12 : second - 5])))
        board.committed(archive.accept_gap("t1", 11, 12, *BOSS, "lost"))
        seen = board.table("t1")
        assert seen["problem"].startswith("rows 11-12 accepted as missing: the table's state")
        # Not guessed without the rows: no round, no results, no suspension (a replay
        # without rows 11-12 would refuse the cards after them and suspend the table).
        assert not seen["state_known"] and not seen["suspended"] and seen["shoe"] == 1
        assert seen["round"] is None and seen["results"] == [] and not seen["in_play"]
        assert [d["kind"] for d in seen["accepted"]] == ["accept_gap"]
        board.committed(archive.commit(arrivals("t1", rows[second - 5 :])))
    after = board.table("t1")
    every = full_replay(rows)
    assert after["problem"] is None and after["shoe"] == every["shoe"] == 2
    assert after["results"] == every["results"] and after["rounds"] == every["rounds"]


def test_a_protection_notice_held_behind_a_gap_is_alerted_when_it_is_taken(
    tmp_path: Path,
) -> None:
    """A station's game-protection notice is a floor alert when its row is archived, also
    when it waited behind a gap (filled, or accepted)."""
    journal = tmp_path / "t.db"
    make_journal(journal, "t1", shoe_events(seed=2, decks=1)[:5])
    weak = notice("station", PROTECTION_ACTOR, "a weak shuffle", alert="WEAK_SHUFFLE")
    with Journal(journal) as station:
        station.append([weak])
        rows = list(station.rows())
    for accept in (False, True):
        with Archive(tmp_path / f"floor-{accept}.db") as archive:
            archive.commit(arrivals("t1", rows[:2] + rows[3:]))  # row 3 late, the notice held
            if accept:
                done = archive.accept_gap("t1", 3, 3, *BOSS, "row 3 lost")
            else:
                done = archive.commit(arrivals("t1", rows[2:3]))
            assert done.accepted[-1].seq == len(rows)
            assert [a.kind for a in done.raised] == ["WEAK_SHUFFLE"]


def test_two_journals_behind_one_gap_the_supervisor_names_the_row(tmp_path: Path) -> None:
    """Rows of two journals wait behind the same gap: the decision names which row to go
    on from (its hash); the other journal's rows stay held and hide no later gap."""
    rows = make_journal(tmp_path / "a.db", "t1", shoe_events(seed=2, decks=1)[:10])
    other = make_journal(tmp_path / "b.db", "t1", shoe_events(seed=4, decks=1)[:10])
    with Archive(tmp_path / "floor.db") as archive:
        archive.commit(arrivals("t1", rows[:3]))
        archive.commit(arrivals("t1", rows[4:6] + other[4:6]))  # row 4 lost, two rows 5
        assert archive.waiting() == {"t1": (5, None)}
        with refused(409, f"rows 5 held for table t1: .*{rows[4].hash}.*name the one"):
            archive.accept_gap("t1", 4, 4, *BOSS, "row 4 lost")
        done = archive.accept_gap("t1", 4, 4, *BOSS, "row 4 lost", rows[4].hash)
        assert [r.hash for r in done.accepted] == [rows[4].hash, rows[5].hash]
        assert done.held_counts == {"t1": 2} and archive.waiting() == {}
        archive.commit(arrivals("t1", rows[7:9]))  # row 7 lost too
        assert archive.waiting() == {"t1": (8, None)}
        assert archive.accept_gap("t1", 7, 7, *BOSS, "row 7 lost").accepted[-1].seq == 9
        assert archive.verify("t1") == []
