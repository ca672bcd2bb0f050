"""The floor-wide SHOE_SEQUENCE check: every table's archived cards against every shoe of
the floor (issue 15 with the floor on).

Why here and not in the stations: a station's index holds its own shoes; the floor
archive has every table's rows, so a shoe at table B that repeats a shoe of table A is
found whatever PC each station runs on. The check is the station's own (`Protector`, k
from the floor index's size by `run_length`), one per table, over one SQLite index of the
floor's shoes (`SqliteHistory`, `[protection] index`).

Off the ack path: the consumer hands each commit's accepted rows over (`committed`, a
queue put after the commit, before the acks) and a thread of its own checks them. An
alert is written into the archive's `alert` table (kind SHOE_SEQUENCE, from a connection
of the thread's own) and the board gets the new alert list. The index failing turns the
check off with an alert on the floor view; the archive goes on.

At start the thread catches up like the station's checker: each table's rows from the
start of its shoe before the current one (every row when the index is new, which builds
it from the archive), in the order of their time across tables; an alert the archive
already has (same table, shoe and earlier shoe) is not raised again.

A supervisor who accepts a table's new epoch (a journal restored without the floor) sends
the table's rows back to the epoch's first row: the new epoch's rows carry seqs the check
has passed already. The table's check starts again from the shoe that row falls in, read
from the archive (the rows before the epoch stay what they were), then takes the new
epoch's rows as they come.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from station.core.protection import SHOE_SEQUENCE, Alert, Protector, run_length
from station.floor.alerts import ALERTS_KEPT, raise_alert, read_alerts, shoe_of
from station.floor.alerts import Alert as FloorAlert
from station.floor.arrival import FloorRow
from station.floor.config import FloorServiceConfig
from station.floor.said import Said
from station.shared.protection_index import ProtectionIndexError, SqliteHistory
from station.shared.rows import CREATED, now_ts

log = logging.getLogger("station.floor.protection")

#: The decks of a table whose journal's first row is not at hand (punto banco's usual).
DEFAULT_DECKS = 8
#: Rows checked at a time while catching up at start.
CATCH_UP_CHUNK = 5000
#: Seconds a write into the archive waits for the consumer's commit to finish.
BUSY_TIMEOUT = 10.0

#: A row the thread checks: table, seq, ts, kind, event text, verdict text.
_Row = tuple[str, int, str, str, str, str | None]
#: What the thread is handed: tables whose new epoch begins at a row, then rows.
_Batch = tuple[dict[str, int], tuple[_Row, ...]]


def alert_words(table: str, alert: Alert, k: int) -> Said:
    """How the floor names a floor-wide SHOE_SEQUENCE: the table, its shoe (the journal
    row of its `shoe` event), the card, and the earlier shoe (its table, row and time)."""
    words = (
        f"floor check: table {table}, shoe at row {alert.shoe}, row {alert.seq}: "
        f"{alert.message} (k = {k} over the floor's shoes); stop dealing from this shoe, "
        "keep its cards and call surveillance"
    )
    figures = {n: v for n, v in alert.as_dict().items() if n not in ("code", "message", "advice")}
    figures |= {"alert": alert.code, "table": table, "seq": alert.seq, "floor_k": k}
    return Said("floor_protection", words, figures)


class FloorProtection:
    """The check's thread, its index and what it says (`status`)."""

    def __init__(self, config: FloorServiceConfig) -> None:
        self.config = config.protection
        self.archive_path = config.archive.path
        self.index_path: Path = self.config.index_path(config.archive.path)
        #: Why the check is off (the index cannot be used, a bug), else None.
        self.error: str | None = None
        self.error_raised: str | None = None
        self.running = False
        #: Called on the event loop with the archive's alert list after new alerts.
        self.on_alerts: Callable[[list[FloorAlert]], None] | None = None
        self._queue: queue.SimpleQueue[_Batch | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._history: SqliteHistory | None = None
        self._protectors: dict[str, Protector] = {}
        self._checked: dict[str, int] = {}  # table -> last seq checked
        self._raised: dict[tuple[str, int | None], list[str]] = {}  # (table, shoe) -> messages
        self._pending = 0  # batches handed over and not checked yet
        self._lock = threading.Lock()

    # -- on the event loop ----------------------------------------------------------------

    def start(self, heads: dict[str, int]) -> None:
        """Start the thread: it catches up to `heads` (each table's last archived row when
        the consumer had not started yet), then checks the commits from then on."""
        if not self.config.enabled:
            return
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(
            target=self._run, args=(dict(heads),), name="floor protection", daemon=True
        )
        self._thread.start()

    def committed(self, rows: Iterable[FloorRow], rewound: dict[str, int] | None = None) -> None:
        """A commit's accepted rows, from the consumer or a decision (`rewound`: the tables
        whose new epoch it began, at which row): one queue put, nothing decided here."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        batch = tuple((r.table, r.seq, r.ts, r.kind, r.event, r.verdict) for r in rows)
        if batch or rewound:
            with self._lock:
                self._pending += 1
            self._queue.put((dict(rewound or {}), batch))

    async def stop(self) -> None:
        """Stop the thread (what it has not checked is checked at the next start)."""
        self._queue.put(None)
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 10.0)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Whether the thread has checked everything handed to it (tests, benchmarks)."""
        if not self.config.enabled:
            return True
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.error is not None or (self.running and self._pending == 0):
                return True
            time.sleep(0.02)
        return False

    def status(self) -> dict[str, Any]:
        """What the floor view says about the check: on, k now, why it is off."""
        history = self._history
        shoes = history.shoes() if history is not None and self.running else None
        k = {}
        if shoes is not None:
            for table, protector in list(self._protectors.items()):
                k[table] = run_length(shoes, protector.decks, self.config.false_alarm)
        return {
            "enabled": self.config.enabled,
            "running": self.running and self.error is None,
            "error": self.error,
            "index": str(self.index_path),
            "history_shoes": shoes,
            "k": k,
        }

    def error_alert(self) -> FloorAlert | None:
        """The check being off, as an alert of the floor's list (not of a table)."""
        if self.error is None:
            return None
        return FloorAlert(
            0,
            "",
            None,
            "protection",
            self.error,
            self.error_raised or now_ts(),
            code="protection_off",
            params={"error": self.error},
        )

    # -- the thread -----------------------------------------------------------------------

    def _run(self, heads: dict[str, int]) -> None:
        try:
            self._history = history = SqliteHistory(self.index_path)
        except ProtectionIndexError as exc:
            self._off(
                f"the floor-wide SHOE_SEQUENCE check is off: {exc}; the archive and the "
                "stations' own checks go on; restart the floor service once fixed"
            )
            return
        try:
            db = sqlite3.connect(self.archive_path, timeout=BUSY_TIMEOUT, isolation_level=None)
        except sqlite3.Error as exc:
            history.close()
            self._off(f"the floor-wide SHOE_SEQUENCE check is off: the archive: {exc}")
            return
        try:
            self._load_raised(db)
            self._catch_up(db, heads)
            self.running = True
            while (handed := self._queue.get()) is not None:
                rewound, batch = handed
                try:
                    for table, first in rewound.items():
                        self._rewind(db, table, first)
                    self._check(db, batch)
                finally:
                    with self._lock:
                        self._pending -= 1
        except Exception as exc:  # the index broke, or a bug: the archive goes on
            log.exception("the floor-wide protection check stopped")
            self._off(
                f"the floor-wide SHOE_SEQUENCE check stopped ({exc}): the archive goes on; "
                "check the index file and restart the floor service"
            )
        finally:
            self.running = False
            db.close()
            history.close()

    def _off(self, message: str) -> None:
        log.error("%s", message)
        self.error = message
        self.error_raised = now_ts()

    def _load_raised(self, db: sqlite3.Connection) -> None:
        for table, message in db.execute(
            "SELECT table_id, message FROM alert WHERE kind = ?", (SHOE_SEQUENCE,)
        ):
            self._raised.setdefault((table, shoe_of(message)), []).append(message)

    def _catch_up(self, db: sqlite3.Connection, heads: dict[str, int]) -> None:
        """Each table's rows from the start of its shoe before the current one (all of
        them when the index is new) to its head at start, in time order across tables."""
        assert self._history is not None
        rebuild = self._history.shoes() == 0
        # A connection of its own for the reads: the alerts written meanwhile go through
        # `db`, whose read snapshot must not be held open across the consumer's commits.
        reader = sqlite3.connect(f"file:{self.archive_path}?mode=ro", uri=True)
        try:
            self._catch_up_from(reader, db, heads, rebuild)
        finally:
            reader.close()

    def _catch_up_from(
        self,
        reader: sqlite3.Connection,
        db: sqlite3.Connection,
        heads: dict[str, int],
        rebuild: bool,
    ) -> None:
        sources = []
        for table, head in heads.items():
            first = 1
            if not rebuild:
                shoes = _shoe_rows(reader, table, head, 2)
                if not shoes:
                    continue
                first = shoes[-1]
            sources.append(
                reader.execute(
                    "SELECT table_id, seq, ts, kind, event, verdict FROM row "
                    "WHERE table_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
                    (table, first, head),
                )
            )
        # Streamed (a new index reads the whole archive), merged by time across tables.
        merged = heapq.merge(*sources, key=lambda r: (r[2], r[0], r[1]))
        total = 0
        while chunk := tuple(itertools.islice(merged, CATCH_UP_CHUNK)):
            self._check(db, chunk)
            total += len(chunk)
        if total:
            log.info("floor protection: caught up on %d rows of %d tables", total, len(heads))

    def _rewind(self, db: sqlite3.Connection, table: str, first: int) -> None:
        """The table's new epoch begins at row `first`: its check starts again from the
        `shoe` row at or before `first - 1` (rows the new epoch keeps), so the new epoch's
        rows are checked as they come, within their shoe. Alerts of the rows read again
        are in the archive already and not raised twice; their shoes are in the index."""
        self._protectors.pop(table, None)
        start = next(iter(_shoe_rows(db, table, first - 1, 1)), None)
        self._checked[table] = (start or first) - 1
        if start is not None:
            rows = db.execute(
                "SELECT table_id, seq, ts, kind, event, verdict FROM row "
                "WHERE table_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
                (table, start, first - 1),
            ).fetchall()
            self._check(db, tuple(rows))
        log.info("floor protection: table %s checked again from row %d (a new epoch)", table, first)

    def _check(self, db: sqlite3.Connection, batch: tuple[_Row, ...]) -> None:
        found: list[tuple[str, Alert]] = []
        for table, seq, ts, kind, event_text, verdict_text in batch:
            if seq <= self._checked.get(table, 0):
                continue  # checked at the catch-up already
            self._checked[table] = seq
            event = orjson.loads(event_text)
            if kind == "notice" and event.get("alert") == SHOE_SEQUENCE:
                # The station's own notice (archived as an alert): not raised twice.
                shoe = event.get("shoe_seq")
                key = (table, shoe if isinstance(shoe, int) else None)
                self._raised.setdefault(key, []).append(str(event.get("earlier", "")))
            if kind != "event" or verdict_text is None:
                continue
            protector = self._protector(db, table)
            for alert in protector.row(event, orjson.loads(verdict_text), seq, ts):
                if alert.code == SHOE_SEQUENCE:  # WEAK_SHUFFLE: the station's own notice
                    found.append((table, alert))
        fresh = [(t, a) for t, a in found if not self._known(t, a)]
        if not fresh:
            return
        raised = now_ts()
        db.execute("BEGIN IMMEDIATE")
        try:
            for table, alert in fresh:
                said = alert_words(table, alert, int(alert.details.get("k", 0)))
                raise_alert(db, table, alert.seq, SHOE_SEQUENCE, said, raised)
                self._raised.setdefault((table, alert.shoe), []).append(said.message)
                log.error("floor alert: table %s: %s", table, said.message)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        self._tell(db)

    def _known(self, table: str, alert: Alert) -> bool:
        """Whether the archive has this alert already (a restart's catch-up, or the
        station's own notice of a repeat within its table)."""
        earlier = str(alert.details.get("earlier", ""))
        return any(earlier in m for m in self._raised.get((table, alert.shoe), ()))

    def _protector(self, db: sqlite3.Connection, table: str) -> Protector:
        found = self._protectors.get(table)
        if found is None:
            assert self._history is not None
            found = self._protectors[table] = Protector(
                self._history,
                _decks_of(db, table),
                table=table,
                budget=self.config.false_alarm,
                shuffles=False,  # WEAK_SHUFFLE is the station's own notice
            )
        return found

    def _tell(self, db: sqlite3.Connection | None) -> None:
        """The board's alert list, fresh from the archive, to the event loop."""
        loop, tell = self._loop, self.on_alerts
        if loop is None or tell is None:
            return
        alerts: list[FloorAlert] | None = None
        if db is not None:
            alerts = read_alerts(db, ALERTS_KEPT)  # with their acknowledgements
        if alerts is not None:
            loop.call_soon_threadsafe(tell, alerts)


def _shoe_rows(db: sqlite3.Connection, table: str, up_to: int, count: int) -> list[int]:
    """The seqs of the table's last `count` accepted `shoe` rows at or before `up_to`,
    latest first: where a check that reads the table again begins."""
    return [
        seq
        for (seq,) in db.execute(
            "SELECT seq FROM row WHERE table_id = ? AND seq <= ? AND kind = 'event' "
            "AND json_extract(event, '$.type') = 'shoe' AND json_extract(verdict, '$.ok') "
            "ORDER BY seq DESC LIMIT ?",
            (table, up_to, count),
        )
    ]


def _decks_of(db: sqlite3.Connection, table: str) -> int:
    """The table's decks, from its journal's first row (the station's settings)."""
    row = db.execute(
        "SELECT event FROM row WHERE table_id = ? AND kind = 'notice' ORDER BY seq LIMIT 1",
        (table,),
    ).fetchone()
    if row is not None:
        event = orjson.loads(row[0])
        settings = event.get("table")
        if event.get("message") == CREATED and isinstance(settings, dict):
            decks = settings.get("decks")
            if isinstance(decks, int) and decks > 0:
                return decks
    return DEFAULT_DECKS
