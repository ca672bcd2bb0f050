"""Issue 24, done-when (d), and the floor's side of a restore without it, from real
processes: a real nats-server, `station run` signing its journal and publishing it,
`station floor` archiving it, and the `station journal` commands.

(d) A backup, more rounds, the journal lost: `station journal restore BACKUP
--from-floor URL` takes every row after the backup from the floor archive (each checked),
so the journal is whole again: `verify` passes (signatures, and against the floor), no new
epoch begins, and the station goes on where it stopped, its next rows archived in order.

Without the floor, the restored journal begins a new epoch: the floor holds its rows (they
number again from the backup's end), a supervisor accepts the epoch (accept-chain names
it), and the rows of the epoch it replaces stay archived."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from station.live.journal.epoch import RESTORED
from station.live.journal.reading import read_rows
from station.shared.rows import Row
from tests.floor.kit import FloorBroker, ensure_stream, start_broker
from tests.floor.signedkit import FloorProcess, floor_process, floor_section, wait_until
from tests.service.stationkit import (
    BURN,
    TABLE,
    StationProcess,
    natural_round,
    running,
    station,
    write_config,
)

pytestmark = [pytest.mark.floor, pytest.mark.server]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[FloorBroker]:
    found = start_broker(tmp_path / "broker", (TABLE,))
    try:
        ensure_stream(found)
        yield found
    finally:
        found.broker.stop()


def deal(proc: StationProcess, rounds: range) -> None:
    for n in rounds:
        for event in natural_round(n):
            proc.post(event)


def archived(floor: FloorProcess, seq: int) -> bool:
    return bool(floor.table(TABLE)["archived_seq"] == seq)


def journal_rows(path: Path) -> list[Row]:
    return read_rows(path, 0, 100_000)


def setup(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, dict[str, str], str]:
    config, tokens = write_config(
        tmp_path, 'signing_key = "station.pem"', floor_section(broker, TABLE)
    )
    assert station("key", "init", "--config", str(config)).returncode == 0
    public = station("key", "show", "--config", str(config)).stdout.strip()
    monkeypatch.setenv("FLOOR_PASSWORD", broker.user(TABLE).password)
    return config, tokens, public


def backup_then_more_rounds(
    config: Path, tokens: dict[str, str], floor: FloorProcess, backup: Path
) -> tuple[int, list[Row]]:
    """A shoe, rounds 1-3, a backup, rounds 4-6, the station stopped once the floor has
    every row: the backup's last row and the journal as it was."""
    journal = config.parent / "var" / "journal.db"
    with running(config, tokens) as proc:
        proc.post({"type": "shoe"}, "dealer")
        for event in BURN:
            proc.post(event)
        deal(proc, range(1, 4))
        done = station("journal", "backup", str(backup), "--config", str(config))
        assert done.returncode == 0, done.stderr
        deal(proc, range(4, 7))
        last = proc.rows()[-1]["seq"]  # on the floor before the stop (else they wait for
        wait_until(lambda: archived(floor, last), "every row on the floor")  # the next start)
    whole = journal_rows(journal)
    assert whole[-1].seq == last
    return len(journal_rows(backup)), whole


