"""The live game-protection checks: committed rows in, alerts journaled as notices out.

Off the verdict path: the writer hands each committed batch over (`committed`, a queue
put) and a thread of its own runs the `Protector` on it, with the SQLite index
(`protection_index`). An alert goes back to the event loop, where it is journaled as a
notice (actor `protection`, `alert` = its code) through the writer like every row, and
only once committed is it told: the WebSocket carries the notice row like any other,
the webhooks get a `protection_alert` event, and with `[protection] suspend_on` a
`fault` naming the alert suspends the table (the supervisor resumes it).

At start the checker reads the journal back from the start of the shoe before the
current one, so the shuffle of the current shoe has its previous shoe and a shoe in
progress is watched from its first card; alerts of those rows already journaled (same
code, shoe and earlier shoe) are not journaled again, those the station died before
journaling are.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from station.core.protection import Alert, Protector, run_length
from station.live.errors import NotReady
from station.live.protection.config import ProtectionConfig
from station.live.protection.looks import LookWorker
from station.shared.protection_index import ProtectionIndexError, SqliteHistory
from station.shared.rows import Pending, Row, notice

log = logging.getLogger("station.live.protection")

ACTOR = "protection"
#: Alerts kept for `/api/protection` (the dashboard after a reload).
RECENT = 50
#: Seconds between tries to journal an alert while the journal cannot be written.
RETRY = 1.0

_Batch = tuple[tuple[int, str, dict[str, Any], dict[str, Any] | None], ...]


@dataclass(frozen=True, slots=True)
class StationLink:
    """What the monitor needs of its station: to journal a notice and wait for its row,
    to submit a `fault` (an alert in `suspend_on`), to tell the game server, and whether
    the station is stopping. Each raises `NotReady` while the journal cannot be written."""

    journal_notice: Callable[[Pending], Awaitable[Row]]
    submit: Callable[[dict[str, Any], str, str], Awaitable[Row]]
    send_webhook: Callable[[dict[str, Any]], None]
    closing: Callable[[], bool]


class ProtectionMonitor:
    """The protection checks of a live station (one per station)."""

    def __init__(
        self,
        config: ProtectionConfig,
        table_id: str,
        decks: int,
        journal_path: Path,
        station: StationLink,
    ) -> None:
        self.station = station
        self.config = config
        self.table_id = table_id
        self.decks = decks
        self.journal_path = journal_path
        self.index_path = config.index_path(journal_path)
        self.recent: list[dict[str, Any]] = []  # the latest alerts as journaled, newest last
        self.error: str | None = None  # why the checks are not running, if they are not
        self._queue: queue.SimpleQueue[_Batch | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._protector: Protector | None = None
        self._journaled: set[str] = set()  # keys of the alerts journaled (this shoe on)
        self._tasks: set[asyncio.Future[Any]] = set()

    # -- life cycle (on the event loop) ---------------------------------------------------

    def start(self, last_seq: int) -> None:
        """Start the checker's thread: it catches up on rows up to `last_seq` (those the
        journal had at start), then takes the batches committed from now on."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(
            target=self._run, args=(last_seq,), name="protection", daemon=True
        )
        self._thread.start()

    async def stop(self) -> None:
        """Stop the thread (what it has not checked yet is checked again at the next start)."""
        self._queue.put(None)
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 5.0)
        for task in list(self._tasks):
            task.cancel()

    def committed(self, rows: Iterable[Row]) -> None:
        """A committed batch, from the writer: one queue put, nothing decided here."""
        thread = self._thread
        if thread is None or not thread.is_alive():  # off (its error says why): no backlog
            return
        batch = tuple((r.seq, r.ts, r.event, r.verdict) for r in rows if r.actor != ACTOR)
        if batch:
            self._queue.put(batch)

    def status(self) -> dict[str, Any]:
        """What `/api/protection` answers: whether it runs, k now, the recent alerts."""
        protector = self._protector
        shoes = protector.history.shoes() if protector is not None else None
        decks = self.decks
        return {
            "enabled": self.config.enabled,
            "running": protector is not None and self.error is None,
            "error": self.error,
            "index": str(self.index_path),
            "history_shoes": shoes,
            "k": None if shoes is None else run_length(shoes, decks, self.config.false_alarm),
            "weak_below": self.config.weak_below,
            "suspend_on": list(self.config.suspend_on),
            "alerts": list(reversed(self.recent)),
        }

    # -- the checker's thread -----------------------------------------------------------

    def _run(self, last_seq: int) -> None:
        cfg = self.config
        try:
            history = SqliteHistory(self.index_path)
        except ProtectionIndexError as exc:
            self.error = str(exc)
            log.error("game protection is off: %s", exc)
            return
        looks = LookWorker()
        protector = Protector(
            history,
            self.decks,
            table=self.table_id,
            budget=cfg.false_alarm,
            weak_threshold=cfg.weak_below,
            looker=looks,
        )
        try:
            looks.start()  # its interpreter's start-up now, not in the middle of a shoe
            self._catch_up(protector, last_seq)
            self._protector = protector
            while (batch := self._queue.get()) is not None:
                for seq, ts, event, verdict in batch:
                    self._raise(protector.row(event, verdict, seq, ts))
        except Exception as exc:  # a bug: say so, the table goes on without the checks
            self.error = f"the protection checks stopped: {exc}"
            log.exception("the protection checks stopped")
        finally:
            looks.close()
            history.close()

    def _catch_up(self, protector: Protector, last_seq: int) -> None:
        """Feed the rows from the start of the shoe before the current one to `last_seq`,
        journaling only the alerts not journaled before."""
        path = self.journal_path
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            shoes = db.execute(
                "SELECT seq FROM journal WHERE kind = 'event' AND seq <= ? AND "
                "json_extract(event, '$.type') = 'shoe' AND json_extract(verdict, '$.ok') "
                "ORDER BY seq DESC LIMIT 2",
                (last_seq,),
            ).fetchall()
            if not shoes:
                return
            first = shoes[-1][0]
            rows = db.execute(
                "SELECT seq, ts, actor, event, verdict FROM journal "
                "WHERE seq BETWEEN ? AND ? ORDER BY seq",
                (first, last_seq),
            ).fetchall()
        finally:
            db.close()
        alerts: list[Alert] = []
        for seq, ts, actor, event_text, verdict_text in rows:
            event = orjson.loads(event_text)
            if actor == ACTOR and "alert" in event:
                self._journaled.add(_key_of(event))
                self._remember(event, seq, ts)
                continue
            verdict = orjson.loads(verdict_text) if verdict_text is not None else None
            alerts += protector.row(event, verdict, seq, ts)
        self._raise([a for a in alerts if a.key not in self._journaled])
        log.info("game protection: caught up from row %d to row %d", first, last_seq)

    def _raise(self, alerts: list[Alert]) -> None:
        """Hand alerts to the event loop (journal, then tell)."""
        loop = self._loop
        for alert in alerts:
            self._journaled.add(alert.key)
            if loop is not None:
                loop.call_soon_threadsafe(self._spawn, alert)

    # -- on the event loop ------------------------------------------------------------

    def _spawn(self, alert: Alert) -> None:
        task = asyncio.ensure_future(self._journal_and_tell(alert))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _journal_and_tell(self, alert: Alert) -> None:
        station = self.station
        details = alert.as_dict()
        message = details.pop("message")
        pending = notice("station", ACTOR, message, alert=details.pop("code"), **details)
        while True:
            try:
                row = await station.journal_notice(pending)
                break
            except NotReady:
                if station.closing():
                    return  # checked again, and journaled, at the next start
                await asyncio.sleep(RETRY)
        log.warning("protection alert %s (row %d): %s", alert.code, row.seq, alert.message)
        self._remember(row.event, row.seq, row.ts)
        table_id = self.table_id
        station.send_webhook(  # the id (the journal's epoch and the row) is named there
            {
                "type": "protection_alert",
                "table": table_id,
                "seq": row.seq,
                "ts": row.ts,
                "event": row.event,
                "source": row.source,
                "actor": row.actor,
                **alert.as_dict(),
            }
        )
        if alert.code in self.config.suspend_on:
            detail = f"protection alert {alert.code} (row {row.seq}): {alert.message}"
            try:
                await station.submit({"type": "fault", "detail": detail}, "station", ACTOR)
            except NotReady:
                log.error("the table could not be suspended for alert %s", alert.code)

    def _remember(
        self, event: dict[str, Any], seq: int | None = None, ts: str | None = None
    ) -> None:
        entry = {k: v for k, v in event.items() if k != "type"}
        if seq is not None:
            entry.update(seq=seq, ts=ts)
        self.recent = [*self.recent, entry][-RECENT:]


def _key_of(event: dict[str, Any]) -> str:
    """`Alert.key` of a journaled alert notice."""
    return f"{event.get('alert')}:{event.get('shoe_seq')}:{event.get('earlier', '')}"
