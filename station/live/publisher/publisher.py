"""The floor publisher: every committed journal row, in order, exactly once, to JetStream.

The journal is the record; the broker is transport. The publisher runs off the verdict
path (in a process of its own, `station.live.publisher.process`): the writer only tells it
"rows were committed" (`committed`, a no-op while it is busy), and it reads the rows back
from the journal file on its own read-only connection, so a slow or absent broker costs
the table nothing but the floor's delay. Rows wait in the journal.

Exactly once and in order: each row goes to `floor.<site>.<table>.journal` with
`Nats-Expected-Last-Subject-Sequence` set to the stream sequence of the table's previous
row, so the stream stores a row only right after the row before it. After any error (a
publish not acknowledged in time, a broker restarted or frozen, a wrong last sequence)
and at start, the publisher asks the stream for the last row it holds for the table
(`sync`, by `stream.last_held`): that row's hash must be the journal's hash at that seq,
and publishing resumes after it (rows the broker lost are sent again). A message there
that a signed station did not sign is foreign (`foreign`): the station says so and
publishes its own rows after it. A row its key signed that the journal lacks (the journal
shorter than what the station already published, or other at that seq: rolled back or
cut without `journal restore`) is a discontinuity (`_discontinuity`): the station
journals a `journal discontinuity` notice that begins a new epoch (so no id the game
server saw is given again), the publisher alerts, and the new epoch's rows go after the
stream's last as a restore's do. A mismatch otherwise (an unsigned journal), a stream
ahead of the journal, or a second discontinuity met while publishing, means two journals
claim one table: the publisher refuses (publishes nothing), journals a notice, logs an
error, sends an alert and says so in its status (and so in `/api/health` and the
heartbeat); it looks again every `CONFLICT_RETRY` seconds, in case the operator resolved
it.

Once per run, when the stream's tail was first compared with the journal, `on_checked`
is told whether it was sound and what was found: the station keeps its webhooks until
then (a discontinuity's notice is journaled by then, so its new epoch's ids go out).

Rows that wait (after an outage, or while the broker is slow: then the publisher gathers
rows for as long as an acknowledgement takes, up to `MAX_GATHER`) go as atomic batches
of up to `BATCH_MAX` rows: all stored or none, the expected last sequence checked before
the first, one disk sync for all (the broker syncs every acknowledged write).

A heartbeat (core NATS) goes out every `[floor] heartbeat_interval` seconds whatever the
stream does, with the journal's last row and the table's state. With the station's key
(`key`), heartbeats and alerts are signed, as every row of its journal is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client
from nats.errors import Error as NatsError
from nats.js.client import JetStreamContext
from nats.js.errors import APIError

from station.live.journal.epoch import DISCONTINUITY, discontinuity_notice
from station.live.publisher.foreign import ALERT_CODE, ForeignWatch
from station.live.publisher.settings import FloorConfig
from station.live.publisher.state import PublisherStatus, TableState
from station.live.publisher.stream import (
    Conflict,
    Held,
    NotJournaled,
    StreamMissing,
    check_reply,
    check_stream,
    describe,
    last_held,
    proof,
    wrong_last,
)
from station.live.publisher.tail import READ_BATCH, JournalTail
from station.shared.messages import (
    EXPECTED_LAST_SUBJECT_SEQUENCE,
    WRONG_LAST_SEQUENCE,
    Alert,
    Heartbeat,
    JournalMessage,
    alert_subject,
    heartbeat_subject,
    inbox_prefix,
    journal_subject,
)
from station.shared.rows import Pending, Row, notice, now_ts
from station.shared.signing import SigningKey

log = logging.getLogger("station.live.floor")

#: The most rows sent as one atomic batch (the broker's own limit is 1,000 messages).
BATCH_MAX = 100
#: A batch's commit may take `timeout` for each this many rows.
BATCH_PER_TIMEOUT = 20
#: JetStream's error code for a stream that does not allow atomic batches, and how many
#: batches refused in a row (for any other reason) make the publisher send row by row.
ATOMIC_DISABLED = 10174
BATCH_FAILURES = 3
BATCH_ID, BATCH_SEQUENCE, BATCH_COMMIT = "Nats-Batch-Id", "Nats-Batch-Sequence", "Nats-Batch-Commit"
#: Seconds between two looks at the journal when no commit was announced (a safety net:
#: the writer's `committed` call wakes the publisher at once).
POLL = 5.0
#: Seconds the publisher waits after a commit is announced before it reads the rows: the
#: writer's answer and WebSocket broadcast go first, and rows of a burst go together.
AFTER_COMMIT = 0.003
#: The least time between two sends of a table's rows: rows that come faster than this
#: (a burst, a rig dealing back to back; never a dealer's pace) go together, so a burst
#: costs the broker and the dealer PC a few batches, not a send per row.
BURST_GAP = 0.1
#: The longest the publisher gathers rows while the broker is slow to acknowledge.
MAX_GATHER = 1.0
#: Seconds between two syncs while refused (two journals claim the table).
CONFLICT_RETRY = 30.0
#: Backoff after an error, doubling up to the max.
RETRY_FIRST = 0.1
RETRY_MAX = 2.0
#: The notice journaled when the publisher refuses (also `Alert.code` "conflict").
REFUSED = "floor refused: another journal claims this table"
RESUMED = "floor publishing again"
#: The `Alert.code` of a discontinuity found in the stream.
DISCONTINUITY_CODE = "discontinuity"
#: Seconds the publisher waits for the station to journal its discontinuity notice.
NOTICE_WAIT = 10.0


class Publisher:
    """One table's publisher, run as a task of an event loop (`run`). The station gives
    it a process of its own (`station.live.publisher.process`); the benchmark runs many in
    one loop."""

    def __init__(
        self,
        config: FloorConfig,
        table: str,
        journal: Path,
        *,
        state: Callable[[], Awaitable[TableState]] | None = None,
        journal_notice: Callable[[Pending], None] | None = None,
        key: SigningKey | None = None,
    ) -> None:
        """`key`: the station's signing key, which signs its heartbeats and alerts (its
        rows come signed from the journal); None: they go unsigned."""
        self.config = config
        self.table = table
        self.site = config.site
        self.subject = journal_subject(self.site, table)
        self.tail = JournalTail(journal)
        self.key = key
        #: The messages at the table's subject that this station did not sign.
        self.foreign = ForeignWatch(self.tail)
        #: The last journal row the stream is known to hold of this station's (None: not
        #: known yet): where to go on after a foreign message.
        self._ours: int | None = None
        self._state = state
        self._journal_notice = journal_notice
        #: Told of each change of `status` (the publisher process reports it at once).
        self.on_status: Callable[[PublisherStatus], None] | None = None
        #: Told once per run, when the stream's tail was first compared with the journal:
        #: (sound, what was found). Not told while the broker cannot be reached.
        self.on_checked: Callable[[bool, str], None] | None = None
        self._compared = False  # the first comparison of this run is done
        self._asked: set[int] = set()  # stream seqs whose discontinuity was said
        self._status = PublisherStatus("connecting", 0, f"connecting to {config.url}")
        #: The stream sequence of the table's last row in the stream (0: none).
        self.stream_seq = 0
        #: The last journal row the stream holds (what to publish after).
        self.published = 0
        #: Rows sent (and acknowledged) since start.
        self.sent = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._idle = False  # waiting for a commit: `committed` must wake it
        self._refused = False
        self._nc: Client | None = None
        self._closing = False
        self._last_error = ""
        #: Waiting rows go as atomic batches (until the stream refuses them).
        self._batches = True
        self._batch_failures = 0  # batches refused in a row
        #: How long the broker takes to acknowledge one row (a moving average).
        self._ack_seconds = 0.0
        self._sent_at = 0.0  # when rows were last read to be sent (monotonic)

    @property
    def status(self) -> PublisherStatus:
        return self._status

    @status.setter
    def status(self, status: PublisherStatus) -> None:
        changed = status != self._status
        self._status = status
        if changed and self.on_status is not None:
            self.on_status(status)

    # -- from the writer (any thread) ----------------------------------------------------

    def committed(self) -> None:
        """Rows were committed: wake the publisher if it waits (cheap when it is busy: it
        reads the journal again before it waits)."""
        loop, wake = self._loop, self._wake
        if self._idle and loop is not None and wake is not None:
            self._idle = False
            with contextlib.suppress(RuntimeError):  # its loop has closed: it stopped
                loop.call_soon_threadsafe(wake.set)

    # -- the task ------------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, then publish for ever (until cancelled), riding out every error."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        heartbeat = asyncio.create_task(self._heartbeats(), name=f"floor heartbeat {self.table}")
        try:
            self._nc = await self._connect()
            js = self._nc.jetstream(timeout=self.config.timeout)
            await self._publish_forever(js)
        finally:
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)
            self._closing = True
            if self._nc is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._nc.close(), 2.0)
            self.tail.close()
            self.status = PublisherStatus("stopped", self.published, "the station is stopping")

    async def _connect(self) -> Client:
        cfg = self.config
        options: dict[str, Any] = {
            "servers": cfg.servers,
            "name": f"station {self.site}/{self.table}",
            "inbox_prefix": inbox_prefix(self.site, self.table),
            "allow_reconnect": True,
            "max_reconnect_attempts": -1,
            "reconnect_time_wait": 0.5,
            "connect_timeout": max(1, round(cfg.timeout)),
            "ping_interval": 5,
            "max_outstanding_pings": 2,
            "error_cb": self._on_error,
            "disconnected_cb": self._on_disconnected,
            "reconnected_cb": self._on_reconnected,
            **cfg.connect_options(),
        }
        return await nats.connect(**options)

    async def _on_error(self, exc: Exception) -> None:
        """A connection error (the broker away, its certificate not trusted, a login
        refused): in the status while not publishing, and logged once until it changes."""
        text = str(exc) or type(exc).__name__
        if self.status.state == "connecting" and not self._closing:
            detail = f"cannot reach the broker: {text}"
            self.status = PublisherStatus("connecting", self.published, detail)
        self._say_once(logging.WARNING, f"{text} ({self.config.url}); rows wait in the journal")

    def _say_once(self, level: int, text: str) -> None:
        """Log `text` unless it is what was logged last (a broker away for an hour is one
        line, not one a second); a success clears it."""
        if text != self._last_error:
            self._last_error = text
            log.log(level, "floor: %s", text)

    async def _on_disconnected(self) -> None:
        if self.status.state == "publishing" and not self._closing:
            log.warning(
                "floor: disconnected from %s; rows wait in the journal (published up to row %d)",
                self.config.url,
                self.published,
            )
            self.status = PublisherStatus(
                "connecting", self.published, "disconnected; reconnecting"
            )

    async def _on_reconnected(self) -> None:
        log.info("floor: reconnected to %s", self.config.url)
        if self._wake is not None:
            self._wake.set()

    async def _publish_forever(self, js: JetStreamContext) -> None:
        delay = RETRY_FIRST
        while True:
            try:
                await check_stream(js, self.config.stream, self.subject)
                await self.sync(js)
                delay = RETRY_FIRST
                await self._pump()
            except Conflict as exc:
                await self._refuse(str(exc))
                self._checked(False, str(exc))
                await asyncio.sleep(CONFLICT_RETRY)
            except NotJournaled as exc:  # asked once; looked for again, nothing published
                self._set("connecting", str(exc))
                self._say_once(logging.ERROR, str(exc))
                await asyncio.sleep(RETRY_MAX)
            except StreamMissing as exc:
                self._set("connecting", str(exc))
                self._say_once(logging.ERROR, str(exc))
                await asyncio.sleep(RETRY_MAX)
            except (NatsError, APIError, TimeoutError, OSError, sqlite3.Error) as exc:
                # Not acknowledged, a wrong last sequence, the broker away or frozen: ask
                # the stream again. Rows wait in the journal meanwhile.
                self.tail.reopen()
                what = describe(exc)
                if self.status.state == "publishing" and not wrong_last(exc):
                    log.warning("floor: %s; rows wait in the journal", what)
                self.status = PublisherStatus("connecting", self.published, what)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
            except Exception as exc:  # a bug: said once, then tried again like any error
                if repr(exc) != self._last_error:
                    self._last_error = repr(exc)
                    log.exception("floor: the publisher failed; rows wait in the journal")
                self.status = PublisherStatus("connecting", self.published, f"failed: {exc!r}")
                self.tail.reopen()
                await asyncio.sleep(RETRY_MAX)

    async def sync(self, js: JetStreamContext) -> None:
        """Ask the stream for the table's last message; resume after it if it is this
        journal's row, a foreign message or a discontinuity (`stream.last_held`), else
        `Conflict`."""
        found = await last_held(
            js, self.config.stream, self.subject, self.table, self.tail, self.key is not None
        )
        if found is None:
            self.stream_seq, self.published = 0, 0
            self._checked(True, "the stream holds no row of this table")
        elif found.unproven is not None:
            after = 0 if self._ours is None else self._ours
            log.warning(
                "floor: the stream's last message (stream seq %d) is not believed: %s; "
                "rows go again after row %d (the floor takes the ones it has as duplicates)",
                found.stream_seq,
                found.unproven,
                after,
            )
            self.stream_seq, self.published = found.stream_seq, after
            self._checked(True, f"{found.unproven}: rows sent again after row {after}")
        elif found.discontinuity is not None:
            await self._discontinuity(found)
        elif found.foreign is not None:
            await self._foreign(found)
            self._checked(True, f"a foreign message passed: {found.foreign}")
        else:
            assert found.row is not None
            self.stream_seq, self.published = found.stream_seq, found.row
            self._ours = found.row
            self._checked(True, f"the stream holds this journal up to row {found.row}")
        if self._refused:
            self._refused = False
            log.warning("floor: %s (stream holds up to row %d)", RESUMED, self.published)
            self._say(notice("station", "floor", RESUMED, stream_row=self.published))

    async def _foreign(self, held: Held) -> None:
        """A message this station did not sign is the stream's last of the table: its own
        rows go on after it; journaled and alerted (`foreign`)."""
        after = self.foreign.resume_after(held, self._ours)
        self.stream_seq, self.published = held.stream_seq, after
        self._ours = after
        said = self.foreign.met_one(held, after, self.subject)
        if said is None:
            return
        words = self.foreign.words(held, after)
        log.warning("floor: %s", words)
        self._say(said)
        figures = {"stream_seq": held.stream_seq, "detail": held.foreign, "after": after + 1}
        await self._alert(ALERT_CODE, words, figures)

    async def _discontinuity(self, held: Held) -> None:
        """The stream's last row is signed by this station's key but this journal lacks it
        (rolled back or cut without `journal restore`): the station journals a notice that
        begins a new epoch, naming what the stream holds against the journal; once it is
        in the journal, the new epoch's rows go after the stream's last (as a restore's
        do: the floor holds them for a supervisor). Met again while publishing (not at the
        first comparison of a run), it is another journal of this key: `Conflict`."""
        claims, words = held.claims, held.discontinuity
        assert claims is not None and words is not None
        if self._compared:
            raise Conflict(f"{words} (met while publishing)")
        after = self._branch(claims)
        if held.stream_seq not in self._asked:
            self._asked.add(held.stream_seq)
            journal_last, journal_hash = self.tail.last()
            log.error("floor: %s; a new epoch begins", words)
            self._say(
                discontinuity_notice(
                    self.tail.epoch_number() + 1,
                    where="floor stream",
                    subject=self.subject,
                    stream_seq=held.stream_seq,
                    stream_row=claims.seq,
                    stream_hash=claims.hash,
                    journal_rows=journal_last,
                    journal_hash=journal_hash,
                    journal_row_hash=self.tail.hash_at(claims.seq),
                    resume_after=after,
                    found=words,
                )
            )
            await self._alert(DISCONTINUITY_CODE, f"{DISCONTINUITY}: {words}", {"detail": words})
        deadline = time.monotonic() + NOTICE_WAIT
        while self.tail.discontinuity_of(held.stream_seq, claims.hash) is None:
            if time.monotonic() > deadline:  # asked already: looked for again on retry
                raise NotJournaled(f"the station has not journaled the discontinuity: {words}")
            await asyncio.sleep(0.05)
        self.stream_seq, self.published = held.stream_seq, after
        self._ours = after
        self._checked(False, f"{DISCONTINUITY}: {words}")

    def _branch(self, claims: JournalMessage) -> int:
        """The last row of this journal the stream is known to hold before the branch:
        the row before the stream's last if that follows it, else none known (0: every
        row is sent again, the floor takes those it has as duplicates)."""
        before = claims.seq - 1
        if before >= 1 and self.tail.hash_at(before) == claims.prev_hash:
            return before
        return 0

    def _checked(self, sound: bool, what: str) -> None:
        """The first comparison of this run with the stream is done: said once."""
        if self._compared:
            return
        self._compared = True
        if self.on_checked is not None:
            self.on_checked(sound, what)

    async def _alert(self, code: str, words: str, params: dict[str, Any]) -> None:
        """An alert on the table's alert subject (signed with the station's key): its
        English words, and the figures the floor view says it with in its own."""
        nc = self._nc
        if nc is None or not nc.is_connected:
            return
        alert = Alert(self.site, self.table, now_ts(), code, words, params=params)
        if self.key is not None:
            alert = alert.signed(self.key)
        with contextlib.suppress(NatsError, OSError):
            await nc.publish(alert_subject(self.site, self.table), alert.encode())

    async def _pump(self) -> None:
        """Publish every row after `published`, then wait for the next commit."""
        wake = self._wake
        assert wake is not None
        while True:
            wake.clear()
            self._idle = True  # before reading: a commit from now on sets `wake`
            rows = self.tail.rows(self.published)
            if rows:
                self._sent_at = time.monotonic()
            for start in range(0, len(rows), BATCH_MAX):
                chunk = rows[start : start + BATCH_MAX]
                if len(chunk) > 1 and self._batches:
                    await self._publish_batch(chunk)
                else:
                    for row in chunk:
                        await self._publish_one(row)
                if self.status.state != "publishing":  # acknowledged: the broker is back
                    self._set("publishing", f"sending from row {chunk[0].seq}", logging.INFO)
                    self._last_error = ""
            if len(rows) == READ_BATCH:
                continue  # more may wait
            if len(rows) < READ_BATCH:  # all that was committed when it looked is sent
                self._set("publishing", f"caught up at row {self.published}")
            if not wake.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), POLL)
            # Let the station answer and broadcast the commit first (it would otherwise
            # compete with the publisher for the CPU right then). A busy broker (slow acks)
            # or a burst of rows gets the rows of that while together: one batch, one disk
            # sync.
            burst = BURST_GAP - (time.monotonic() - self._sent_at)
            await asyncio.sleep(min(max(AFTER_COMMIT, self._ack_seconds, burst), MAX_GATHER))

    async def _publish_one(self, row: Row) -> None:
        nc = self._nc
        assert nc is not None
        sent = time.monotonic()
        reply = await nc.request(
            self.subject,
            JournalMessage.of(self.table, row).encode(),
            self.config.timeout,
            headers={
                EXPECTED_LAST_SUBJECT_SEQUENCE: str(self.stream_seq),
                **proof(self.key, self.subject, row),
            },
        )
        ack = check_reply(reply.data)
        if ack is None or not isinstance(ack.get("seq"), int):
            raise NatsError(f"no publish ack for row {row.seq}: {reply.data[:200]!r}")
        self.stream_seq, self.published = ack["seq"], row.seq
        self._ours = row.seq
        self.sent += 1
        self._acked(sent)

    def _acked(self, sent: float) -> None:
        """The broker's time to acknowledge (a moving average): how long to gather rows."""
        self._ack_seconds = 0.8 * self._ack_seconds + 0.2 * (time.monotonic() - sent)

    async def _publish_batch(self, rows: list[Row]) -> None:
        """Rows waiting (a backlog, or a burst) as one atomic batch (JetStream 2.12+): all
        stored or none, one disk sync for all, the expected last subject sequence checked
        before the first. A stream that takes no batches gets rows one by one from then
        on."""
        nc = self._nc
        assert nc is not None
        batch = secrets.token_hex(16)
        timeout = self.config.timeout
        last = len(rows)
        try:
            for n, row in enumerate(rows, 1):
                headers = {
                    BATCH_ID: batch,
                    BATCH_SEQUENCE: str(n),
                    **proof(self.key, self.subject, row),
                }
                body = JournalMessage.of(self.table, row).encode()
                if n == 1:  # a request: the batch has begun (or why not)
                    headers[EXPECTED_LAST_SUBJECT_SEQUENCE] = str(self.stream_seq)
                    check_reply(
                        (await nc.request(self.subject, body, timeout, headers=headers)).data
                    )
                elif n < last:
                    await nc.publish(self.subject, body, headers=headers)
                else:
                    headers[BATCH_COMMIT] = "1"
                    # The broker stores the whole batch before it answers: more time for
                    # more rows (a retry would send them all again).
                    commit = timeout * max(1.0, last / BATCH_PER_TIMEOUT)
                    sent = time.monotonic()
                    reply = await nc.request(self.subject, body, commit, headers=headers)
                    self._acked(sent)
                    ack = check_reply(reply.data)
                    if ack is None or not isinstance(ack.get("seq"), int):
                        raise NatsError(f"no publish ack for the batch: {reply.data!r}")
                    self.stream_seq, self.published = ack["seq"], row.seq
                    self._ours = row.seq
                    self.sent += last
                    self._batch_failures = 0
        except APIError as exc:
            if exc.err_code == WRONG_LAST_SEQUENCE:
                raise
            # Batches disabled on the stream, or refused again and again: rows one by one.
            # Anything else (the broker busy, a batch abandoned) is tried again as it is.
            self._batch_failures += 1
            if exc.err_code == ATOMIC_DISABLED or self._batch_failures >= BATCH_FAILURES:
                self._batches = False
                log.warning(
                    "floor: the stream refused a batch (%s, error %s); rows go one by one "
                    "from now on",
                    exc.description,
                    exc.err_code,
                )
            raise

    async def _refuse(self, reason: str) -> None:
        first = not self._refused
        self._refused = True
        self.status = PublisherStatus("refused", self.published, reason)
        if not first:
            return
        log.error("floor: %s: %s; nothing is published until it is resolved", REFUSED, reason)
        self._say(notice("station", "floor", REFUSED, reason=reason, subject=self.subject))
        await self._alert("conflict", f"{REFUSED}: {reason}", {"detail": reason})

    def _say(self, pending: Pending) -> None:
        if self._journal_notice is not None:
            self._journal_notice(pending)

    def _set(self, state: str, detail: str, level: int | None = None) -> None:
        if level is not None and self.status.state != state:
            log.log(level, "floor: %s", detail)
        self.status = PublisherStatus(state, self.published, detail)

    # -- heartbeats ----------------------------------------------------------------------

    async def heartbeat(self) -> Heartbeat:
        """The heartbeat now, signed with the station's key if it has one."""
        table = await self._state() if self._state is not None else TableState()
        status = PublisherStatus(self.status.state, self.published, self.status.detail)
        beat = table.heartbeat(
            self.site, self.table, self.tail.last(), status, self.config.heartbeat_interval
        )
        return beat if self.key is None else beat.signed(self.key)

    async def _heartbeats(self) -> None:
        """One at once when connected, then every `heartbeat_interval` seconds (none while
        disconnected: a late heartbeat would say the table was alive when it was not)."""
        subject = heartbeat_subject(self.site, self.table)
        while True:
            nc = self._nc
            if nc is None or not nc.is_connected:
                await asyncio.sleep(0.1)
                continue
            try:
                await nc.publish(subject, (await self.heartbeat()).encode())
            except (NatsError, OSError, sqlite3.Error) as exc:
                log.debug("floor: heartbeat not sent: %s", exc)
            await asyncio.sleep(self.config.heartbeat_interval)
