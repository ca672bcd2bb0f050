"""Foreign files are refused and left as they were: the journal, the floor archive and the
protection index open only a new file (none, or an empty one) or a file stamped as their
own. Each foreign file of the corpus is given to each store through the program that
opens it (`station run` and `station journal verify`, `station floor`, the station with
`[protection]` on): refused with a message naming the file and what to do, and the
file's bytes, its mtime and its folder's listing unchanged (no WAL switched on, no
`user_version` written, no table, no `-wal`, `-shm`, `-journal` or lock file added)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from station.floor.archive import Archive
from station.floor.schema import APPLICATION_ID as ARCHIVE_ID
from station.live.journal import Journal
from station.live.journal.schema import APPLICATION_ID as JOURNAL_ID
from station.live.journal.schema import COLUMNS
from station.shared.protection_index import APPLICATION_ID as INDEX_ID
from station.shared.protection_index import SCHEMA, SCHEMA_VERSION, SqliteHistory
from tests.conftest import run_station, spawn_run, spawn_station
from tests.netkit import free_port

pytestmark = pytest.mark.server

#: Each store's main table, named as the store names it.
OUR_TABLES = {
    "journal": f"CREATE TABLE journal ({', '.join(COLUMNS)})",  # as station 0.1.0 made it
    "archive": "CREATE TABLE row (table_id TEXT, seq INTEGER, hash TEXT)",
    "index": "CREATE TABLE shoes (id INTEGER PRIMARY KEY, source TEXT, label TEXT, cards BLOB)",
}
#: Where the refusal's advice sends the operator, by store.
ADVICE = {
    "journal": "give [journal] path a file of its own",
    "archive": "give [archive] path a file of its own",
    "index": "give [protection] index a file of its own",
}


def sqlite_file(path: Path, *statements: str) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        for sql in statements:
            db.execute(sql)
    finally:
        db.close()


def only_a_view(path: Path, store: str) -> None:
    sqlite_file(path, "CREATE VIEW totals AS SELECT 1 AS n")


def only_user_version(path: Path, store: str) -> None:
    sqlite_file(path, "PRAGMA user_version = 7")


def another_application(path: Path, store: str) -> None:
    sqlite_file(path, "PRAGMA application_id = 305419896")  # 0x12345678


def a_table_named_like_ours(path: Path, store: str) -> None:
    sqlite_file(path, OUR_TABLES[store])


def a_wal_database(path: Path, store: str) -> None:
    """Another program's database in WAL mode, cleanly closed (no -wal, no -shm)."""
    sqlite_file(path, "PRAGMA journal_mode=WAL", "CREATE TABLE customers (id, name)")


def a_text_file(path: Path, store: str) -> None:
    path.write_text("shoe orders for next week\n" * 40)


CORPUS: list[Callable[[Path, str], None]] = [
    only_a_view,
    only_user_version,
    another_application,
    a_table_named_like_ours,
    a_wal_database,
    a_text_file,
]
#: What the refusal says the file is.
WORDS = {
    only_a_view: "views totals",
    only_user_version: "user_version 7",
    another_application: "application_id 0x12345678",
    a_wal_database: "tables customers",
    a_text_file: "not a SQLite database",
}


def foreign_file(tmp_path: Path, make: Callable[[Path, str], None], store: str) -> Path:
    """The corpus's file `make` in a folder of its own, its mtime set in the past (so a
    write now would show)."""
    folder = tmp_path / "store"
    folder.mkdir()
    path = folder / "given.db"
    make(path, store)
    assert {p.name for p in folder.iterdir()} == {"given.db"}
    past = time.time_ns() - 3_600 * 10**9
    os.utime(path, ns=(past, past))
    return path


def snapshot(path: Path) -> tuple[bytes, int, list[str]]:
    """The file's bytes, its mtime and its folder's listing."""
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


def check_refusal(message: str, path: Path, store: str, make: Callable[[Path, str], None]) -> None:
    assert str(path) in message, message
    assert ADVICE[store] in message, message
    assert "left untouched" in message, message
    if make in WORDS:
        assert WORDS[make] in message, message


def refused(proc: subprocess.Popen[str]) -> str:
    """The stderr of a program that must stop at once, refusing its file (killed if it is
    still running after a while: it took the file)."""
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("it started on the foreign file instead of refusing it") from None
    assert proc.returncode not in (0, -signal.SIGTERM), out
    return err


def station_config(folder: Path, journal: Path, *lines: str) -> tuple[Path, str]:
    """A station's config in `folder` (demo tokens; `lines` added) and its URL."""
    config = folder / "station.toml"
    bind = f"127.0.0.1:{free_port()}"
    config.write_text(
        f'[journal]\npath = "{journal}"\n[api]\nbind = "{bind}"\ndemo_tokens = true\n'
        + "\n".join(lines)
    )
    return config, f"http://{bind}"


