"""The game server's events owed: made with the commit of their rows, kept until delivered.

The writer asks for the webhook events a batch owes (`entries`) inside its commit, so the
outbox rows (`Journal.append`) and the table rows are on disk together; only then are they
queued to the sender (`WebhookSender`, `station.live.signals`). An endpoint that answers
2xx settles an event: it leaves the outbox with the next commit (`take_delivered`), no
disk write of its own. What a run did not deliver (its stop's grace ran out, or it died)
is sent again at the next start (`send_owed`), but only once checked: each entry is
sealed to its row by the station's key, and one that is not, or whose body is not its
row's, is refused, journaled and alerted, never sent (`journal.owed`, issue 32). An event
of a row already committed (a suspension announced again at start, a protection alert) is
owed with a write of its own (`send`). `hold` keeps the sender from delivering anything
(events stay owed) until every hold is released: the start-up checks hold it.

Every event's id names the journal and its epoch as well as the row (`journal.epoch`):
`{table}:{journal}:{epoch}:{seq}:{type}`. A restore without the rows after the backup
numbers rows again from the backup's end and begins a new epoch, so an id the game server
has seen is never given to another event.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from station.core.table import Table
from station.live.config import StationConfig
from station.live.journal import Journal, JournalError, JournalUnavailable, OutboxEntry
from station.live.journal.epoch import Epoch
from station.live.journal.owed import Refused
from station.live.signals import WebhookSender, suspended_fields
from station.shared.rows import Pending, Row, notice

log = logging.getLogger("station.live.service")

#: The notice of outbox entries refused at start (not the station's: never sent).
OUTBOX_REFUSED = "webhook events refused"

#: A webhook event of a committed batch: (index of its row in the batch, type, fields read
#: from the table right after that row's event).
Signal = tuple[int, str, dict[str, Any]]


class Outbox:
    """The webhook events owed to the game server, and the sender that delivers them."""

    def __init__(
        self,
        config: StationConfig,
        table: Callable[[], Table],
        journal: Callable[[], Journal | None],
        post: Callable[[Pending], None],
        alert: Callable[[str, str, dict[str, Any]], None] | None = None,
    ) -> None:
        """`table`: the table now (a suspension announced again reads its fields there);
        `journal`: the open journal, if any; `post`: queue a notice row (a webhook given
        up, an entry refused); `alert`: raise a station alert a supervisor sees (code,
        words)."""
        self._config = config
        self._alert = alert
        #: Why nothing may be delivered now (`hold`): the sender waits while any is here.
        self.holds: set[str] = set()
        self._table = table
        self._journal = journal
        self._post = post
        self.webhooks = WebhookSender(
            config.signals, give_up=self._gave_up, settled=self._settled, owe=self._owe
        )
        #: Events delivered since the last commit: (endpoint, id) pairs deleted from the
        #: outbox with the next commit.
        self._delivered: list[tuple[str, str]] = []

    def start(self) -> None:
        self.webhooks.start()

    def hold(self, reason: str) -> None:
        """Deliver nothing while `reason` holds (events stay owed, in order): the start-up
        checks hold the sender until they pass, and whoever must compare the journal with
        something first (the floor's stream) may hold it too. Released by `release`."""
        self.holds.add(reason)
        self.webhooks.gate(False)
        log.info("webhooks held: %s", reason)

    def release(self, reason: str) -> None:
        """`reason` no longer holds; once none does, the sender delivers again."""
        self.holds.discard(reason)
        if not self.holds:
            self.webhooks.gate(True)

    def withhold(self, events: list[tuple[str, str]]) -> None:
        """Never send these (endpoint, id) events, though queued: whoever withholds them
        journals why and settles them (`station.live.floorcheck`)."""
        self.webhooks.withhold(events)

    async def stop(self, on_disk: Callable[..., Awaitable[Any]]) -> None:
        """Give queued events their grace, then settle what was delivered since the last
        commit (if the journal cannot be written now, they are sent again next start)."""
        await self.webhooks.stop()
        journal = self._journal()
        if journal is not None and self._delivered:
            with contextlib.suppress(JournalUnavailable):  # then they are sent again
                await on_disk(journal.settle, self._delivered)

    def body(self, what: str, row: Row, fields: dict[str, Any] | None = None) -> dict[str, Any]:
        """The game server's body of an event of `row`. `fields`: the event's own fields,
        read from the table right after the row's event (`signals.table_events`); None:
        from the table now."""
        table_id = self._config.table.id
        epoch = self._epoch()
        if fields is None:  # a suspension announced again at start
            fields = suspended_fields(self._table(), (row.verdict or {}).get("error"))
        body: dict[str, Any] = {
            "id": epoch.event_id(table_id, row.seq, what),
            "type": what,
            "table": table_id,
            **epoch.fields(),
            "seq": row.seq,
            "ts": row.ts,
            "event": row.event,
            "source": row.source,
            "actor": row.actor,
            **fields,
        }
        if what in ("round_result", "round_voided", "shoe_started"):
            body["paytable"] = self._config.table.load_paytable().name
        return body

    def entries(self, signals: list[Signal], rows: list[Row]) -> list[OutboxEntry]:
        """The outbox entries a batch owes (called by the journal inside its commit, with
        the batch's rows)."""
        owed: list[OutboxEntry] = []
        for i, what, fields in signals:
            if self.webhooks.wants(what):  # else no body is made: nobody is owed it
                owed.extend(self.webhooks.entries(self.body(what, rows[i], fields)))
        return owed

    def take_delivered(self) -> list[tuple[str, str]]:
        """The settled events to delete with the commit about to run."""
        delivered, self._delivered = self._delivered, []
        return delivered

    def keep_delivered(self, delivered: list[tuple[str, str]]) -> None:
        """That commit failed: delete them with a later one."""
        self._delivered = delivered + self._delivered

    def queue(self, owed: list[OutboxEntry]) -> None:
        """Events of a batch just committed (in the outbox already): to the sender."""
        self.webhooks.queue(owed)

    def send(self, body: dict[str, Any]) -> None:
        """Owe (a synced write) and send an event of a row already committed (`seq`, of
        `type`); its id is named here, as every event's is (`body`)."""
        epoch = self._epoch()
        event_id = epoch.event_id(self._config.table.id, body["seq"], body["type"])
        rest = {k: v for k, v in body.items() if k != "id"}
        self.webhooks.send({"id": event_id, **rest, **epoch.fields()})

    def _epoch(self) -> Epoch:
        """The journal's identity and epoch, which every event's id carries."""
        journal = self._journal()
        if journal is None:
            raise JournalError("no journal is open: an event's id names the journal's epoch")
        return journal.epoch

    async def send_owed(self, journal: Journal, on_disk: Callable[..., Awaitable[Any]]) -> None:
        """Queue the webhook events the last run did not deliver, each checked first
        (`journal.owed`: sealed by the station to a row of the journal, its body the
        row's): an entry that is not is never sent, but journaled and alerted (issue 32:
        made-up results written into the outbox). Those of an endpoint no longer
        configured are dropped, said."""
        owed, refused = await on_disk(journal.owed_checked, self._config.table.id)
        if refused:
            await self._refuse(journal, refused, on_disk)
        if not owed:
            return
        keys = self.webhooks.keys
        gone = [(key, event_id) for key, _seq, event_id, _body in owed if key not in keys]
        if gone:
            log.warning(
                "%d webhook event(s) owed to an endpoint no longer in [signals] are "
                "dropped (from %s)",
                len(gone),
                gone[0][1],
            )
            await on_disk(journal.settle, gone)
        owed = [entry for entry in owed if entry[0] in keys]
        if owed:
            log.warning(
                "%d webhook event(s) the last run did not deliver are sent again (from %s)",
                len(owed),
                owed[0][2],
            )
            self.webhooks.queue(owed)

    async def _refuse(
        self, journal: Journal, refused: list[Refused], on_disk: Callable[..., Awaitable[Any]]
    ) -> None:
        """Entries of the outbox that the station did not write: journaled (before anyone
        is told), taken out of the outbox, alerted; never sent."""
        first = refused[0]
        words = (
            f"{len(refused)} webhook event(s) in the journal's outbox were not written by "
            f"this station (the first: {first.id}: {first.reason}); they were NOT sent to "
            "the game server. Someone wrote into the journal file: check who could, and "
            "the game server's record of this table"
        )
        shown = [
            {"endpoint": r.endpoint, "seq": r.seq, "id": r.id, "reason": r.reason}
            for r in refused[:20]
        ]
        await on_disk(
            journal.append,
            [
                notice(
                    "station",
                    "integrity",
                    OUTBOX_REFUSED,
                    count=len(refused),
                    refused=shown,
                )
            ],
        )
        await on_disk(journal.settle, [(r.endpoint, r.id) for r in refused])
        log.error("%s", words)
        if self._alert is not None:
            figures = {"count": len(refused), "first": first.id, "detail": first.reason}
            self._alert("OUTBOX_FORGED", words, figures)

    def _settled(self, endpoint: str, event_id: str) -> None:
        """An endpoint is done with an event: deleted from the outbox with the next
        commit."""
        self._delivered.append((endpoint, event_id))

    def _owe(self, entries: list[OutboxEntry]) -> None:
        """Events of rows already committed: into the outbox now (a synced write; rare)."""
        journal = self._journal()
        if journal is None:
            return
        try:
            journal.owe(entries)
        except JournalUnavailable as exc:  # still sent; only a crash before could lose it
            log.error("webhook events %s not recorded as owed: %s", entries[0][2], exc)

    def _gave_up(self, url: str, body: dict[str, Any], error: str) -> None:
        self._post(
            notice(
                "station",
                "station",
                "webhook gave up",
                url=url,
                notice_id=body.get("id"),
                error=error,
            )
        )
