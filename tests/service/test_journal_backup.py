"""`station journal backup`: a consistent copy while the station deals, that verifies and
restores into the same table."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import httpx
import pytest

from station.live.journal import Journal
from tests.conftest import run_station
from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server

DEAL = [{"type": "card", "card": c} for c in ("3H", "KS", "QD", "TC")]


def test_a_backup_taken_while_events_arrive_verifies_and_restores(
    live: Running, tmp_path: Path
) -> None:
    live.post({"type": "shoe"}, "dealer")
    for event in DEAL:
        live.post(event)
    stop = threading.Event()

    def keep_posting() -> None:  # the station keeps journaling while the copy is made
        while not stop.is_set():
            live.post({"type": "close_bets"}, "dealer")

    poster = threading.Thread(target=keep_posting)
    poster.start()
    try:
        dest = tmp_path / "backup" / "journal.db"
        dest.parent.mkdir()
        done = run_station(
            "journal", "backup", str(dest), "--journal", str(live.station.config.journal.path)
        )
    finally:
        stop.set()
        poster.join()
    assert done.returncode == 0, done.stderr
    assert b"verified" in done.stdout
    assert (dest.parent / "journal.db.head").is_file()
    with Journal(dest) as copy:
        report = copy.verify()
        assert report.ok and report.rows >= 7
        copied = report.last_seq

    # Restore: the copy (and its anchor) as the journal of a new station on the same table.
    config, tokens = make_config(tmp_path / "restored")
    restored = config.journal.path
    restored.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(dest, restored)
    shutil.copy(dest.parent / "journal.db.head", restored.with_name(restored.name + ".head"))
    with serve(config, tokens) as back:
        state = httpx.get(f"{back.url}/api/state", headers=back.headers("viewer")).json()
        assert state["seq"] == copied + 1  # the restart row after the copied ones
        assert state["suspension"]["code"] == "STATION_RESTART"
        assert state["burned"] == ["3H", "KS", "QD", "TC"]


def test_a_backup_never_overwrites(live: Running, tmp_path: Path) -> None:
    dest = tmp_path / "there.db"
    dest.write_bytes(b"precious")
    done = run_station(
        "journal", "backup", str(dest), "--journal", str(live.station.config.journal.path)
    )
    assert done.returncode == 2
    assert b"exists already" in done.stderr
    assert dest.read_bytes() == b"precious"


def test_a_backup_into_a_missing_folder_says_so(live: Running, tmp_path: Path) -> None:
    dest = tmp_path / "no-such-folder" / "journal.db"
    done = run_station(
        "journal", "backup", str(dest), "--journal", str(live.station.config.journal.path)
    )
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr
    assert f"no folder {dest.parent} for the backup".encode() in done.stderr
    assert not dest.parent.exists()
