"""The floor service's life: open the archive, replay it into the board, then consume.

The consumer is a JetStream durable pull consumer with explicit acks: it fetches a batch,
commits it to the archive (one transaction, durable when it returns), hands the result
to the board, and only then acks each message. A service killed between its commit and
its ack gets the batch again (after `[broker] ack_wait`), and the archive's idempotent
insert on (table, seq) makes that a no-op: every row is archived exactly once. At most
`batch` messages are out unacknowledged (`max_ack_pending`), so what the broker sends
again comes before anything newer, in order.

A supervisor's decision (acknowledge an alert, accept a gap or a new chain: `decide`) is
a transaction of the same archive connection, taken in turn with the commits; its rows go
to the board and the protection check as a commit's do.

The broker may be down at start or go away later: the service keeps serving the floor
view from its archive, says so on the view, and keeps trying to connect. An archive that
cannot be written (disk full) acks nothing: the rows come again and are taken then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Callable
from typing import Any

import nats
import nats.errors
import nats.js.errors
import orjson
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from station.floor.archive import Archive, Committed
from station.floor.arrival import Arrival
from station.floor.beats import Believed
from station.floor.board import Board
from station.floor.config import FloorServiceConfig
from station.floor.decisions import DecisionRefused
from station.floor.protection import FloorProtection
from station.floor.said import Said
from station.floor.schema import ArchiveError
from station.shared.messages import (
    ROW_BYTES,
    Alert,
    BadMessage,
    Heartbeat,
    parse_subject,
    stream_config,
    wildcard,
)

log = logging.getLogger("station.floor")

#: The first and the longest wait between two tries to reach the broker.
FIRST_BACKOFF = 0.5
MAX_BACKOFF = 10.0
#: How long one fetch waits for rows before it asks again (and checks for a stop).
FETCH_WAIT = 1.0
#: The broker's errors that mean "try again later", not "this service is broken".
BROKER_ERRORS: tuple[type[BaseException], ...] = (
    nats.errors.Error,
    nats.js.errors.Error,
    OSError,
    TimeoutError,
)


class ConsumerConflict(Exception):
    """The durable consumer on the broker is another site's (the message says what to do)."""


