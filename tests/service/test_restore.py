"""`station journal restore` from real processes: a backup, more rounds, the station
stopped, the backup restored without a floor, new rounds. The rows after the backup are
numbered again from its end, so seqs repeat for other rounds (the old bug: the game server
took `wh-1:272:round_result` of a new round for one it had settled, answered 204 and paid
nothing); the restore begins a new epoch, every id names it, and the reference receiver
(examples/verify_webhook.py) settles every genuine round_result, no id used twice."""

from __future__ import annotations

import importlib.util
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from station.core.table import Table
from station.live.journal import Journal, restore
from tests.conftest import ROOT
from tests.service.stationkit import (
    BURN,
    TABLE,
    StationProcess,
    natural_round,
    running,
    station,
    write_config,
)

pytestmark = pytest.mark.server


def example() -> ModuleType:
    """examples/verify_webhook.py, imported from its file as a game server would copy it."""
    spec = importlib.util.spec_from_file_location(
        "verify_webhook", ROOT / "examples" / "verify_webhook.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def game_server(secret: bytes) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The reference receiver on 127.0.0.1: the events it settled (each id once), in order."""
    settled: list[dict[str, Any]] = []
    server = example().make_server("127.0.0.1", 0, secret, settled.append)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/station", settled
    finally:
        server.shutdown()
        server.server_close()


def wait_for(ready: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def deal(proc: StationProcess, rounds: range) -> list[int]:
    """Deal `rounds` (natural rounds); the seqs of their round results."""
    results = []
    for n in rounds:
        for event in natural_round(n):
            verdict = proc.post(event)
        assert verdict["result"] is not None and verdict["round"] == n
        results.append(verdict["seq"])
    return results


def results(settled: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in settled if e["type"] == "round_result"]


def test_a_restore_without_the_floor_reuses_no_id_and_every_round_is_settled(
    tmp_path: Path,
) -> None:
    secret = secrets.token_hex(32)
    (tmp_path / "hook.secret").write_text(secret + "\n")
    with game_server(secret.encode()) as (url, settled):
        hook = f'[[signals.webhook]]\nurl = "{url}"\nsecret_file = "hook.secret"\n'
        config, tokens = write_config(tmp_path, 'signing_key = "station.pem"', hook)
        assert station("key", "init", "--config", str(config)).returncode == 0
        backup = tmp_path / "backup" / "journal.db"
        backup.parent.mkdir()
        with running(config, tokens) as proc:
            proc.post({"type": "shoe"}, "dealer")
            for event in BURN:
                proc.post(event)
            first = deal(proc, range(1, 4))
            done = station("journal", "backup", str(backup), "--config", str(config))
            assert done.returncode == 0, done.stderr
            lost = deal(proc, range(4, 7))  # after the backup: not in it
            wait_for(lambda: len(results(settled)) == 6, "the first six results")
        # The station is stopped; its journal is restored from the backup, no floor.
        restored = station("journal", "restore", str(backup), "--config", str(config))
        assert restored.returncode == 0, restored.stderr
        assert "epoch 2 begins at row" in restored.stdout
        assert "signatures verified with key" in restored.stdout
        assert f"rows {first[-1] + 1}-" in restored.stdout  # the rows it could not restore
        assert len(list((tmp_path / "var").glob("journal.db.replaced-*.head"))) == 1
        with running(config, tokens) as proc:
            state = proc.get("/api/state").json()
            assert state["suspension"]["code"] == "STATION_RESTART"
            seq = proc.post({"type": "resume"}, "supervisor")["seq"]
            while seq + 1 < lost[1] - 4:  # refused, but rows: the new round 4 where 5 was
                seq = proc.post({"type": "resume"}, "supervisor")["seq"]
            again = deal(proc, range(4, 7))  # shoe 1 goes on from round 3: new rounds 4-6
            wait_for(lambda: len(results(settled)) == 9, "the new rounds' results")
            rows = proc.rows()
        verified = station(
            "journal",
            "verify",
            "--config",
            str(config),
            "--public-key",
            str(tmp_path / "station.pem"),
        )
        assert verified.returncode == 0, verified.stderr
    # The old ids ({table}:{seq}:{type}) would have been used twice: the same seqs, other
    # rounds.
    assert set(again) & set(lost), (again, lost)
    got = results(settled)
    ids = [e["id"] for e in got]
    assert len(set(ids)) == len(ids) == 9  # every genuine result settled, each once
    assert [e["round"] for e in got] == [1, 2, 3, 4, 5, 6, 4, 5, 6]
    assert [e["seq"] for e in got] == first + lost + again
    journals = {e["journal"] for e in got}
    assert len(journals) == 1  # one journal, restored: its identity stays
    before, after = {e["epoch"] for e in got[:6]}, {e["epoch"] for e in got[6:]}
    assert len(before) == len(after) == 1 and before != after  # a new epoch
    (notice,) = [r for r in rows if r["event"].get("message") == "journal restored"]
    assert notice["seq"] > first[-1]  # after the backup's last row
    assert notice["event"]["epoch"] == 2
    assert notice["event"]["rows_not_restored"] > 0
    for result in got:
        table, journal, epoch, seq, kind = result["id"].split(":")
        assert (table, journal, epoch, int(seq), kind) == (
            TABLE,
            result["journal"],
            result["epoch"],
            result["seq"],
            "round_result",
        )


def test_a_backup_that_does_not_verify_is_refused_and_nothing_is_touched(tmp_path: Path) -> None:
    config, tokens = write_config(tmp_path)
    with running(config, tokens) as proc:
        proc.post({"type": "shoe"}, "dealer")
        backup = tmp_path / "b.db"
        assert station("journal", "backup", str(backup), "--config", str(config)).returncode == 0
        refused = station("journal", "restore", str(backup), "--config", str(config))
        assert refused.returncode == 2 and "stop it first" in refused.stderr  # it runs
    journal = tmp_path / "var" / "journal.db"
    before = journal.read_bytes()
    db = sqlite3.connect(backup)
    db.execute("UPDATE journal SET actor = 'someone' WHERE seq = 2")
    db.commit()
    db.close()
    refused = station("journal", "restore", str(backup), "--config", str(config))
    assert refused.returncode == 1
    assert "does not verify" in refused.stderr and "row 2" in refused.stderr
    assert journal.read_bytes() == before
    assert not list(tmp_path.glob("var/*.restoring*"))
    assert not list(tmp_path.glob("var/*.replaced-*"))


def test_events_the_replaced_journal_still_owed_are_carried_over(tmp_path: Path) -> None:
    """The game server was down when the disk failed: what the journal replaced still owed
    it goes into the restored journal's outbox, with its own ids (sent at the next start)."""
    path = tmp_path / "var" / "journal.db"
    with Journal(path) as journal:
        journal.start("t-1", Table())
        journal.owe([("hook", 1, "t-1:a:b:1:shoe_started", b"{}")])
        journal.backup(tmp_path / "b.db")
        journal.owe([("hook", 2, "t-1:a:b:2:round_result", b"{}")])  # after the backup
    with restore.no_station(path):
        staged = restore.stage(tmp_path / "b.db", path, None)
        assert restore.carry_owed(staged, path) == 1
        assert [entry[2] for entry in staged.journal.owed()] == [
            "t-1:a:b:1:shoe_started",
            "t-1:a:b:2:round_result",
        ]
        staged.discard()
    assert not list(path.parent.glob("*.restoring*"))