def verify(config: Path, public: str, floor: FloorProcess) -> str:
    done = station(
        "journal", "verify", "--config", str(config),
        "--public-key", public, "--against-floor", floor.url,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_restore_from_the_floor_is_the_whole_journal_and_the_station_goes_on(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, tokens, public = setup(tmp_path, broker, monkeypatch)
    journal = tmp_path / "var" / "journal.db"
    backup = tmp_path / "backup.db"
    with floor_process(tmp_path / "floor", broker, {TABLE: public}) as floor:
        monkeypatch.setenv("STATION_FLOOR_TOKEN", floor.tokens["viewer"])
        backed_up, whole = backup_then_more_rounds(config, tokens, floor, backup)
        assert backed_up < whole[-1].seq
        restored = station(
            "journal", "restore", str(backup), "--config", str(config),
            "--from-floor", floor.url,
        )  # fmt: skip
        assert restored.returncode == 0, restored.stderr
        rows = journal_rows(journal)
        verified = verify(config, public, floor)
        with running(config, tokens) as proc:
            assert proc.get("/api/state").json()["suspension"]["code"] == "STATION_RESTART"
            proc.post({"type": "resume"}, "supervisor")
            deal(proc, range(7, 9))
            after = proc.rows()
            wait_until(lambda: archived(floor, after[-1]["seq"]), "the new rows on the floor")
        seen = floor.table(TABLE)
        again = verify(config, public, floor)
    out = restored.stdout
    assert f"rows {backed_up + 1}-{whole[-1].seq} taken from the floor archive" in out
    assert "restored whole" in out and "no new epoch" in out
    assert [(r.seq, r.hash, r.signature) for r in rows] == [
        (r.seq, r.hash, r.signature) for r in whole
    ]  # the journal as it was, every row, signatures included
    assert "every signature verified" in verified and "ok against the floor archive" in verified
    new = journal_rows(journal)
    assert new[: len(whole)] == whole and new[len(whole)].event["type"] == "restart"
    assert not [r for r in new if r.event.get("message") == RESTORED]  # the same epoch
    assert seen["held"] == 0 and seen["epoch"] == 1 and seen["new_epoch"] is None
    assert seen["archived_seq"] == new[-1].seq and not seen["alerts"]
    assert f"rows 1-{new[-1].seq} of table {TABLE} are the journal's" in again


def test_a_restore_without_the_floor_is_a_new_epoch_of_the_same_table_on_the_floor(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, tokens, public = setup(tmp_path, broker, monkeypatch)
    journal = tmp_path / "var" / "journal.db"
    backup = tmp_path / "backup.db"
    with floor_process(tmp_path / "floor", broker, {TABLE: public}) as floor:
        monkeypatch.setenv("STATION_FLOOR_TOKEN", floor.tokens["viewer"])
        backed_up, whole = backup_then_more_rounds(config, tokens, floor, backup)
        restored = station("journal", "restore", str(backup), "--config", str(config))
        assert restored.returncode == 0, restored.stderr
        assert "epoch 2 begins at row" in restored.stdout
        with running(config, tokens) as proc:
            proc.post({"type": "resume"}, "supervisor")
            deal(proc, range(4, 6))
            last = proc.rows()[-1]["seq"]
            waiting = wait_until(lambda: floor.table(TABLE)["new_epoch"], "the new epoch held")
            assert waiting == {"seq": backed_up + 1, "epoch": 2}
            seen = floor.table(TABLE)
            assert seen["archived_seq"] == whole[-1].seq and seen["held"] > 0
            [alert] = [a for a in seen["alerts"] if a["kind"] == "epoch"]
            assert "journal was restored from a backup" in alert["message"]
            chain = f"/api/floor/tables/{TABLE}/accept-chain"
            refused = floor.post(chain, {"seq": 1, "reason": "x"})
            assert refused.status_code == 409 and "a new epoch waits from row" in refused.text
            reason = "restored from last night's backup"
            answer = floor.post(chain, {"seq": backed_up + 1, "reason": reason})
            assert answer.status_code == 200, answer.text
            wait_until(lambda: archived(floor, last), "the new epoch's rows archived")
        new = journal_rows(journal)
        after = floor.table(TABLE)
        verified = verify(config, public, floor)
        db = sqlite3.connect(f"{(tmp_path / 'floor' / 'floor.db').as_uri()}?mode=ro", uri=True)
        kept = db.execute("SELECT seq, hash FROM superseded ORDER BY seq").fetchall()
        db.close()
    decision = answer.json()["decision"]
    assert decision["epoch"] == 2 and decision["from_seq"] == backed_up + 1
    assert after["epoch"] == 2 and after["new_epoch"] is None and after["held"] == 0
    assert after["archived_seq"] == new[-1].seq
    assert after["accepted"][-1]["epoch"] == 2
    # Nothing archived before is lost: the replaced epoch's rows, kept whole.
    assert kept == [(r.seq, r.hash) for r in whole[backed_up:]]
    assert "ok against the floor archive" in verified
