"""Issue 32, attack 7's rest, in the archive (no broker; the flood on real processes is in
test_held_flood): a table's held rows its key did not sign stay within `[floor]
held_rows`; what comes past the bound is not stored but counted (`dropped`), with one
HELD_FULL alert; rows the table's key signed (a new epoch, a rollback) are held however
full the bound is; another table has a bound of its own; archives of schema 4 are
upgraded in place."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from station.floor.alerts import EPOCH, HELD_FULL, ROLLBACK
from station.floor.archive import Archive
from station.floor.arrival import Arrival
from station.floor.board import Board
from station.floor.config import ConfigError, FloorServiceConfig, FloorTableConfig, from_mapping
from station.floor.holding import HELD_ROWS
from station.floor.schema import SCHEMA_VERSION
from station.shared.rows import Row
from station.shared.signing import SigningKey
from tests.floor.signedkit import events, forged, signed_journal
from tests.floor.test_insider_archive import BOSS, T, arrivals, rolled_back

BOUND = 100


@dataclass(frozen=True)
class After:
    """The row a forged one claims to follow."""

    seq: int
    hash: str


def junk(numbers: range, table: str = T) -> list[Arrival]:
    """What a flood with the table's login brings, each message distinct: rows made with
    the station's own hash but no key, and messages that are not rows."""
    found = []
    for n in numbers:
        if n % 2:
            found.append(Arrival(table, orjson.dumps({"junk": n, "pad": "x" * 50})))
        else:
            found.append(Arrival(table, forged(table, After(n + 10, "0" * 64), n=n)))
    return found


def station_rows(tmp_path: Path, key: SigningKey, count: int = 8) -> list[Row]:
    with signed_journal(tmp_path / "station.db", T, key, events(count)) as journal:
        return list(journal.rows())


def kinds(archive: Archive, kind: str) -> list[str]:
    return [a.table for a in archive.alerts() if a.kind == kind]


def test_a_flood_of_junk_is_held_up_to_the_bound_and_counted_past_it(tmp_path: Path) -> None:
    key = SigningKey.generate()
    rows = station_rows(tmp_path, key)
    with Archive(tmp_path / "floor.db", held_rows=BOUND) as archive:
        archive.trust({T: key.public})
        archive.commit(arrivals(rows[:3]))
        flooded = archive.commit(junk(range(300)))
        after_first = archive.held_counts()[T], archive.dropped_counts()[T]
        # the station's rows go on around it
        taken = archive.commit(arrivals(rows[3:]))
        # a longer flood holds no more; the junk held already, sent again, is no new row
        archive.commit(junk(range(3000)))
        held, dropped = archive.held_counts()[T], archive.dropped_counts()[T]
        assert kinds(archive, HELD_FULL) == [T]
        full = next(a for a in archive.alerts() if a.kind == HELD_FULL)
    assert after_first == (BOUND, 300 - BOUND)
    assert [a.kind for a in flooded.raised].count(HELD_FULL) == 1
    assert flooded.dropped == {T: 300 - BOUND} and flooded.held == BOUND
    assert [r.seq for r in taken.accepted] == [r.seq for r in rows[3:]]
    assert held == BOUND
    assert dropped == 300 - BOUND + 3000 - BOUND  # the 100 held once are not counted again
    assert "[floor] held_rows" in full.message and "change that login's password" in full.message


def test_another_tables_junk_has_its_own_bound(tmp_path: Path) -> None:
    with Archive(tmp_path / "floor.db", held_rows=BOUND) as archive:
        archive.commit(junk(range(500)))
        done = archive.commit(junk(range(60), table="t2"))
        assert archive.held_counts() == {T: BOUND, "t2": 60}
        assert archive.dropped_counts() == {T: 500 - BOUND}
        assert kinds(archive, HELD_FULL) == [T]
    assert HELD_FULL not in [a.kind for a in done.raised]


@pytest.mark.parametrize("notice", [True, False], ids=["epoch", "rollback"])
def test_rows_the_tables_key_signed_are_held_past_a_full_bound(
    tmp_path: Path, notice: bool
) -> None:
    """Junk never pushes out what a supervisor must decide: a signed new epoch (or a
    signed rollback) after the bound is full is held whole, and the epoch is accepted."""
    key = SigningKey.generate()
    old, new = rolled_back(tmp_path, key, notice)
    branch = [r for r in new if r.hash not in {o.hash for o in old}]
    with Archive(tmp_path / "floor.db", held_rows=BOUND) as archive:
        archive.trust({T: key.public})
        archive.commit(arrivals(old))
        archive.commit(junk(range(BOUND * 2)))
        came = archive.commit(arrivals(new))
        held = archive.held_counts()[T]
        dropped = archive.dropped_counts()[T]
        if notice:
            accepted = archive.accept_chain(T, branch[0].seq, *BOSS, "restored, the station says")
            assert [r.seq for r in accepted.accepted] == [r.seq for r in branch]
            assert archive.heads[T] == (branch[-1].seq, branch[-1].hash)
    assert held == BOUND + len(branch) and dropped == BOUND
    assert (EPOCH if notice else ROLLBACK) in [a.kind for a in came.raised]