class FloorService:
    """The archive, the board and the consumer of one floor."""

    def __init__(
        self,
        config: FloorServiceConfig,
        clock: Callable[[], float] = time.monotonic,
        after_commit: Callable[[Committed], None] | None = None,
    ) -> None:
        self.config = config
        self.board = Board(config, clock)
        #: The floor-wide SHOE_SEQUENCE check (a thread of its own, off the ack path).
        self.protection = FloorProtection(config)
        self.protection.on_alerts = self.board.checked_alerts
        self.board.witness.on_forged = self._forged
        self._alerting: set[asyncio.Task[None]] = set()
        self.archive: Archive | None = None
        self.ready = False
        #: Why the service stopped for good (the archive cannot be opened), else None.
        self.fatal: str | None = None
        #: Called after each commit, before its acks (tests: a kill right there).
        self.after_commit = after_commit
        self.on_ready: Callable[[], None] | None = None
        self.on_fatal: Callable[[str], None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._nc: Client | None = None
        self._wait = FIRST_BACKOFF
        #: One archive transaction and its hand-over to the board at a time, so the board
        #: gets the results in the order of the transactions.
        self._turn = asyncio.Lock()

    async def start(self) -> None:
        """Open the archive, replay it into the board, start consuming (in the background)."""
        try:
            self.archive = await asyncio.to_thread(
                Archive, self.config.archive.path, self.config.floor.held_rows
            )
        except ArchiveError as exc:
            self._fail(str(exc))
            return
        await asyncio.to_thread(self.board.load, self.archive)
        rows = sum(v.seq for v in self.board.views.values())
        log.info(
            "floor archive %s: %d tables, %d rows",
            self.config.archive.path,
            len(self.board.views),
            rows,
        )
        self.protection.start({t: seq for t, (seq, _) in self.archive.heads.items()})
        self.ready = True
        if self.on_ready is not None:
            self.on_ready()
        self._task = asyncio.create_task(self._consume(), name="floor consumer")

    def _fail(self, message: str) -> None:
        log.critical(message)
        self.fatal = message
        if self.on_fatal is not None:
            self.on_fatal(message)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        await self.protection.stop()
        if self._nc is not None and not self._nc.is_closed:
            with contextlib.suppress(*BROKER_ERRORS):
                await self._nc.close()
        if self.archive is not None:
            self.archive.close()
            self.archive = None

    # -- the broker ----------------------------------------------------------------------

    async def _consume(self) -> None:
        """Connect, consume, and on any broker trouble try again (with a growing pause)."""
        broker = self.config.broker
        while True:
            try:
                await self._session()
            except asyncio.CancelledError:
                raise
            except ConsumerConflict as exc:
                if self.board.broker != f"refused: {exc}":
                    log.error("%s", exc)
                self.board.broker_up = False
                self.board.broker = f"refused: {exc}"
                self._wait = MAX_BACKOFF
            except BROKER_ERRORS as exc:
                words = str(exc) or type(exc).__name__
                if self.board.broker_up or self.board.broker != f"unreachable: {words}":
                    log.warning(
                        "the broker %s cannot be used (%s); trying again every few seconds",
                        ", ".join(broker.servers),
                        words,
                    )
                self.board.broker_up = False
                self.board.broker = f"unreachable: {words}"
            finally:
                if self._nc is not None and not self._nc.is_closed:
                    with contextlib.suppress(*BROKER_ERRORS):
                        await self._nc.close()
                self._nc = None
            await asyncio.sleep(self._wait)
            self._wait = min(self._wait * 2, MAX_BACKOFF)

    async def _session(self) -> None:
        broker = self.config.broker
        board = self.board

        async def disconnected() -> None:
            if nc.is_closed or nc.is_draining:  # closed by this service (stop)
                return
            board.broker_up = False
            board.broker = "disconnected: reconnecting"
            log.warning("the broker went away; reconnecting")

        async def reconnected() -> None:
            board.broker_up = True
            board.broker = "connected"
            log.info("the broker is back")

        async def error(exc: Exception) -> None:
            """nats-py tries again for ever (at start too) and says why here."""
            if board.broker_up:
                log.debug("broker: %s", exc)
                return
            words = f"unreachable: {exc or type(exc).__name__}"
            if board.broker != words:
                log.warning(
                    "the broker %s cannot be reached (%s); trying again every second",
                    broker.url,
                    exc or type(exc).__name__,
                )
                board.broker = words

        self._nc = nc = await nats.connect(
            broker.servers,
            name=f"station floor {broker.site}",
            connect_timeout=max(1, round(broker.timeout)),
            allow_reconnect=True,
            max_reconnect_attempts=-1,
            reconnect_time_wait=1,
            ping_interval=5,
            max_outstanding_pings=2,
            disconnected_cb=disconnected,
            reconnected_cb=reconnected,
            error_cb=error,
            **broker.connect_options(),
        )
        js = nc.jetstream(timeout=broker.timeout)
        await self._ensure_stream(js)
        await nc.subscribe(wildcard("heartbeat", broker.site), cb=self._on_heartbeat)
        await nc.subscribe(wildcard("alert", broker.site), cb=self._on_alert)
        await self._ensure_consumer(js)
        sub = await js.pull_subscribe_bind(durable=broker.durable, stream=broker.stream)
        board.broker_up = True
        board.broker = "connected"
        self._wait = FIRST_BACKOFF  # the next trouble starts over with a short pause
        log.info(
            "consuming floor.%s.*.journal from %s as %s",
            broker.site,
            nc.connected_url.netloc if nc.connected_url else "?",
            broker.durable,
        )
        while True:
            try:
                msgs = await sub.fetch(broker.batch, timeout=FETCH_WAIT)
            except nats.errors.TimeoutError:
                continue
            await self._take(nc, msgs)

    async def _ensure_stream(self, js: Any) -> None:
        """The stream, made if the operator has not made it yet (the stations' definition,
        on `[broker] replicas` brokers, each table's rows and the whole bounded by
        `[broker] table_rows` and `stream_bytes`); one that exists keeps its replicas and
        bounds (said if they are not the config's, or it has none: changing them is the
        operator's move)."""
        broker = self.config.broker
        try:
            info = await js.stream_info(broker.stream)
        except nats.js.errors.NotFoundError:
            await js.add_stream(
                stream_config(
                    broker.stream,
                    replicas=broker.replicas,
                    max_msgs_per_subject=broker.table_rows,
                    max_bytes=broker.stream_bytes,
                )
            )
            log.info("made the stream %s (%d replicas)", broker.stream, broker.replicas)
            return
        unbounded = [
            name
            for name, value in (
                ("max-msgs-per-subject", info.config.max_msgs_per_subject),
                ("max-bytes", info.config.max_bytes),
                ("max-msg-size", info.config.max_msg_size),
            )
            if value is None or value <= 0
        ]
        if unbounded:  # a stream made before issue 32: one table's login can fill it
            log.warning(
                "the stream %s has no %s: one table's broker login can fill it and every "
                "table's publishes then fail (set them: `nats stream edit %s "
                "--max-msgs-per-subject %d --max-bytes %d --max-msg-size %d`, "
                "docs/floor-publishing.md, 'Sizing the broker')",
                broker.stream,
                " nor ".join(unbounded),
                broker.stream,
                broker.table_rows,
                broker.stream_bytes,
                ROW_BYTES,
            )
        replicas = info.config.num_replicas or 1
        if replicas != broker.replicas:
            log.warning(
                "the stream %s keeps each row on %d brokers, [broker] replicas says %d: "
                "the stream is left as it is (change it with `nats stream edit %s "
                "--replicas %d`)",
                broker.stream,
                replicas,
                broker.replicas,
                broker.stream,
                broker.replicas,
            )

    async def _ensure_consumer(self, js: Any) -> None:
        """The durable consumer, made or updated to this config (`batch`, `ack_wait`); one
        that reads another site's subjects is refused: it would resume from that site's
        position and skip this site's earlier rows."""
        broker = self.config.broker
        subjects = wildcard("journal", broker.site)
        try:
            info = await js.consumer_info(broker.stream, broker.durable)
        except nats.js.errors.NotFoundError:
            info = None
        if info is not None and info.config.filter_subject != subjects:
            raise ConsumerConflict(
                f"the durable consumer {broker.durable!r} reads "
                f"{info.config.filter_subject or 'the whole stream'}, not {subjects}: give "
                "[broker] durable a name of its own for this site"
            )
        await js.add_consumer(
            broker.stream,
            ConsumerConfig(
                name=broker.durable,
                durable_name=broker.durable,
                filter_subject=subjects,
                ack_policy=AckPolicy.EXPLICIT,
                deliver_policy=DeliverPolicy.ALL,
                ack_wait=broker.ack_wait,
                max_ack_pending=broker.batch,
            ),
        )

    async def _take(self, nc: Client, msgs: list[Msg]) -> None:
        """Commit a fetched batch, then ack it; a failed commit acks nothing."""
        assert self.archive is not None
        arrivals = [Arrival(_table_of(m.subject), m.data) for m in msgs]
        archive = self.archive
        done: Committed | None = None
        async with self._turn:
            try:
                done = await asyncio.to_thread(archive.commit, arrivals)
            except (sqlite3.Error, OSError) as exc:
                log.error(
                    "the floor archive %s cannot be written (%s): nothing acked, the rows "
                    "come again; free the disk or fix the file",
                    self.config.archive.path,
                    exc,
                )
                self.board.broker = f"connected; the archive cannot be written: {exc}"
            else:
                self.board.committed(done)
                self.protection.committed(done.accepted)
        if done is None:
            await asyncio.sleep(1.0)
            return
        if self.after_commit is not None:
            self.after_commit(done)
        for msg in msgs:
            await msg.ack()
        await nc.flush()

    async def decide(self, decision: Callable[[Archive], Committed]) -> Committed:
        """A supervisor's decision (`Archive.acknowledge`, `accept_gap`, `accept_chain`),
        taken in a thread in turn with the commits, then shown on the board; the rows it
        lets in go to the protection check. `DecisionRefused` says why it cannot be."""
        archive = self.archive
        if archive is None or not self.ready:
            raise DecisionRefused(503, self.fatal or "the floor service is starting: retry")
        async with self._turn:
            done = await asyncio.to_thread(decision, archive)
            self.board.committed(done)
            self.protection.committed(done.accepted, rewound=done.epochs_begun)
        return done

    def _forged(self, table: str, words: Said, kind: str) -> None:
        """A heartbeat or alert in `table`'s name its station did not sign, or a signed
        heartbeat sent again: the archive raises `kind` (FORGED_MESSAGE, STALE_HEARTBEAT;
        in turn with the commits), then the board shows it."""
        archive = self.archive
        if archive is None:
            return

        async def alert() -> None:
            try:
                async with self._turn:
                    done = await asyncio.to_thread(archive.forged_message, table, words, kind)
                    self.board.committed(done)
            except (sqlite3.Error, OSError) as exc:
                log.error(
                    "table %s: a forged message not alerted (%s): %s", table, exc, words.message
                )

        task = asyncio.create_task(alert(), name=f"forged message {table}")
        self._alerting.add(task)
        task.add_done_callback(self._alerting.discard)

    async def _on_heartbeat(self, msg: Msg) -> None:
        """A station is alive: its table online, how far its journal is (unless it is not
        the table's station: the board decides, the archive's hash of the row it names at
        hand when the board asks for it)."""
        try:
            beat = Heartbeat.decode(msg.data)
            _, table, _ = parse_subject(msg.subject)
        except BadMessage as exc:
            log.debug("ignored on %s: %s", msg.subject, exc)
            return
        if beat.table != table:
            log.debug("ignored on %s: a heartbeat of table %s", msg.subject, beat.table)
            return
        payload = orjson.loads(msg.data)  # decoded above: an object; may name a dashboard
        archived = None
        archive = self.archive
        if archive is not None and self.board.unchecked(beat):
            async with self._turn:  # the archive's connection, between two transactions
                row = await asyncio.to_thread(archive.row, table, beat.seq)
            archived = None if row is None else row.hash
        believed = self.board.heartbeat(beat, payload.get("dashboard"), archived)
        if believed and archive is not None and self.board.witness.trusted(table) is not None:
            try:  # a signed heartbeat believed: kept, so a restarted floor refuses it again
                async with self._turn:
                    await asyncio.to_thread(archive.believe, table, Believed.of(beat))
            except (sqlite3.Error, OSError) as exc:
                log.error("table %s: its last heartbeat believed not kept (%s)", table, exc)

    async def _on_alert(self, msg: Msg) -> None:
        """What a station says the floor must see at once (e.g. its publisher refused)."""
        try:
            alert = Alert.decode(msg.data)
            _, table, _ = parse_subject(msg.subject)
        except BadMessage as exc:
            log.debug("ignored on %s: %s", msg.subject, exc)
            return
        if self.board.station_alert(table, alert):  # not one its station did not sign
            log.warning("table %s says: %s (%s)", table, alert.message, alert.code)


def _table_of(subject: str) -> str:
    """The table a journal subject names (the subject itself if it is not one)."""
    try:
        return parse_subject(subject)[1]
    except BadMessage:
        return subject
