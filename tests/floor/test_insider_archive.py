"""Issue 32's floor rules in the archive and the board (no broker; the attacks themselves
run on real processes in test_insider_floor): a branch is an epoch only from an epoch's
notice (a restore's, or a station's own discontinuity's), else a ROLLBACK no supervisor
can accept; signed heartbeats count only newer than the last one believed and of now; a
supervisor sets a table's key without a restart; archives of schema 3 are upgraded."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from station.floor import epochs
from station.floor.alerts import EPOCH, ROLLBACK, STALE_HEARTBEAT
from station.floor.archive import Archive
from station.floor.arrival import Arrival
from station.floor.beats import Believed
from station.floor.board import Board
from station.floor.config import FloorServiceConfig, FloorSettings, FloorTableConfig
from station.floor.decisions import KINDS_3, DecisionRefused, decision_table
from station.floor.said import Said
from station.floor.schema import HELD_TABLE, SCHEMA_VERSION
from station.live.journal.epoch import DISCONTINUITY, EPOCH_NOTICES, discontinuity_notice
from station.shared.messages import Heartbeat, JournalMessage
from station.shared.rows import Row
from station.shared.signing import SigningKey
from tests.floor.signedkit import events, signed_journal
from tests.floor.test_hostile_floor import station_floor

BOSS = ("pit-boss", "supervisor")
T = "t1"
ROLLED_BACK_ROW = (
    "INSERT INTO held (table_id, reason, body, received) VALUES ('x', 'rollback', x'00', 'now')"
)


def arrivals(rows: list[Row]) -> list[Arrival]:
    return [Arrival(T, JournalMessage.of(T, r).encode()) for r in rows]


def rolled_back(tmp_path: Path, key: SigningKey, notice: bool) -> tuple[list[Row], list[Row]]:
    """A journal's rows (a backup taken at row 7, then more), and the journal put back
    from that backup and gone on: with a signed `journal discontinuity` notice first (a
    station that found it), or without (a rollback the station did not notice)."""
    path, backup = tmp_path / "journal.db", tmp_path / "backup.db"
    with signed_journal(path, T, key, events(6)) as journal:
        journal.backup(backup)
    with signed_journal(path, T, key, events(12)[6:]) as journal:
        old = list(journal.rows())
    again = tmp_path / "again.db"
    shutil.copy(backup, again)
    shutil.copy(f"{backup}.head", f"{again}.head")
    if notice:
        with signed_journal(again, T, key, []) as journal:
            journal.append([discontinuity_notice(2, last_signed=old[-1].seq, found=7)])
    with signed_journal(again, T, key, events(10)[6:]) as journal:
        new = list(journal.rows())
    return old, new


def test_the_floor_knows_the_stations_epoch_notices() -> None:
    assert epochs.EPOCH_NOTICES == EPOCH_NOTICES and epochs.DISCONTINUITY == DISCONTINUITY


def test_a_branch_that_begins_at_a_discontinuity_notice_is_an_epoch(tmp_path: Path) -> None:
    key = SigningKey.generate()
    old, new = rolled_back(tmp_path, key, notice=True)
    branch = next(r for r in new if r.event.get("message") == DISCONTINUITY)
    with Archive(tmp_path / "floor.db") as archive:
        archive.trust({T: key.public})
        archive.commit(arrivals(old))
        done = archive.commit(arrivals(new))
        assert [a.kind for a in done.raised] == [EPOCH]
        assert "journal discontinuity" in done.raised[0].message
        assert done.raised[0].code == "epoch_discontinuity"  # its figures fit its words
        assert archive.new_epochs() == {T: branch.seq}
        accepted = archive.accept_chain(T, branch.seq, *BOSS, "the station said so")
        assert accepted.decision is not None and accepted.decision.epoch == 2
        assert [r.hash for r in archive.rows(T)] == [r.hash for r in new]


def test_a_branch_without_an_epoch_notice_is_a_rollback_no_one_can_accept(
    tmp_path: Path,
) -> None:
    key = SigningKey.generate()
    old, new = rolled_back(tmp_path, key, notice=False)
    first = next(r for r, o in zip(new, old, strict=False) if r.hash != o.hash)
    with Archive(tmp_path / "floor.db") as archive:
        archive.trust({T: key.public})
        archive.commit(arrivals(old))
        done = archive.commit(arrivals(new))
        assert done.accepted == [] and [a.kind for a in done.raised] == [ROLLBACK]
        assert done.raised[0].seq == first.seq
        assert done.held == len(new) - first.seq + 1  # the branch and every row after it
        assert archive.new_epochs() == {}
        again = archive.commit(arrivals(new))  # sent again: nothing new, one alert
        assert again.raised == [] and again.held == 0
        with pytest.raises(DecisionRefused, match="held as a ROLLBACK") as refused:
            archive.accept_chain(T, first.seq, *BOSS, "restored from a backup")
        assert refused.value.status == 409
        assert [r.hash for r in archive.rows(T)] == [r.hash for r in old]
        assert archive.verify(T) == []
        # Acknowledged, the alert stays open: a second rollback is alerted all the same.
        [alert] = [a for a in archive.alerts() if a.kind == ROLLBACK]
        archive.acknowledge(alert.id, *BOSS, "the pit manager is told")
        second = tmp_path / "second.db"
        shutil.copy(tmp_path / "backup.db", second)
        shutil.copy(tmp_path / "backup.db.head", f"{second}.head")
        with signed_journal(second, T, key, events(9)[6:]) as journal:
            other = list(journal.rows())
        done = archive.commit(arrivals(other))
        assert [a.kind for a in done.raised] == [ROLLBACK] and done.accepted == []


def beat(ts: str, seq: int = 7) -> Heartbeat:
    return Heartbeat(
        "site-1", T, ts, seq, "0" * 64, seq, "publishing", "punto_banco", 1, None, False, None
    )  # fmt: skip


def test_a_signed_heartbeat_counts_only_if_newer_than_the_last_and_of_now(
    tmp_path: Path,
) -> None:
    key = SigningKey.generate()
    wall = [1_796_000_000.0]  # 2026-11-30T... UTC
    config = FloorServiceConfig(
        floor=FloorSettings(offline_after=15.0, heartbeat_skew=5.0),
        table=(FloorTableConfig(id=T, public_key=key.public.text),),
    )
    board = Board(config, clock=lambda: 100.0, wall=lambda: wall[0])
    told: list[str] = []
    board.witness.on_forged = lambda table, words, kind: told.append(kind)
    with Archive(tmp_path / "floor.db") as archive:
        board.load(archive)

    def at(offset: float) -> str:
        moment = datetime.fromtimestamp(wall[0] + offset, UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    first, second = beat(at(-2)).signed(key), beat(at(-1), 8).signed(key)
    assert board.heartbeat(second) and board.table(T)["station_seq"] == 8
    assert not board.heartbeat(first)  # out of order
    assert not board.heartbeat(second)  # sent again
    assert not board.heartbeat(beat(at(-21)).signed(key))  # older than 15 + 5 s
    assert not board.heartbeat(beat(at(+6)).signed(key))  # ahead of the floor's clock
    assert not board.heartbeat(beat("not a time").signed(key))
    seen = board.table(T)
    assert seen["stale_heartbeats"] == 5 and seen["station_seq"] == 8
    assert told == [STALE_HEARTBEAT]  # once a minute
    assert board.heartbeat(beat(at(0), 9).signed(key)) and board.table(T)["station_seq"] == 9
    unsigned = Board(FloorServiceConfig(), wall=lambda: wall[0])  # no key: nothing to order
    assert unsigned.heartbeat(beat("ts")) and unsigned.heartbeat(beat("ts"))


def test_a_heartbeat_believed_is_kept_across_a_restart(tmp_path: Path) -> None:
    with Archive(tmp_path / "floor.db") as archive:
        archive.believe(T, Believed("2026-12-04T01:00:00.000000Z", 9, "a" * 64))
    with Archive(tmp_path / "floor.db") as again:
        assert again.believed == {T: Believed("2026-12-04T01:00:00.000000Z", 9, "a" * 64)}


def test_a_supervisor_sets_the_key_of_a_table_whose_rows_name_none(tmp_path: Path) -> None:
    """Signed rows that name no key (the journal's first row lost to a forger, or an old
    station): held until a supervisor sets the key, without a restart; a trusted key is
    not replaced that way."""
    key = SigningKey.generate()
    with signed_journal(tmp_path / "j.db", T, key, events(8)) as journal:
        rows = list(journal.rows())
    unnamed = [r for r in rows if "signing_key" not in r.event]
    with Archive(tmp_path / "floor.db") as archive:
        done = archive.commit(arrivals(unnamed))
        assert done.accepted == [] and archive.keys[T].key is None
        with pytest.raises(DecisionRefused, match="set-key"):
            archive.accept_key(T, key.public.fingerprint, *BOSS, "seen")
        with pytest.raises(DecisionRefused, match="unknown table"):
            archive.set_key("t9", key.public, *BOSS, "seen")
        done = archive.set_key(T, key.public, *BOSS, "station key show at the table")
        assert done.decision is not None and done.decision.kind == "set_key"
        assert done.decision.hash == key.public.fingerprint
        assert archive.keys[T].trusted == key.public
        assert archive.waiting() == {T: (2, None)}  # rows 2 on wait for row 1, not sent yet
        with pytest.raises(DecisionRefused, match="trusted") as refused:
            archive.set_key(T, SigningKey.generate().public, *BOSS, "mine now")
        assert refused.value.status == 409
        taken = archive.commit(arrivals(rows[:1]))
        assert [r.seq for r in taken.accepted] == [r.seq for r in rows]


def test_an_archive_of_schema_3_is_upgraded_with_its_rows_and_decisions(
    tmp_path: Path,
) -> None:
    key = SigningKey.generate()
    with signed_journal(tmp_path / "j.db", T, key, events(6)) as journal:
        rows = list(journal.rows())
    path = tmp_path / "floor.db"
    with Archive(path) as archive:
        archive.commit(arrivals(rows))
        archive.accept_key(T, key.public.fingerprint, *BOSS, "seen")
    db = sqlite3.connect(path, isolation_level=None)
    for sql in (  # back to schema 3: its held rows' and decisions' checks, no heartbeats
        HELD_TABLE,
        "INSERT INTO held_3 SELECT id, table_id, seq, hash, reason, body, received FROM held",
        "DROP TABLE held",
        "ALTER TABLE held_3 RENAME TO held",
        decision_table("decision_3", KINDS_3),
        "INSERT INTO decision_3 SELECT * FROM decision",
        "DROP TABLE decision",
        "ALTER TABLE decision_3 RENAME TO decision",
        "DROP TABLE heartbeat",
        "DROP TABLE dropped",
        "ALTER TABLE alert DROP COLUMN code",
        "ALTER TABLE alert DROP COLUMN params",
        "PRAGMA user_version = 3",
    ):
        db.execute(sql)
    with pytest.raises(sqlite3.IntegrityError):
        db.execute(ROLLED_BACK_ROW)
    db.close()
    with Archive(path) as upgraded:
        assert upgraded.heads[T] == (rows[-1].seq, rows[-1].hash)
        assert [d.kind for d in upgraded.decisions(T)] == ["accept_key"]
        assert upgraded.keys[T].trusted == key.public and upgraded.believed == {}
    db = sqlite3.connect(path, isolation_level=None)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 6
    db.execute(ROLLED_BACK_ROW)
    db.close()


@pytest.mark.server
def test_set_key_is_a_supervisors_decision_on_the_floor_api(tmp_path: Path) -> None:
    """POST /api/floor/tables/{table}/set-key on a real `station floor` (its broker away):
    a supervisor only, the key as `station key show` prints it, recorded with who."""
    key = SigningKey.generate()
    with signed_journal(tmp_path / "j.db", T, key, events(4)) as journal:
        rows = list(journal.rows())
    with Archive(tmp_path / "floor.db") as archive:
        archive.commit(arrivals([r for r in rows if "signing_key" not in r.event]))
    path = f"/api/floor/tables/{T}/set-key"
    body = {"public_key": key.public.text, "reason": "station key show at the table"}
    with station_floor(tmp_path) as floor:
        viewer = httpx.post(f"{floor.url}{path}", json=body, headers=floor.headers("viewer"))
        bad = floor.decide(path, {**body, "public_key": "ssh-ed25519 AAAA"})
        answer = floor.decide(path, body)
        again = floor.decide(path, body)
        seen = httpx.get(f"{floor.url}/api/floor/tables", headers=floor.headers("viewer"))
    assert viewer.status_code == 403
    assert bad.status_code == 422 and "station key show" in bad.text
    assert answer.status_code == 200, answer.text
    decision = answer.json()["decision"]
    assert decision["kind"] == "set_key" and decision["hash"] == key.public.fingerprint
    assert decision["by"] and decision["role"] == "supervisor"
    assert again.status_code == 409 and "trusted" in again.text
    [line] = [t for t in seen.json()["tables"] if t["id"] == T]
    assert line["signed"] and line["key"]["origin"] == "set by a supervisor"


def test_a_signed_heartbeat_of_a_refused_publisher_is_a_rollback_alert(tmp_path: Path) -> None:
    """The station's own key says its journal is not the one the floor archived (its
    publisher refused: the rows that would show it never reach the stream): ROLLBACK, in
    the archive's alerts; the heartbeat does not make the table online. An unsigned one,
    or one its key did not sign, says nothing of the kind."""
    key = SigningKey.generate()
    config = FloorServiceConfig(table=(FloorTableConfig(id=T, public_key=key.public.text),))
    board = Board(config)
    told: list[tuple[str, Said]] = []
    board.witness.on_forged = lambda table, words, kind: told.append((kind, words))
    with signed_journal(tmp_path / "j.db", T, key, events(6)) as journal:
        rows = list(journal.rows())
    with Archive(tmp_path / "floor.db") as archive:
        board.load(archive)
        board.committed(archive.commit(arrivals(rows)))
        refused = replace(beat(datetime.now(UTC).isoformat(), 3), floor="refused")
        assert not board.heartbeat(refused.signed(key))
        assert not board.table(T)["online"]
        [(kind, words)] = told
        assert kind == ROLLBACK and "rolled back or cut without" in words.message
        assert f"the archive ends at row {rows[-1].seq}" in words.message
        done = archive.forged_message(T, words, kind)  # what the service has it do
        assert [a.kind for a in done.raised] == [ROLLBACK]
    assert not board.heartbeat(replace(refused, ts=datetime.now(UTC).isoformat()))
    assert len(told) == 2 and told[1][0] == "FORGED_MESSAGE"  # unsigned: a forgery
