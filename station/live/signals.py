"""Signals out: signed webhooks to the game server, and the shoe's card stop.

What the game server settles on: `round_result` (with everything
`station.core.settlement.settle` needs), `round_voided`, `shoe_started`, `shoe_finished`,
`suspended` and `resumed`, each with an idempotency `id` (`{table}:{seq}:{type}`) and sent
only after its row is committed. `table_events` works out which of them a decided event
caused, from the table as the writer left it right after that event (a later event of
the same batch must not change what the game server is told).

Each body is encoded once and signed per attempt (Stripe's scheme): the header
`X-Station-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, with
`X-Station-Event` (the type) and `X-Station-Delivery` (the id). The manual's game server page
(docs/game-server.md) and `examples/verify_webhook.py` are the receiving side.

Why a task of its own per endpoint: the writer only puts the body on a queue and goes
on, so a slow or dead game server never delays a verdict; each endpoint gets its events
in journal order, each retried with exponential backoff (same id, same body). An event
that still fails after the last attempt is reported back (the service journals it),
never dropped silently. Every event is owed in the journal file's outbox from the commit
of its row until it is delivered or given up (`entries`, `settled`): at stop, queued
events get a short grace, and what is left (or what a crash left) is sent at the next
start, with the same ids. Secrets never appear in a log line or a journal row.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from station.core.table import Table
from station.core.verdicts import Verdict
from station.core.words import EXPLANATIONS
from station.live.journal import OutboxEntry
from station.live.signals_config import WEBHOOK_EVENTS, SignalsConfig

log = logging.getLogger("station.live.signals")

#: What the old `[signals] webhooks = ["url", ...]` form gets (unsigned).
LEGACY_EVENTS = ("suspended", "resumed")
SIGNATURE_HEADER = "X-Station-Signature"
EVENT_HEADER = "X-Station-Event"
DELIVERY_HEADER = "X-Station-Delivery"

#: Seconds `WebhookSender.stop` lets queued events go out before it stops.
STOP_GRACE = 2.0

#: Called when an event could not be delivered: (url, body, last error in words).
GiveUp = Callable[[str, dict[str, Any], str], None]
#: Called when an endpoint is done with an event (delivered, or given up): (the
#: endpoint's key, the event's id).
Settled = Callable[[str, str], None]
#: Called with events owed that no row's commit records (an alert, a suspension announced
#: again at start): the outbox takes them before they are queued.
Owe = Callable[[list[OutboxEntry]], None]


def sign(secret: bytes, body: bytes, timestamp: int) -> str:
    """The `X-Station-Signature` value of `body` sent at `timestamp` (unix seconds)."""
    mac = hmac.new(secret, str(timestamp).encode() + b"." + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def table_events(
    table: Table,
    event: Mapping[str, Any],
    verdict: Verdict,
    was_in_play: bool,
    cleared: bool,
    began: bool,
) -> list[tuple[str, dict[str, Any]]]:
    """What the game server hears of one decided event, in order, as (type, fields): read
    from `table` right after the event. Most cards cause nothing (the cheap path)."""
    found: list[tuple[str, dict[str, Any]]] = []
    if cleared:
        found.append(("resumed", {"voided_round": verdict["voided_round"]}))
    shoe = table.shoes_started
    if verdict["result"] is not None:
        # The game's result: punto banco's shape (chemin de fer too, `player` the ponte),
        # or baccarat banque's (each tableau's outcome); `game` says which to settle by.
        found.append(
            (
                "round_result",
                {
                    "shoe": shoe,
                    "round": verdict["round"],
                    "game": table.game.name,
                    "result": verdict["result"],
                },
            )
        )
    if verdict["voided_round"] is not None:
        # No result: every bet accepted on the round gets its stake back (`settle` with
        # result None says `refund`).
        found.append(
            (
                "round_voided",
                {"shoe": shoe, "round": verdict["voided_round"], "result": None, "refund": "all"},
            )
        )
    if was_in_play and not table.in_play:
        found.append(
            (
                "shoe_finished",
                {
                    "shoe": shoe,
                    "reason": "end_shoe" if event.get("type") == "end_shoe" else "last_round",
                    "rounds_completed": len(table.results),
                    "rounds_voided": len(table.voided),
                    "voided_rounds": list(table.voided),
                    "cards_out": table.cards_out,
                },
            )
        )
    if not was_in_play and table.in_play:
        found.append(
            (
                "shoe_started",
                {
                    "shoe": shoe,
                    "game": table.game.name,
                    "decks": table.decks,
                    "gated": table.gated,
                    "cut_policy": table.cut_policy,
                    "burn": table.burn,
                },
            )
        )
    if began:
        found.append(("suspended", suspended_fields(table, verdict["error"])))
    return found


def suspended_fields(table: Table, error: str | None) -> dict[str, Any]:
    """A suspension's code (the first error), its explanation and the round it stopped."""
    suspension = table.suspension
    code = suspension.code if suspension is not None else error
    return {
        "code": code,
        "explanation": EXPLANATIONS.get(str(code), ""),
        "round": table.round.number if table.round is not None else None,
    }


