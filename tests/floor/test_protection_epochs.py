"""The floor-wide SHOE_SEQUENCE check across a table's new epoch (no broker): the archive
and the check's thread as the floor service runs them. A station restored without its
floor numbers its rows again from the backup's end; once a supervisor accepts the new
epoch, the check reads the table again from the shoe the epoch begins in, so a repeated
shoe dealt in the new epoch's first rows (seqs the old epoch had passed) is alerted."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from station.core.protection import run_length
from station.core.table import Table
from station.floor.archive import Archive
from station.floor.arrival import Arrival
from station.floor.config import ArchiveConfig, FloorServiceConfig, FloorTableConfig
from station.floor.protection import FloorProtection
from station.live.journal import restore
from station.live.journal.epoch import RESTORED
from station.shared.messages import JournalMessage
from station.shared.rows import Row
from station.shared.signing import SigningKey
from tests.floor.floorkit import shoe_events
from tests.floor.signedkit import signed_journal

T = "t1"
BOSS = ("pit-boss", "supervisor")


def arrivals(rows: list[Row]) -> list[Arrival]:
    return [Arrival(T, JournalMessage.of(T, r).encode()) for r in rows]


def alerts(archive: Path) -> list[tuple[int, str]]:
    db = sqlite3.connect(archive)
    try:
        return db.execute(
            "SELECT seq, message FROM alert WHERE kind = 'SHOE_SEQUENCE' ORDER BY id"
        ).fetchall()
    finally:
        db.close()


def journals(tmp_path: Path, key: SigningKey) -> tuple[list[Row], list[Row]]:
    """The old epoch: shoe A, shoe C, shoe D (its head far past the backup, taken five
    rows into shoe C). The new epoch, from the backup: the supervisor ends shoe C and the
    dealer deals shoe A again, card for card."""
    shoe_a, shoe_c, shoe_d = (shoe_events(seed=s, decks=1) for s in (3, 8, 9))
    path, backup = tmp_path / "var" / "journal.db", tmp_path / "backup.db"
    with signed_journal(path, T, key, [*shoe_a, *shoe_c[:5]]) as journal:
        journal.backup(backup)
    with signed_journal(path, T, key, [*shoe_c[5:], *shoe_d, {"type": "shoe"}]) as journal:
        old = list(journal.rows())
    with restore.no_station(path):
        staged = restore.stage(backup, path, key.public)
        before, aside = restore.replaced(path), restore.aside_of(path)
        restore.begin_epoch(staged, before, aside, T, Table(decks=1), key)
        restore.put_in_place(staged, path, aside)
    with signed_journal(path, T, key, [{"type": "end_shoe"}, *shoe_a]) as journal:
        new = list(journal.rows())
    return old, new


def test_a_shoe_repeated_early_in_a_new_epoch_is_alerted(tmp_path: Path) -> None:
    key = SigningKey.generate()
    old, new = journals(tmp_path, key)
    branch = next(r for r in new if r.event.get("message") == RESTORED)
    repeat = [r.seq for r in new if r.event.get("type") == "shoe"][-1]
    k = run_length(2, 1)  # shoes A, C in the index when the repeat starts (D superseded)
    kth = [r.seq for r in new if r.seq > repeat and r.event.get("type") == "card"][k - 1]
    assert kth < old[-1].seq  # the alert's row is one the old epoch had passed
    path = tmp_path / "floor.db"
    config = FloorServiceConfig(
        archive=ArchiveConfig(path=path),
        table=(FloorTableConfig(id=T, public_key=key.public.text),),
    )

    async def run() -> list[tuple[int, str]]:
        protection = FloorProtection(config)
        with Archive(path) as archive:
            archive.trust({T: key.public})
            protection.start({})
            protection.committed(archive.commit(arrivals(old)).accepted)
            assert await asyncio.to_thread(protection.wait_idle)
            assert alerts(path) == []
            held = archive.commit(arrivals(new))
            assert held.accepted == [] and held.held
            done = archive.accept_chain(T, branch.seq, *BOSS, "restored from the backup")
            assert done.epochs_begun == {T: branch.seq}
            protection.committed(done.accepted, rewound=done.epochs_begun)
            assert await asyncio.to_thread(protection.wait_idle)
        await protection.stop()
        assert protection.error is None
        return alerts(path)

    found: Any = asyncio.run(run())
    assert [seq for seq, _ in found] == [kth]
    assert f"table {T}, shoe at row {repeat}" in found[0][1]
    assert "in the order of t1 shoe at seq 2 started" in found[0][1]  # shoe A, old epoch