def test_a_first_use_stations_rows_are_not_pushed_out_by_junk(tmp_path: Path) -> None:
    """No key configured: the station's rows wait, signed by the key its first row names,
    for a supervisor to accept it. A flood of junk fills its own bound only: the
    station's rows are all held, and taken once the key is accepted."""
    key = SigningKey.generate()
    rows = station_rows(tmp_path, key, count=12)
    with Archive(tmp_path / "floor.db", held_rows=BOUND) as archive:
        archive.commit(arrivals(rows[:2]))
        archive.commit(junk(range(BOUND * 3)))
        archive.commit(arrivals(rows[2:]))
        held, dropped = archive.held_counts()[T], archive.dropped_counts()[T]
        accepted = archive.accept_key(T, key.public.fingerprint, *BOSS, "station key show")
        left = archive.held_counts()[T]
    assert held == BOUND + len(rows) and dropped == BOUND * 2
    assert [r.seq for r in accepted.accepted] == [r.seq for r in rows]
    assert left == BOUND  # the junk, forged now, stays held


def test_a_full_first_use_bound_says_what_to_decide(tmp_path: Path) -> None:
    key = SigningKey.generate()
    rows = station_rows(tmp_path, key, count=12)
    with Archive(tmp_path / "floor.db", held_rows=5) as archive:
        done = archive.commit(arrivals(rows))
        assert archive.held_counts() == {T: 5} and archive.dropped_counts() == {T: len(rows) - 5}
    [full] = [a for a in done.raised if a.kind == HELD_FULL]
    assert "named on first use" in full.message and "accept the key" in full.message


def test_the_count_and_the_alert_outlive_a_restart_and_show_on_the_tables_line(
    tmp_path: Path,
) -> None:
    key = SigningKey.generate()
    path = tmp_path / "floor.db"
    with Archive(path, held_rows=BOUND) as archive:
        archive.trust({T: key.public})
        archive.commit(junk(range(250)))
    with Archive(path, held_rows=BOUND) as archive:
        again = archive.commit(junk(range(250, 400)))
        board = Board(FloorServiceConfig(table=(FloorTableConfig(id=T),)))
        board.load(archive)
        line = board.table(T)
        board.committed(again)
        assert kinds(archive, HELD_FULL) == [T]
    assert line["held"] == BOUND and line["dropped"] == 400 - BOUND
    assert [a["kind"] for a in line["alerts"]].count(HELD_FULL) == 1
    assert not [a for a in again.raised if a.kind == HELD_FULL]  # one while it is open
    assert board.table(T)["dropped"] == 400 - BOUND


def test_an_archive_of_schema_4_is_upgraded_its_held_rows_counted(tmp_path: Path) -> None:
    """Schema 5 adds which key signed each held row and the `dropped` table: an archive of
    schema 4 keeps every held row (counted as unsigned: none is ever dropped)."""
    path = tmp_path / "floor.db"
    with Archive(path) as archive:
        archive.commit(junk(range(150)))
    db = sqlite3.connect(path, isolation_level=None)
    for sql in (
        "DROP INDEX held_signer",
        "ALTER TABLE held DROP COLUMN signer",
        "DROP TABLE dropped",
        "ALTER TABLE alert DROP COLUMN code",
        "ALTER TABLE alert DROP COLUMN params",
        "PRAGMA user_version = 4",
    ):
        db.execute(sql)
    db.close()
    with Archive(path, held_rows=BOUND) as upgraded:
        assert upgraded.held_counts() == {T: 150} and upgraded.dropped_counts() == {}
        upgraded.commit(junk(range(150, 160)))
        assert upgraded.held_counts() == {T: 150} and upgraded.dropped_counts() == {T: 10}
        # alerts of before schema 6 keep their words and have no code (shown as words);
        # the HELD_FULL raised since has its code and figures for the floor view
        alerts = {a.kind: a for a in upgraded.alerts()}
        assert alerts["malformed"].code is None and alerts["malformed"].message
        full = alerts[HELD_FULL]
        assert (full.code, full.params) == ("held_full_unsigned", {"table": T, "bound": BOUND})
    db = sqlite3.connect(path, isolation_level=None)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6
    assert db.execute("SELECT count(*) FROM held WHERE signer = 0").fetchone()[0] == 150
    db.close()


def test_held_rows_is_a_floor_setting_with_a_floor_under_it() -> None:
    assert FloorServiceConfig().floor.held_rows == HELD_ROWS == 10_000
    assert from_mapping({"floor": {"held_rows": 500}}).floor.held_rows == 500
    with pytest.raises(ConfigError, match=r"\[floor\] held_rows"):
        from_mapping({"floor": {"held_rows": 10}})
