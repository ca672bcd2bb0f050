"""The history of earlier shoes on disk: the SQLite index `SequenceWatch` looks runs up in.

Why SQLite: one file that survives restarts and power cuts (WAL, a commit per finished
shoe), several stations of a floor can share it (WAL lets many readers and one writer
at a time), and a B-tree lookup of an exact integer key costs microseconds at 10^8 rows.

Layout: `shoes` holds each finished shoe's card order (one byte a card) and how alerts
name it; `grams` maps the exact key of every `STRIDE`-th `GRAM`-card window of a shoe to
`shoe << 12 | start` (WITHOUT ROWID: the key is the table, one B-tree, no second index).
A shoe's `source` (table, journal seq, time of its `shoe` row) is unique, so feeding the
same journal twice (a restart, `station protect --index` over an old export) adds it once.
The file is stamped ("BPRO"): a file that is not new and not stamped as an index is
refused before SQLite touches it, and left as it was.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from station.core.protection.sequence import GRAM, STRIDE, stored_windows
from station.shared import stamps

#: SQLite `application_id` of a protection index ("BPRO"): any other file is refused.
APPLICATION_ID = stamps.PROTECTION_INDEX
SCHEMA_VERSION = 1
#: Bits of `ref` that hold a window's start in its shoe (shoes of up to 4096 cards).
START_BITS = 12
SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE shoes (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    cards BLOB NOT NULL
);
CREATE TABLE grams (gram INTEGER NOT NULL, ref INTEGER NOT NULL, PRIMARY KEY (gram, ref))
    WITHOUT ROWID;
INSERT OR IGNORE INTO meta VALUES ('gram', '{GRAM}'), ('stride', '{STRIDE}');
"""


class ProtectionIndexError(Exception):
    """The index file cannot be used; the message says what to do."""


class SqliteHistory:
    """A `History` in a SQLite file (created if missing). Not thread-safe: one owner."""

    def __init__(self, path: str | Path, cache_shoes: int = 256) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            found = stamps.foreign(self.path, APPLICATION_ID)
        except (OSError, sqlite3.DatabaseError) as exc:
            raise ProtectionIndexError(
                f"the protection index {self.path} cannot be read ({exc}): give "
                "[protection] index a path the station may write"
            ) from None
        if found is not None:
            raise ProtectionIndexError(
                f"the protection index {self.path} cannot be opened: it is not a protection "
                f"index ({found.words()}); it was left untouched: give [protection] index a "
                "file of its own (a new index starts in a missing or empty file, and is built "
                "from the shoes dealt from then on)"
            )
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA busy_timeout=5000")
            self._prepare()  # before WAL: a new index is stamped in its own header at once
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
        except sqlite3.DatabaseError as exc:
            with contextlib.suppress(AttributeError, sqlite3.Error):
                self._db.close()
            raise ProtectionIndexError(
                f"the protection index {self.path} cannot be opened ({exc}): give "
                "[protection] index a path the station may write, or move the file away "
                "(a new index is built from the shoes dealt from then on)"
            ) from None
        self._count = self._shoe_count()
        self._cache: OrderedDict[int, bytes] = OrderedDict()
        self._cache_size = cache_shoes

    def _prepare(self) -> None:
        db = self._db
        app = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if (app, version, tables) == (0, 0, 0):
            db.executescript(
                "BEGIN IMMEDIATE;"
                + SCHEMA.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS")
                + f"PRAGMA application_id={APPLICATION_ID};"
                + f"PRAGMA user_version={SCHEMA_VERSION};"
                + "COMMIT;"
            )
            return
        if app != APPLICATION_ID:
            raise sqlite3.DatabaseError("it is not a protection index")
        if version != SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"its layout is version {version}, not {SCHEMA_VERSION}")
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if meta != {"gram": str(GRAM), "stride": str(STRIDE)}:
            raise sqlite3.DatabaseError(f"it was built with other window settings {meta}")

    def close(self) -> None:
        self._db.close()

    def shoes(self) -> int:
        return self._count

    def lookup(self, key: int) -> Sequence[tuple[int, int]]:
        rows = self._db.execute("SELECT ref FROM grams WHERE gram = ?", (key,)).fetchall()
        mask = (1 << START_BITS) - 1
        return [(ref >> START_BITS, ref & mask) for (ref,) in rows]

    def cards(self, shoe: int) -> bytes:
        cached = self._cache.get(shoe)
        if cached is not None:
            self._cache.move_to_end(shoe)
            return cached
        row = self._db.execute("SELECT cards FROM shoes WHERE id = ?", (shoe,)).fetchone()
        cards = bytes(row[0]) if row else b""
        self._cache[shoe] = cards
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return cards

    def _shoe_count(self) -> int:
        """Shoes are never deleted, so the highest id is their number (O(log n))."""
        return int(self._db.execute("SELECT coalesce(max(id), 0) FROM shoes").fetchone()[0])

    def label(self, shoe: int) -> str:
        row = self._db.execute("SELECT label FROM shoes WHERE id = ?", (shoe,)).fetchone()
        return str(row[0]) if row else f"shoe {shoe}"

    def find(self, source: str) -> int | None:
        row = self._db.execute("SELECT id FROM shoes WHERE source = ?", (source,)).fetchone()
        return int(row[0]) if row else None

    def add(self, cards: bytes, label: str, source: str) -> int | None:
        if len(cards) >= 1 << START_BITS:
            raise ValueError(f"a shoe of {len(cards)} cards is too long for the index")
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            cursor = db.execute(
                "INSERT OR IGNORE INTO shoes (source, label, cards) VALUES (?, ?, ?)",
                (source, label, bytes(cards)),
            )
            if cursor.rowcount == 0:
                db.execute("ROLLBACK")
                return None
            shoe = cursor.lastrowid
            assert shoe is not None
            db.executemany(
                "INSERT OR IGNORE INTO grams VALUES (?, ?)",
                [(key, shoe << START_BITS | start) for key, start in stored_windows(cards)],
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._count = self._shoe_count()  # other stations of the floor add theirs too
        return shoe
