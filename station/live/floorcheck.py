"""Webhooks wait for the floor: no event goes to the game server before the publisher has
compared the floor's stream with the journal (issue 32, attack 3).

The station's own start-up checks catch a journal shorter than, or other than, its signed
head anchor. An insider who puts back an old journal *with* its old anchor passes them;
only the floor, which holds the rows the station published since, can tell. When it does,
the publisher journals a `journal discontinuity` notice (a new epoch), but the rows the
station committed between its start and that notice are still in the old epoch, at seqs the
game server may already have had with other bodies. So while a floor is configured:

- the outbox is held from the start until the publisher's first comparison (`checked`), or
  for at most `WAIT` seconds when the broker cannot be reached (then the events go: said in
  the log; a comparison later still withholds what it must);
- a discontinuity withholds every event owed of the old epoch's rows of this run (after the
  row the journal ended at when the station started): journaled first, taken out of the
  outbox, never sent, alerted; the new epoch's events then go;
- a refusal that begins no epoch (the stream conflicts with the journal) keeps the hold,
  alerted: no event may go out under ids the game server may have had, until a supervisor
  restores the journal (`station journal restore --from-floor`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from station.live.journal import Journal
from station.live.outbox import Outbox
from station.shared.rows import Pending, Row, notice

log = logging.getLogger("station.live.service")

#: The outbox's hold until the floor's stream was compared with the journal.
HOLD = "the floor's stream compared with the journal"
#: Seconds the events wait for a comparison when the broker cannot be reached.
WAIT = 10.0
#: The notice journaled before events are withheld (`withhold`).
WITHHELD = "webhook events withheld: the journal is not the one the floor holds"


class FloorCheck:
    """The outbox's wait for the floor's comparison, and what a failed one withholds."""

    def __init__(
        self,
        outbox: Outbox,
        journal: Callable[[], Journal | None],
        journal_notice: Callable[[Pending], Awaitable[Row]],
        on_disk: Callable[..., Awaitable[Any]],
        alert: Callable[[str, str, dict[str, Any]], None],
    ) -> None:
        self._outbox = outbox
        self._journal = journal
        self._journal_notice = journal_notice
        self._on_disk = on_disk
        self._alert = alert
        #: The journal's last row and epoch when this run began: what was owed before is
        #: the last run's (sealed, checked at start); after, this run's.
        self._began_after = 0
        self._began_in = ""
        self._timer: asyncio.TimerHandle | None = None

    def hold(self) -> None:
        """Hold the outbox (a floor is configured): called before anything is owed."""
        self._outbox.hold(HOLD)

    def began(self, journal: Journal) -> None:
        """The journal as this run found it (after its own start-up checks), and the
        bounded wait for the publisher begins."""
        self._began_after = journal.last_seq
        self._began_in = journal.epoch.mark
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(WAIT, self._waited)

    def _waited(self) -> None:
        if HOLD in self._outbox.holds:
            log.warning(
                "webhooks: the floor's stream could not be compared with the journal within "
                "%.0f s (the broker cannot be reached); events are sent meanwhile",
                WAIT,
            )
            self._outbox.release(HOLD)

    def checked(self, sound: bool, what: str) -> None:
        """The publisher compared the stream with the journal (on the loop)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if sound:
            self._outbox.release(HOLD)
            return
        self._outbox.hold(HOLD)
        asyncio.get_running_loop().create_task(self._withhold(what), name="floor check")

    async def _withhold(self, what: str) -> None:
        """Withhold the old epoch's events of this run; go on once a new epoch began."""
        journal = self._journal()
        if journal is None:
            return
        # Journaled first (and after the publisher's discontinuity notice, queued before
        # this was called): every row of the old epoch is committed by then.
        await self._journal_notice(
            notice(
                "station",
                "integrity",
                WITHHELD,
                found=what,
                epoch=self._began_in,
                after_seq=self._began_after,
            )
        )
        owed = await self._on_disk(journal.owed)
        withheld = [
            (endpoint, event_id)
            for endpoint, seq, event_id, _body in owed
            if seq > self._began_after and _epoch_of(event_id) == self._began_in
        ]
        if withheld:
            self._outbox.withhold(withheld)
            await self._on_disk(journal.settle, withheld)
        renewed = journal.epoch.mark != self._began_in
        words = (
            f"the floor holds rows this journal does not ({what}): {len(withheld)} webhook "
            f"event(s) of rows after row {self._began_after} in epoch {self._began_in} were "
            "NOT sent to the game server (their ids may name events it has had). "
        )
        if renewed:
            words += "Events go on in the new epoch; reconcile the rounds of those rows."
            self._outbox.release(HOLD)
        else:
            words += (
                "Webhooks stay held: restore the journal (`station journal restore --from-floor`)."
            )
        figures = {
            "detail": what,
            "count": len(withheld),
            "after": self._began_after,
            "epoch": self._began_in,
            "variant": "renewed" if renewed else "held",
        }
        self._alert("WEBHOOKS_WITHHELD", words, figures)


def _epoch_of(event_id: str) -> str:
    """The epoch mark an event's id names (`Epoch.event_id`: table:journal:epoch:seq:type,
    read from the right)."""
    parts = event_id.rsplit(":", 4)
    return parts[2] if len(parts) == 5 else ""
