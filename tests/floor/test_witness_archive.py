"""The floor archive as witness (no broker): a row its station did not sign is held and
alerted (FORGED_ROW), never archived, and the station's rows go on; a key named on first
use waits for a supervisor; the config's key is followed through a rotation; a journal
restored without its floor is a new epoch of the table, accepted by a supervisor, and
nothing archived before is lost; heartbeats and alerts in a table's name count only if
its key signed them; a table's rows are read with a token, even on a public floor."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import httpx
import orjson
import pytest

from station.core.table import Table
from station.floor.alerts import EPOCH, FORGED_MESSAGE, FORGED_ROW, NEW_KEY
from station.floor.archive import Archive
from station.floor.arrival import Arrival
from station.floor.board import Board
from station.floor.config import FloorServiceConfig, FloorTableConfig
from station.floor.decisions import DecisionRefused
from station.floor.epochs import RESTORED as FLOOR_RESTORED
from station.floor.said import Said
from station.live.journal import restore
from station.live.journal.epoch import RESTORED
from station.shared.keychain import Endorsement, named
from station.shared.messages import Alert, Heartbeat, JournalMessage
from station.shared.rows import Row, dumps, now_ts, row_hash
from station.shared.signing import SigningKey
from tests.floor.signedkit import events, forged, signed_journal
from tests.floor.test_hostile_floor import station_floor

BOSS = ("pit-boss", "supervisor")
T = "t1"


def arrivals(rows: list[Row]) -> list[Arrival]:
    return [Arrival(T, JournalMessage.of(T, r).encode()) for r in rows]


def config(key: SigningKey | None = None) -> FloorServiceConfig:
    public = "" if key is None else key.public.text
    return FloorServiceConfig(table=(FloorTableConfig(id=T, public_key=public),))


def test_the_signature_is_kept_and_a_forged_row_is_held_while_the_real_ones_go_on(
    tmp_path: Path,
) -> None:
    key = SigningKey.generate()
    with signed_journal(tmp_path / "j.db", T, key, events(12)) as journal:
        rows = list(journal.rows())
    board = Board(config(key))
    with Archive(tmp_path / "floor.db") as archive:
        board.load(archive)  # the config's key, trusted
        board.committed(archive.commit(arrivals(rows[:6])))
        fake = forged(T, rows[5])  # row 7, hash recomputed, no key
        someone = SigningKey.generate()
        signed = orjson.loads(forged(T, rows[5], said="hello"))
        signed["signature"] = someone.sign_row(signed["hash"])  # another key's signature
        done = archive.commit(
            [Arrival(T, fake), Arrival(T, orjson.dumps(signed)), *arrivals(rows[6:])]
        )
        board.committed(done)
        assert [r.seq for r in done.accepted] == [r.seq for r in rows[6:]]  # in order
        assert [a.kind for a in done.raised] == [FORGED_ROW]  # one alert, both counted
        assert "is unsigned with the table's key" in done.raised[0].message
        assert done.raised[0].code == "forged_unsigned"  # its figures fit its words
        archived = list(archive.rows(T))
        assert [(r.hash, r.signature) for r in archived] == [(r.hash, r.signature) for r in rows]
        assert all(r.signature is not None for r in archived)
        seen = board.table(T)
        assert seen["forged"] == 2 and seen["held"] == 2 and seen["signed"]
        assert seen["key"]["fingerprint"] == key.public.fingerprint
        assert seen["key"]["origin"] == "config" and seen["archived_seq"] == rows[-1].seq
        assert archive.verify(T) == []


def test_a_key_named_on_first_use_waits_for_a_supervisor(tmp_path: Path) -> None:
    key = SigningKey.generate()
    with signed_journal(tmp_path / "j.db", T, key, events(6)) as journal:
        rows = list(journal.rows())
    board = Board(config())
    with Archive(tmp_path / "floor.db") as archive:
        board.load(archive)
        done = archive.commit(arrivals(rows))
        board.committed(done)
        assert done.accepted == [] and [a.kind for a in done.raised] == [NEW_KEY]
        seen = board.table(T)
        assert seen["key"]["state"] == "pending" and not seen["signed"]
        assert seen["key"]["fingerprint"] == key.public.fingerprint
        assert seen["held"] == len(rows)
        with pytest.raises(DecisionRefused, match="compare it with `station key show`"):
            archive.accept_key(T, "0" * 32, *BOSS, "checked")
        accepted = archive.accept_key(T, key.public.fingerprint, *BOSS, "seen at the table")
        board.committed(accepted)
        assert [r.seq for r in accepted.accepted] == [r.seq for r in rows]
        assert accepted.decision is not None and accepted.decision.kind == "accept_key"
        assert accepted.decision.hash == key.public.fingerprint
        seen = board.table(T)
        assert seen["signed"] and seen["key"]["origin"] == "accepted" and seen["held"] == 0
        assert not [a for a in seen["alerts"] if a["kind"] == NEW_KEY]  # resolved
        assert seen["accepted"][-1]["kind"] == "accept_key"
    with Archive(tmp_path / "floor.db") as again:  # kept across a restart
        assert again.keys[T].trusted == key.public


def test_the_configured_key_is_followed_through_a_rotation(tmp_path: Path) -> None:
    old, new = SigningKey.generate(), SigningKey.generate()
    path = tmp_path / "j.db"
    with signed_journal(path, T, old, events(4)) as journal:
        before = list(journal.rows())
    endorsed = Endorsement(old.public, new.public, old.endorse(new.public))
    with signed_journal(path, T, new, events(8)[4:], (endorsed,)) as journal:
        rows = list(journal.rows())
    assert any(r.event.get("message") == "signing key rotated" for r in rows)
    with Archive(tmp_path / "floor.db") as archive:
        archive.trust({T: old.public})
        done = archive.commit(arrivals(rows))
        assert len(done.accepted) == len(rows) and done.held == 0
        assert archive.keys[T].trusted == new.public
        assert archive.trust({T: old.public}).raised == []  # the config's key led here
        assert archive.keys[T].trusted == new.public
    with Archive(tmp_path / "accepted.db") as archive:  # first use, then the config
        archive.commit(arrivals(rows))
        archive.accept_key(T, old.public.fingerprint, *BOSS, "seen at the table")
        assert archive.keys[T].trusted == new.public  # followed through the rotation
        archive.trust({T: old.public})  # the config names the key it began with
        assert archive.keys[T].trusted == new.public
    # A hand-over the old key did not endorse is a forgery, however well it is signed.
    rogue = SigningKey.generate()
    last = before[-1]
    event = {
        "type": "notice",
        "message": "signing key rotated",
        "old_key": named(old.public),
        "signing_key": named(rogue.public),
        "endorsement": rogue.endorse(rogue.public),
    }
    digest = row_hash(last.seq + 1, last.ts, "station", "station", "notice", dumps(event), None,
                      last.hash)  # fmt: skip
    hand_over = Row(last.seq + 1, last.ts, "station", "station", "notice", event, None,
                    last.hash, digest, rogue.sign_row(digest))  # fmt: skip
    with Archive(tmp_path / "other.db") as archive:
        archive.trust({T: old.public})
        archive.commit(arrivals(before))
        done = archive.commit(arrivals([hand_over]))
        assert done.accepted == [] and [a.kind for a in done.raised] == [FORGED_ROW]
        assert "without the endorsement of its key" in done.raised[0].message
        assert archive.keys[T].trusted == old.public


def test_a_journal_restored_without_its_floor_is_a_new_epoch_and_nothing_is_lost(
    tmp_path: Path,
) -> None:
    key = SigningKey.generate()
    path = tmp_path / "var" / "journal.db"
    backup = tmp_path / "backup.db"
    with signed_journal(path, T, key, events(6)) as journal:
        journal.backup(backup)
    with signed_journal(path, T, key, events(12)[6:]) as journal:
        old = list(journal.rows())
    with restore.no_station(path):  # restored without the floor: a new epoch
        staged = restore.stage(backup, path, key.public)
        before, aside = restore.replaced(path), restore.aside_of(path)
        restore.begin_epoch(staged, before, aside, T, Table(decks=1), key)
        restore.put_in_place(staged, path, aside)
    with signed_journal(path, T, key, events(14)[6:]) as journal:
        new = list(journal.rows())
    branch = next(r for r in new if r.event.get("message") == RESTORED)
    assert FLOOR_RESTORED == RESTORED
    board = Board(config(key))
    with Archive(tmp_path / "floor.db") as archive:
        board.load(archive)
        board.committed(archive.commit(arrivals(old)))
        done = archive.commit(arrivals(new))
        board.committed(done)
        assert done.duplicates == branch.seq - 1 and done.accepted == []
        assert [a.kind for a in done.raised] == [EPOCH]
        assert f"row {branch.seq} follows archived row {branch.seq - 1}" in done.raised[0].message
        seen = board.table(T)
        assert seen["new_epoch"] == {"seq": branch.seq, "epoch": 2} and seen["epoch"] == 1
        with pytest.raises(DecisionRefused, match="a new epoch waits from row"):
            archive.accept_chain(T, branch.seq + 1, *BOSS, "no")
        accepted = archive.accept_chain(T, branch.seq, *BOSS, "restored from the backup")
        board.committed(accepted)
        assert accepted.decision is not None and accepted.decision.epoch == 2
        assert [r.seq for r in accepted.accepted] == [r.seq for r in new[branch.seq - 1 :]]
        assert [r.hash for r in archive.rows(T)] == [r.hash for r in new]
        assert archive.verify(T) == []
        seen = board.table(T)
        assert seen["epoch"] == 2 and seen["new_epoch"] is None and seen["held"] == 0
        assert "a new epoch accepted from row" in seen["problem"]
        db = sqlite3.connect(archive.path)
        kept = db.execute("SELECT seq, hash, signature FROM superseded ORDER BY seq").fetchall()
        db.close()
        assert kept == [(r.seq, r.hash, r.signature) for r in old[branch.seq - 1 :]]
        # The old epoch's rows sent again (a new consumer replays the stream) change nothing.
        again = archive.commit(arrivals(old))
        assert again.duplicates == len(old) and again.held == 0


def test_heartbeats_and_alerts_count_only_if_the_tables_key_signed_them(tmp_path: Path) -> None:
    key = SigningKey.generate()
    now = [100.0]
    board = Board(config(key), clock=lambda: now[0])
    forged_alerts: list[tuple[str, Said]] = []
    board.witness.on_forged = lambda table, words, kind: forged_alerts.append((table, words))
    with Archive(tmp_path / "floor.db") as archive:
        board.load(archive)
    beat = Heartbeat(
        "site-1", T, now_ts(), 7, "0" * 64, 7, "publishing", "punto_banco", 1, None, False, None
    )  # fmt: skip
    liar = dataclasses.replace(
        beat, seq=10**12, suspended=True, journal="the journal cannot be written: disk full"
    )
    assert not board.heartbeat(liar, "http://evil.example/")
    assert not board.heartbeat(liar.signed(SigningKey.generate()), "http://evil.example/")
    seen = board.table(T)
    assert not seen["online"] and seen["station_seq"] is None and seen["journal_down"] is None
    assert seen["forged_messages"] == 2 and seen["dashboard"] is None
    assert len(forged_alerts) == 1 and "unsigned" in forged_alerts[0][1].message  # one a minute
    assert board.heartbeat(Heartbeat.decode(beat.signed(key).encode()), "http://t1.pit/")
    seen = board.table(T)
    assert seen["online"] and seen["station_seq"] == 7 and seen["dashboard"] == "http://t1.pit/"
    alert = Alert("site-1", T, "ts", "conflict", "made up")
    assert not board.station_alert(T, alert)
    assert board.station_alert(T, Alert.decode(alert.signed(key).encode()))
    assert [a["message"] for a in board.table(T)["station_alerts"]] == ["made up"]
    unsigned_board = Board(config())  # no key: nothing to check, no link from a heartbeat
    assert unsigned_board.heartbeat(beat, "http://t1.pit/")
    assert unsigned_board.table(T)["online"] and unsigned_board.table(T)["dashboard"] is None
    with Archive(tmp_path / "floor.db") as archive:
        done = archive.forged_message(T, forged_alerts[0][1])
        assert [a.kind for a in done.raised] == [FORGED_MESSAGE]
        assert archive.forged_message(T, "again").raised == []  # one open at a time


@pytest.mark.server
def test_a_tables_rows_need_a_token_even_on_a_public_floor(tmp_path: Path) -> None:
    """The floor view may be public; the rows are the journal: a viewer's token at least
    (a real `station floor`, its broker away)."""
    with station_floor(tmp_path, "public_read = true") as floor:
        assert httpx.get(f"{floor.url}/api/floor/tables").status_code == 200
        rows = f"{floor.url}/api/floor/tables/{T}/rows"
        assert httpx.get(rows).status_code == 401
        answer = httpx.get(rows, headers=floor.headers("viewer"))
        assert answer.status_code == 404 and "no row of table 't1'" in answer.text
        assert httpx.get(rows, headers=floor.headers("rig")).status_code == 403
