"""The live station: the parts between every source of events and every listener, wired.

Events come from the reader thread (`readers.ReaderSupervisor`), from the API and from the
service itself (`restart` at start, `fault` when the reader crashes). They all go to one
writer (`writer.Writer`), which decides, commits and only then hands each batch on. The
station wires what follows a commit, in journal order: the API's answer (the writer's
futures), the new snapshot (`readers.CommittedView`, which the demo bot waits on), the
game protection (`protection.monitor`), the WebSocket fan-out (`fanout.FanOut`), the
webhook events owed (`outbox.Outbox`), the shoe's card stop, then the log lines and metrics
(`observe.Observer`); the floor publisher (`publisher.link`) is woken once the batch is in
the listeners' queues. Each part gets what it needs at construction or through a narrow
callback: none of them holds the station.

Start-up work (opening and replaying the journal) runs on a thread so the API can answer
503 meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from drivers.base import CardReader
from drivers.config import parse_bytes
from station.core.snapshot import TableSnapshot
from station.core.table import Table
from station.live.config import StationConfig
from station.live.errors import NotReady
from station.live.fanout import FanOut, Subscriber, published
from station.live.floorcheck import FloorCheck
from station.live.journal import Journal
from station.live.journal.epoch import DISCONTINUITY
from station.live.journal.keys import read_endorsements
from station.live.observe import Observer, StationCollector
from station.live.outbox import Outbox
from station.live.protection.monitor import ProtectionMonitor, StationLink
from station.live.publisher.link import PublisherLink
from station.live.publisher.settings import KeyFile
from station.live.readers import CommittedView, ReaderSupervisor
from station.live.writer import Commit, Queued, Writer
from station.shared.rows import Pending, Row, notice, now_ts

log = logging.getLogger("station.live.service")

#: The outbox's hold while the station starts (`Outbox.hold`): released once the journal's
#: chain, signatures, anchor and outbox are checked and the restart row is journaled.
STARTUP_HOLD = "start-up checks"


class Station:
    """The service: start it in a running event loop, submit events, subscribe."""

    def __init__(self, config: StationConfig, reader: CardReader | None = None) -> None:
        self.config = config
        self.ready = False
        self.on_fatal: Callable[[str], None] | None = None
        #: Called on the loop with a line for systemd's status when the journal becomes
        #: unavailable and when it is written again.
        self.on_status: Callable[[str], object] | None = None
        self.on_ready: Callable[[], None] | None = None  # called on the loop once ready
        #: Called (with what systemd's status should say) when the station serves but
        #: waits for a journal it cannot open yet (its disk full or read-only).
        self.on_waiting: Callable[[str], None] | None = None
        self._disk = ThreadPoolExecutor(1, thread_name_prefix="journal")
        #: The loop it runs on, once started (threads hand it work through it).
        self.loop: asyncio.AbstractEventLoop | None = None
        #: What a supervisor must see of the station's own integrity checks (a forged
        #: outbox, a journal discontinuity): shown with the journal's status.
        self.alerts: list[dict[str, Any]] = []
        self.outbox = Outbox(
            config, lambda: self.writer.table, lambda: self.journal, self.post, self.alert
        )
        self.outbox.hold(STARTUP_HOLD)  # nothing is delivered before the start-up checks pass
        self.writer = Writer(
            config.table.id,
            config.table.new_table,
            self._on_disk,
            self.outbox,
            committed=self._committed,
            unwritable=self._unwritable,
            status=self._status,
            refused=lambda bridged: self.view.settle(bridged),
            fatal=self._fatal,
        )
        self.view = CommittedView(self.writer.snapshot)
        self.readers = ReaderSupervisor(
            reader,
            self.view,
            self.writer.put,
            config.stop_command,
            parse_bytes(config.signals.release_command),
        )
        key = KeyFile.of(config.journal)
        #: Webhooks wait for the publisher's comparison of the floor's stream with the
        #: journal (a floor is configured), and what a failed one withholds.
        self.floor_check = FloorCheck(
            self.outbox, lambda: self.journal, self.journal_notice, self._on_disk, self.alert
        )
        if config.floor.enabled:
            self.floor_check.hold()
        self.publisher = PublisherLink(
            config.floor,
            config.table.id,
            config.journal.path,
            self.post,
            key,
            checked=self.floor_check.checked if config.floor.enabled else None,
        )
        #: Committed batches, counted, logged and checked once broadcast (`_broadcast`).
        self._broadcasting: deque[Commit] = deque()
        self.fanout = FanOut(sent=self._broadcast)
        #: Log lines and metrics of committed rows (`station.live.observe`).
        self.observer = Observer(
            config.table.id,
            StationCollector(
                self.reader_status if reader is not None else None,
                lambda: len(self.fanout.subscribers),
                self.outbox.webhooks.failures,
                config.journal.path,
            ),
        )
        #: The game-protection checks, fed each committed batch (`[protection]`).
        self.protection = (
            ProtectionMonitor(
                config.protection,
                config.table.id,
                config.table.decks,
                config.journal.path,
                StationLink(
                    self.journal_notice,
                    self.submit,
                    self.outbox.send,
                    lambda: self.closing,
                ),
            )
            if config.protection.enabled
            else None
        )

    # -- what the API and the tests read -----------------------------------------------

    @property
    def reader(self) -> CardReader | None:
        return self.readers.reader

    @property
    def journal(self) -> Journal | None:
        return self.writer.journal

    @property
    def table(self) -> Table:
        return self.writer.table

    @property
    def snapshot(self) -> TableSnapshot:
        return self.view.snapshot

    @property
    def fatal(self) -> str | None:
        """Why the station cannot go on (a foreign journal, a broken chain), or None."""
        return self.writer.fatal

    @property
    def unavailable(self) -> str | None:
        """Why the journal cannot be written (or opened) now, or None: events are refused
        meanwhile, and the writer recovers by itself."""
        return self.writer.unavailable

    @property
    def subscribers(self) -> dict[Subscriber, None]:
        return self.fanout.subscribers

    @property
    def closing(self) -> bool:
        """Stopping or failed: no more commits will come (waiters stop waiting)."""
        return self.readers.stopping or self.fatal is not None

    def reader_status(self) -> dict[str, Any]:
        return self.readers.status()

    def journal_status(self) -> dict[str, Any]:
        return {**self.writer.journal_status(), **self._alerts_field()}

    def _alerts_field(self) -> dict[str, Any]:
        return {"alerts": list(self.alerts)} if self.alerts else {}

    def alert(self, code: str, message: str, params: dict[str, Any] | None = None) -> None:
        """A station alert a supervisor sees (the dashboard's journal banner, `/api/state`
        `journal.alerts`), logged as an error; journaled by whoever raises it. `message`
        is the English words (logs, older clients); `params` the figures the dashboard
        says them with in its own language (by `code`)."""
        said = {"code": code, "message": message, "params": params or {}, "since": now_ts()}
        self.alerts = [*self.alerts, said]
        log.error("station alert %s: %s", code, message)
        if self.loop is not None and self.writer.journal is not None and self.ready:
            self.fanout.publish([], self.snapshot, self.reader_status(), self.journal_status())

    def published_state(self) -> dict[str, Any]:
        """The state as the WebSocket and `/api/state` show it: the latest snapshot, the
        reader's status now (a cheap dict from the driver, no I/O) and the journal's."""
        return published(self.snapshot, self.reader_status(), self.journal_status())

    # -- life cycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Open and replay the journal, journal `restart`, start the reader: then ready."""
        cfg, writer = self.config, self.writer
        self.loop = asyncio.get_running_loop()
        self.observer.serve(cfg.api.metrics_address)
        # SigningError: it cannot start (the message names the command that makes a key)
        key = await self._on_disk(cfg.journal.load_key, os.environ, cfg.source)
        rotations = cfg.journal.rotations
        endorsements = (
            [] if rotations is None else await self._on_disk(read_endorsements, rotations)
        )
        waited = await writer.open(cfg.journal.path, self._waiting)
        journal = writer.journal
        assert journal is not None
        # JournalError: a chain or a signature that does not hold (it cannot start: the
        # message names `journal verify` and `journal restore`), or an unsigned journal and
        # a key (`journal adopt`); a discontinuity is journaled in a new epoch and alerted.
        await self._on_disk(
            journal.start, cfg.table.id, writer.table, key, endorsements, rotations, cfg.source
        )
        found = await self._on_disk(_discontinuity_of, journal)
        if found is not None:
            self._discontinuity_alert(*found)
        self.outbox.start()  # held: nothing goes out before every check below has passed
        await self.outbox.send_owed(journal, self._on_disk)  # each checked: none forged
        if key is None:
            log.warning(
                "the journal %s is unsigned: anyone who can write its file can rewrite it "
                "undetected; give [journal] signing_key a key (`station key init`)",
                cfg.journal.path,
            )
        else:
            log.info("the journal is signed with key %s", key.public.fingerprint)
        replayed = await self._on_disk(journal.replay_into, writer.table)
        writer.replayed(replayed.suspended_since)
        self.view.publish(writer.snapshot, 0)
        if self.protection is not None:  # it reads the journal back to here on its thread
            self.protection.start(journal.last_seq)
        log.info(
            "journal %s: replayed %d events (last row %d)",
            cfg.journal.path,
            replayed.events,
            journal.last_seq,
        )
        if cfg.floor.enabled:
            self.floor_check.began(journal)
        self.publisher.start(lambda: (self.snapshot, self.unavailable))
        self.fanout.start()
        writer.start()
        # The restart row names the paytable in force from now on (the journal's record of
        # what the game server settled on; a new row here would renumber every later one).
        paytable = cfg.table.load_paytable().name
        restart = await self._journal_restart({"type": "restart", "paytable": paytable})
        if (
            restart is not None
            and writer.table.suspension is not None
            and writer.suspended_since != restart.seq
        ):
            # Suspended before the restart: notices still queued then died with the old
            # process, so say it again (the game server treats ids as idempotent).
            self.outbox.send(self.outbox.body("suspended", restart))
            self.readers.to_shoe("suspended")
        if waited is not None:  # after the restart row: the wait before it
            self.post(
                notice(
                    "station",
                    "station",
                    "the journal could not be opened",
                    since=waited.since,
                    until=now_ts(),
                    reason=waited.reason,
                )
            )
            log.warning("the journal is open at last (row %d)", journal.last_seq)
        self.readers.start()
        self.outbox.release(STARTUP_HOLD)
        self.ready = True
        if self.on_ready is not None:
            self.on_ready()

    def _discontinuity_alert(self, reason: str, since: int) -> None:
        """Alert a discontinuity (found now, or the one the journal's epoch began at: it is
        said at every start of that epoch, until a restore begins another)."""
        self.alert(
            "JOURNAL_DISCONTINUITY",
            f"the journal is not the one this station last signed: {reason}; it goes on "
            f"in a new epoch from row {since} (no id is given twice). Check it with "
            "`station journal verify` (and --against-floor); `station journal restore` "
            "is the way back to the station's own record",
            {"detail": reason, "since": since},
        )

    def fail(self, message: str) -> None:
        """The station cannot go on (it could not start): stop serving, say why."""
        self.writer.fatal = message
        self._fatal(message)

    async def _journal_restart(self, event: dict[str, Any]) -> Row | None:
        """Journal `restart`; None if the journal cannot be written already (the station
        still starts: the writer journals a `fault` once it can, which suspends the table
        just the same)."""
        try:
            return await self.submit(event, "station", "station")
        except NotReady:
            if self.unavailable is None:
                raise
            return None

    async def stop(self) -> None:
        self.ready = False
        self.view.close()  # a reader waiting for its rows stops waiting
        await self.readers.stop()
        if self.protection is not None:
            await self.protection.stop()
        await self.writer.stop()
        await self.outbox.stop(self._on_disk)
        journal = self.journal
        # The last rows if the broker takes them now.
        await self.publisher.stop(journal.last_seq if journal is not None else 0)
        await self.fanout.stop()  # after the writer: every committed batch goes out
        if journal is not None:
            await self._on_disk(journal.close)
        self._disk.shutdown(wait=True)
        self.observer.close()

    async def _on_disk(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._disk, fn, *args)

    # -- sources -------------------------------------------------------------------------

    async def submit(self, event: dict[str, Any], source: str, actor: str) -> Row:
        """Decide, commit and publish one event; returns its committed row.

        :raises NotReady: the station cannot take events now (503).
        :raises Refused: the event cannot be stored (422)."""
        return await self.writer.submit(event, source, actor)

    async def journal_notice(self, pending: Pending) -> Row:
        """Journal a notice of the station's own and wait until it is committed."""
        return await self.writer.journal_notice(pending)

    def post(self, pending: Pending) -> None:
        """Queue a row without waiting (notices of the service itself)."""
        self.writer.put(Queued(pending))

    def reader_event(self, reader_name: str, event: dict[str, Any]) -> None:
        """An event as the reader thread sends it (called on the loop)."""
        self.readers.take(reader_name, event)

    def subscribe(self) -> Subscriber:
        """A listener for every batch committed after the current snapshot (`sub.after`
        is its seq: the rows up to it are the listener's backfill, read from the journal).
        """
        return self.fanout.subscribe(self.snapshot.seq)

    def unsubscribe(self, sub: Subscriber) -> None:
        self.fanout.unsubscribe(sub)

    # -- the writer's callbacks ----------------------------------------------------------

    def _committed(self, commit: Commit) -> None:
        """A batch is on disk: tell everyone, in journal order, off the writer's path."""
        rows = commit.rows
        self.view.publish(commit.snapshot, commit.bridged)
        self._broadcasting.append(commit)  # observed and checked once broadcast
        # The journal's status is "writable": this batch was just committed (even while
        # `unavailable` still names the outage it ends).
        journal = {"writable": True, **self._alerts_field()}
        self.fanout.publish(rows, commit.snapshot, self.reader_status(), journal)
        self.outbox.queue(commit.owed)
        for _i, what, _fields in commit.signals:
            self.readers.to_shoe(what)

    def _broadcast(self) -> None:
        """A committed batch is in every listener's queue (or on its socket): now wake the
        floor publisher, hand the batch to the protection checks (their thread) and count
        and log it (`observer`). Not before: that is work a card's way to the dashboards
        need not wait for, and the protection thread, once woken, takes the interpreter
        from the event loop at its next turn, before the WebSocket send (issue 36)."""
        self.publisher.committed()
        if not self._broadcasting:
            return
        commit = self._broadcasting.popleft()  # one a call, in commit order (`FanOut`)
        if self.protection is not None:
            self.protection.committed(commit.rows)
        self.observer.committed(commit.items, commit.rows, commit.changes, commit.done)

    def _unwritable(self) -> None:
        """The journal cannot be written: nothing is committed meanwhile, so every listener
        hears it from a state alone."""
        self.fanout.publish([], self.snapshot, self.reader_status(), self.journal_status())

    def _status(self, line: str) -> None:
        if self.on_status is not None:
            self.on_status(line)

    def _waiting(self, line: str) -> None:
        if self.on_waiting is not None:
            self.on_waiting(line)

    def _fatal(self, message: str) -> None:
        self.ready = False
        self.view.close()
        if self.on_fatal is not None:
            self.on_fatal(message)


def _discontinuity_of(journal: Journal) -> tuple[str, int] | None:
    """What the journal's epoch began at if it was a discontinuity (found at this start, or
    at an earlier one): its words and the row; None if not."""
    found = journal.discontinuity
    epoch = journal.epoch
    if found is not None:
        return found.reason, epoch.since
    began = next(journal.rows(after=epoch.since - 1, limit=1), None)
    if began is None or began.event.get("message") != DISCONTINUITY:
        return None
    return str(began.event.get("found", "")), epoch.since
