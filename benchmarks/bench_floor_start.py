"""The floor service's start: from opening its archive to a board of every table (what it
does before it answers and consumes), before and after the tips.

An archive of 300 tables, each with the same 10,000 journal rows (8-deck shoes of
`station simulate`, decided by the core, hashed by the station's journal; the same rows
for each table, as (table, seq) keys them), and one of 300 tables x 1,000 rows: does
the start grow with the archive?

- before: what the floor service did until now: each table's head by a query over every
  row, then every row of every table replayed by the core (`TableView.apply`);
- after: `Archive` (its tips, one row per table) and `Board.load` (each table from its
  latest shoe, the settings from its first row).

Both boards are checked to show the same tables before anything is compared. The archive
is written just before (the OS has it in its cache): the figures are of a warm start.
`BENCH_FLOOR_START_TABLES` and `BENCH_FLOOR_START_ROWS` change the sizes.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from station.core.table import Table
from station.floor.archive import Archive
from station.floor.board import Board
from station.floor.config import FloorServiceConfig
from station.floor.tip import Tip
from station.live.journal import Journal
from station.shared.rows import Pending, Row

TABLES = int(os.environ.get("BENCH_FLOOR_START_TABLES", "300"))
ROWS = int(os.environ.get("BENCH_FLOOR_START_ROWS", "10000"))


def journal_rows(folder: Path, count: int) -> list[Row]:
    """`count` rows of one station's journal: its first row, then simulated shoes."""
    out = subprocess.run(
        [sys.executable, "-m", "station.cli", "simulate", "--seed", "2026", "--shoes",
         str(count // 400 + 2)],
        capture_output=True, check=True, text=True,
    ).stdout  # fmt: skip
    events = [
        {k: v for k, v in orjson.loads(line).items() if k not in ("actor", "expect", "fault")}
        for line in out.splitlines()[: count - 1]
    ]
    table = Table(decks=8)
    with Journal(folder / "journal.db") as journal:
        journal.start("t", table)
        pending = [Pending("api", "bench", e, dict(table.decide(e).verdict)) for e in events]
        journal.append(pending)
        return list(journal.rows())


def build_archive(path: Path, rows: list[Row], tables: int) -> None:
    """An archive of `tables` tables with these rows each, written straight in (fast)."""
    Archive(path).close()
    tip = Tip()
    stored = []
    for row in rows:
        event = orjson.dumps(row.event, option=orjson.OPT_SORT_KEYS).decode()
        verdict = (
            None
            if row.verdict is None
            else orjson.dumps(row.verdict, option=orjson.OPT_SORT_KEYS).decode()
        )
        stored.append((row.seq, row.ts, row.source, row.actor, row.kind, event, verdict,
                       row.prev_hash, row.hash, row.ts))  # fmt: skip
        tip = tip.after(row.seq, row.hash, row.kind, event, verdict)
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous=OFF")
    for n in range(tables):
        table = f"table-{n:03d}"
        db.executemany(
            "INSERT INTO row VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(table, *r) for r in stored],
        )
        db.execute(
            "INSERT INTO tip VALUES (?, ?, ?, ?, ?, ?)",
            (table, tip.seq, tip.hash, tip.created_seq, tip.shoe_seq, tip.shoes),
        )
    db.commit()
    db.close()


def start_before(path: Path) -> tuple[float, dict[str, Any]]:
    """The start as it was: heads by a query over every row, every row replayed."""
    started = time.perf_counter()
    db = sqlite3.connect(path)
    heads = db.execute(
        "SELECT table_id, seq, hash FROM row r WHERE seq = "
        "(SELECT max(seq) FROM row WHERE table_id = r.table_id)"
    ).fetchall()
    db.close()
    with Archive(path) as archive:
        board = Board(FloorServiceConfig())
        for table in archive.tables():
            view = board.view(table)
            for row in archive.rows(table):
                view.apply(row)
    seconds = time.perf_counter() - started
    assert len(heads) == len(board.views)
    return seconds, {t: board.table(t) for t in board.views}


def start_after(path: Path) -> tuple[float, dict[str, Any]]:
    """The start now: the archive's tips, each table from its latest shoe."""
    started = time.perf_counter()
    with Archive(path) as archive:
        board = Board(FloorServiceConfig())
        board.load(archive)
    seconds = time.perf_counter() - started
    return seconds, {t: board.table(t) for t in board.views}


def measure(folder: Path, rows: list[Row], tables: int, per_table: int) -> None:
    path = folder / f"floor-{per_table}.db"
    build_archive(path, rows[:per_table], tables)
    size = path.stat().st_size / 2**20
    tip = Tip()
    for row in rows[:per_table]:
        event = orjson.dumps(row.event, option=orjson.OPT_SORT_KEYS).decode()
        verdict = None if row.verdict is None else orjson.dumps(row.verdict).decode()
        tip = tip.after(row.seq, row.hash, row.kind, event, verdict)
    window = tip.seq - tip.replay_from + 1
    after, shown_after = start_after(path)
    again, _ = start_after(path)
    before, shown_before = start_before(path)
    assert shown_after == shown_before, "the fast start shows other tables than a full replay"
    print(
        f"   {tables} tables x {per_table:,} rows ({tables * per_table:,} rows, {size:.0f} MiB): "
        f"start before {before:.2f} s, after {min(after, again) * 1000:.0f} ms "
        f"({before / min(after, again):.0f}x; the latest shoe: {window} rows a table)",
        flush=True,
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-floor-start-") as tmp:
        folder = Path(tmp)
        rows = journal_rows(folder, ROWS)
        shoes = sum(1 for r in rows if r.event.get("type") == "shoe")
        print(f"   one journal: {len(rows):,} rows, {shoes} shoes (8 decks)", flush=True)
        for per_table in sorted({min(1000, ROWS), ROWS // 2, ROWS}):
            measure(folder, rows, TABLES, per_table)


if __name__ == "__main__":
    main()