@pytest.mark.parametrize("make", CORPUS, ids=lambda make: make.__name__)
def test_station_run_refuses_a_foreign_journal(tmp_path: Path, make: Callable[..., None]) -> None:
    path = foreign_file(tmp_path, make, "journal")
    before = snapshot(path)
    config, _ = station_config(tmp_path, path)
    err = refused(spawn_run(config, log_level="error"))
    assert snapshot(path) == before
    check_refusal(err, path, "journal", make)


@pytest.mark.parametrize("make", CORPUS, ids=lambda make: make.__name__)
def test_journal_verify_refuses_a_foreign_file(tmp_path: Path, make: Callable[..., None]) -> None:
    path = foreign_file(tmp_path, make, "journal")
    before = snapshot(path)
    done = run_station("journal", "verify", "--journal", str(path))
    assert done.returncode != 0
    assert snapshot(path) == before
    check_refusal(done.stderr.decode(), path, "journal", make)


@pytest.mark.parametrize("make", CORPUS, ids=lambda make: make.__name__)
def test_station_floor_refuses_a_foreign_archive(tmp_path: Path, make: Callable[..., None]) -> None:
    path = foreign_file(tmp_path, make, "archive")
    before = snapshot(path)
    config = tmp_path / "floor.toml"
    config.write_text(
        f'[broker]\nurl = "nats://127.0.0.1:{free_port()}"\nsite = "site-1"\n'
        f'[archive]\npath = "{path}"\n'
        f'[api]\nbind = "127.0.0.1:{free_port()}"\ndemo_tokens = true\n'
        '[[table]]\nid = "table-1"\n'
    )
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    err = refused(spawn_station("floor", "--config", str(config), "--log-level", "error", **pipes))
    assert snapshot(path) == before
    check_refusal(err, path, "archive", make)


@pytest.mark.parametrize("make", CORPUS, ids=lambda make: make.__name__)
def test_the_station_refuses_a_foreign_protection_index(
    tmp_path: Path, make: Callable[..., None]
) -> None:
    path = foreign_file(tmp_path, make, "index")
    before = snapshot(path)
    config, url = station_config(
        tmp_path,
        tmp_path / "var" / "journal.db",
        "[protection]",
        "enabled = true",
        f'index = "{path}"',
    )
    proc = spawn_run(config, log_level="error")
    try:
        assert proc.stdout is not None
        viewer = None
        for line in proc.stdout:
            parts = line.split()
            if len(parts) == 2 and parts[0] == "viewer":
                viewer = parts[1]
                break
        assert viewer is not None
        headers = {"Authorization": f"Bearer {viewer}"}
        deadline = time.monotonic() + 30
        while True:  # the station answers once it has started; the checks start then
            assert proc.poll() is None
            answer = httpx.get(f"{url}/api/protection", headers=headers, timeout=5)
            status = answer.json() if answer.status_code == 200 else {"error": None}
            if status["error"] is not None or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert status["running"] is False
        assert snapshot(path) == before
        check_refusal(status["error"], path, "index", make)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    assert proc.returncode in (0, -signal.SIGTERM)
    assert snapshot(path) == before


@pytest.mark.parametrize("store", ["journal", "archive", "index"])
def test_an_empty_file_is_not_foreign_it_is_new(tmp_path: Path, store: str) -> None:
    path = tmp_path / "given.db"
    path.touch()
    if store == "journal":
        Journal(path).close()
        stamp = JOURNAL_ID
    elif store == "archive":
        Archive(path).close()
        stamp = ARCHIVE_ID
    else:
        SqliteHistory(path).close()
        stamp = INDEX_ID
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA application_id").fetchone()[0] == stamp
    finally:
        db.close()


def test_a_file_whose_stamp_is_still_in_its_wal_is_its_stores_own(tmp_path: Path) -> None:
    """A writer killed before its first checkpoint leaves its newest pages, the stamped
    header among them, in the `-wal` only (an index of an earlier station, which switched
    to WAL before stamping itself): the file is still the store's own."""
    path = tmp_path / "index.db"
    script = (
        f"BEGIN IMMEDIATE; {SCHEMA} PRAGMA application_id = {INDEX_ID}; "
        f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
    )
    killed = (
        "import os, sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA journal_mode=WAL')\n"
        "db.executescript(sys.argv[2])\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", killed, str(path), script], check=True)
    assert path.read_bytes()[68:72] == bytes(4)  # the header on disk: not stamped yet
    assert path.with_name("index.db-wal").stat().st_size > 0
    SqliteHistory(path).close()