@dataclass(frozen=True)
class Endpoint:
    """Where events go: the URL, its secret (None: the old unsigned form) and its events."""

    url: str
    secret: bytes | None = field(repr=False)
    events: frozenset[str]

    @property
    def key(self) -> str:
        """The endpoint's name in the journal's outbox: a hash of its URL (a URL may hold
        a secret; the journal file must not)."""
        return hashlib.sha256(self.url.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Delivery:
    """One event for one endpoint: its body encoded once, the same on every attempt."""

    id: str
    type: str
    body: bytes

    @property
    def notice(self) -> dict[str, Any]:
        body: dict[str, Any] = orjson.loads(self.body)
        return body


def endpoints(config: SignalsConfig) -> list[Endpoint]:
    """The configured endpoints: `[[signals.webhook]]` tables, then the old URL list."""
    found = [Endpoint(w.url, w.key, frozenset(w.events)) for w in config.webhook]
    found += [Endpoint(url, None, frozenset(LEGACY_EVENTS)) for url in config.webhooks]
    return found


def _queued(q: asyncio.Queue[Delivery]) -> list[Delivery]:
    """What is still waiting on a queue (taken off it: the sender is stopping)."""
    left = []
    while not q.empty():
        left.append(q.get_nowait())
        q.task_done()
    return left


class WebhookSender:
    """Posts events to every endpoint that wants them, in order, signed, with retries."""

    def __init__(
        self,
        config: SignalsConfig,
        give_up: GiveUp | None = None,
        clock: Callable[[], float] = time.time,
        settled: Settled | None = None,
        owe: Owe | None = None,
    ) -> None:
        self.config = config
        self._give_up = give_up
        self._settled = settled
        self._owe = owe
        self._clock = clock
        self._endpoints = endpoints(config)
        self._queues: list[tuple[Endpoint, asyncio.Queue[Delivery]]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._sending: dict[int, Delivery] = {}  # by id() of the queue: the one in flight
        self._client: httpx.AsyncClient | None = None
        #: Open unless held (`hold`): while held, nothing is posted; events stay queued
        #: and owed.
        self._open = asyncio.Event()
        self._open.set()
        #: (endpoint key, event id) never to be posted (`withhold`), though queued.
        self._withheld: set[tuple[str, str]] = set()
        self.delivered = 0
        self.failed_attempts = 0  # POSTs that failed (each retried, or the last one)
        self.given_up = 0  # events not delivered after every attempt

    def start(self) -> None:
        if not self._endpoints:
            return
        if self.config.webhooks:
            log.warning(
                "[signals] webhooks = [...] is deprecated: those URLs get unsigned "
                "suspended/resumed notices only; give each a [[signals.webhook]] table "
                "(url, secret_file, events) to get signed round, void and shoe events"
            )
        self._client = httpx.AsyncClient(timeout=self.config.webhook_timeout)
        for endpoint in self._endpoints:
            q: asyncio.Queue[Delivery] = asyncio.Queue()
            self._queues.append((endpoint, q))
            self._tasks.append(
                asyncio.create_task(self._deliver(endpoint, q), name=f"webhook {endpoint.url}")
            )

    def gate(self, open_: bool) -> None:
        """Open the gate (events are posted) or close it (nothing is posted until it
        opens again; what waits stays owed)."""
        if open_:
            self._open.set()
        else:
            self._open.clear()

    def withhold(self, events: list[tuple[str, str]]) -> None:
        """Never post these (endpoint key, event id) events, queued or not (the outbox
        settles them itself: journaled, taken out, alerted)."""
        self._withheld.update(events)

    @property
    def held(self) -> bool:
        """Whether the gate is closed."""
        return not self._open.is_set()

    def wants(self, kind: str) -> bool:
        """Whether an endpoint takes events of `kind` (none configured: none does)."""
        return any(kind in e.events for e in self._endpoints)

    @property
    def keys(self) -> set[str]:
        """Every endpoint's key (`Endpoint.key`)."""
        return {e.key for e in self._endpoints}

    def entries(self, notice: dict[str, Any]) -> list[OutboxEntry]:
        """The outbox entries of an event (a body with `id`, `type` and `seq`): one per
        endpoint that wants it, the body encoded once."""
        kind = str(notice["type"])
        keys = [e.key for e in self._endpoints if kind in e.events]
        if not keys:
            return []
        body = orjson.dumps(notice)
        seq, event_id = int(notice["seq"]), str(notice["id"])
        return [(key, seq, event_id, body) for key in dict.fromkeys(keys)]

    def queue(self, entries: list[OutboxEntry]) -> None:
        """Queue events owed (from the outbox) to their endpoints (never blocks)."""
        for key, _seq, event_id, body in entries:
            kind = str(orjson.loads(body)["type"])
            for endpoint, q in self._queues:
                if endpoint.key == key and kind in endpoint.events:
                    q.put_nowait(Delivery(event_id, kind, body))

    def send(self, notice: dict[str, Any]) -> None:
        """Owe (in the outbox) and queue an event whose row is already committed."""
        entries = self.entries(notice)
        if not entries:
            return
        if self._owe is not None:
            self._owe(entries)
        self.queue(entries)

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Give queued events up to `grace` seconds to go out, then stop; what is left is
        logged by id, and stays owed in the outbox for the next start."""
        if self._queues and self.held:
            grace = 0.0  # nothing may go out: what waits stays owed for the next start
        if self._queues:
            try:
                await asyncio.wait_for(asyncio.gather(*(q.join() for _, q in self._queues)), grace)
            except TimeoutError:
                for endpoint, q in self._queues:
                    sending = self._sending.get(id(q))
                    left = [d.id for d in ([sending] if sending else []) + _queued(q)]
                    if left:
                        log.error(
                            "webhook %s: %d event(s) not sent at stop, from %s (owed: "
                            "sent at the next start)",
                            endpoint.url,
                            len(left),
                            left[0],
                        )
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        self._queues.clear()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def failures(self) -> tuple[int, int]:
        """(failed attempts, events given up) so far: for the metrics."""
        return self.failed_attempts, self.given_up

    def _headers(self, endpoint: Endpoint, delivery: Delivery) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            EVENT_HEADER: delivery.type,
            DELIVERY_HEADER: delivery.id,
        }
        if endpoint.secret is not None:
            headers[SIGNATURE_HEADER] = sign(endpoint.secret, delivery.body, int(self._clock()))
        return headers

    async def _deliver(self, endpoint: Endpoint, q: asyncio.Queue[Delivery]) -> None:
        while True:
            delivery = await q.get()
            self._sending[id(q)] = delivery
            try:
                await self._open.wait()  # held: nothing is posted
                if (endpoint.key, delivery.id) in self._withheld:
                    continue  # never posted; the outbox took it out
                await self._post(endpoint, delivery)
            finally:
                del self._sending[id(q)]
                q.task_done()
            if self._settled is not None:  # not when cancelled (stopping): still owed
                self._settled(endpoint.key, delivery.id)

    async def _post(self, endpoint: Endpoint, delivery: Delivery) -> None:
        """Post one event until it is taken or the attempts run out (then `give_up`)."""
        assert self._client is not None
        cfg = self.config
        url = endpoint.url
        error = ""
        for attempt in range(cfg.webhook_attempts):
            if attempt:
                await asyncio.sleep(min(cfg.webhook_backoff * 2 ** (attempt - 1), 30.0))
            try:
                response = await self._client.post(
                    url, content=delivery.body, headers=self._headers(endpoint, delivery)
                )
            except httpx.HTTPError as exc:
                # The exception's words name the URL at most, never the headers.
                error = f"{type(exc).__name__}: {exc}"
            else:
                if response.is_success:
                    self.delivered += 1
                    return
                error = f"HTTP {response.status_code}"
            self.failed_attempts += 1
            log.warning(
                "webhook %s: %s attempt %d of %d failed (%s)",
                url,
                delivery.id,
                attempt + 1,
                cfg.webhook_attempts,
                error,
            )
        self.given_up += 1
        if self._give_up is not None:  # journaled, then logged as an error (the observer)
            self._give_up(url, delivery.notice, error)
            return
        log.error(
            "webhook %s: gave up on %s after %d attempts (%s)",
            url,
            delivery.id,
            cfg.webhook_attempts,
            error,
        )


__all__ = [
    "DELIVERY_HEADER",
    "EVENT_HEADER",
    "LEGACY_EVENTS",
    "SIGNATURE_HEADER",
    "WEBHOOK_EVENTS",
    "Delivery",
    "Endpoint",
    "WebhookSender",
    "endpoints",
    "sign",
    "suspended_fields",
    "table_events",
]
