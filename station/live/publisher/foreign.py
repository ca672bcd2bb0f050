"""Messages at the table's subject that this station did not sign: where its own rows go on
after one, and what it says of them.

Why: a table's broker login sits on the dealer PC, so whoever holds it can publish at the
table's subject. Once such a message is the stream's last of the table, the station's
next row (sent after the station's own last one) is refused by the stream. A signed
station therefore treats a message it did not sign as *foreign*: it publishes its own
rows after it (the floor, which checks every signature, holds the foreign one and alerts),
journals a notice and sends an alert, so the floor's record of the table goes on.

Where to go on from: the station's broker login reads back only the table's last message,
which the foreign one now hides, so the publisher works it out from what it can trust:
1. what it knows itself (the last row the stream acknowledged, while it runs);
2. the notice it journaled when it first met that foreign message (after a restart: the
   notice is a signed row of its own journal);
3. else from the journal's first row: rows the stream holds already are sent again, and
   the floor, which archives each row once, takes them as the duplicates they are.
Never the foreign message's own word (issue 32, attack 6): a forger who can read the
journal file publishes a "row N+1" whose prev_hash is the journal's last row while rows
wait for a broker the station cannot reach; taken at its word, the station would go on
after row N and the rows before it would never reach the floor. A row sent again costs
the stream a message; a row skipped would hold the floor's archive behind a gap for good.
So each guess errs towards sending again.

What it says: the first foreign message is journaled and alerted at once; after that at
most one notice every `SAY_EVERY` seconds, counting the ones met since (a forger who
publishes after every row must not fill the journal).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from station.live.publisher.stream import Held
from station.live.publisher.tail import FOREIGN, JournalTail
from station.shared.rows import Pending, notice

log = logging.getLogger("station.live.floor")

#: The least seconds between two notices of foreign messages (the first is said at once).
SAY_EVERY = 60.0
#: The foreign messages remembered as met (a flood's oldest are forgotten).
SEEN_KEPT = 1000
#: The code of the station's alert (`Alert.code`).
ALERT_CODE = "foreign"


class ForeignWatch:
    """One publisher's account of the foreign messages it met."""

    def __init__(self, tail: JournalTail, clock: Callable[[], float] = time.monotonic) -> None:
        self.tail = tail
        self.clock = clock
        #: Foreign messages met since start, and since the last notice.
        self.met = 0
        self._unsaid = 0
        self._said_at: float | None = None
        self._seen: set[int] = set()  # stream sequences met (each is counted once)

    def resume_after(self, held: Held, known: int | None) -> int:
        """The journal row the stream holds last of this station's, behind the foreign
        message `held` (`known`: the publisher's own knowledge, None: none)."""
        if known is not None:
            return known
        noticed = self.tail.foreign_after(held.stream_seq)
        if noticed is not None:
            return noticed
        log.warning(
            "floor: the foreign message at stream seq %d hides this station's last row "
            "(what it claims to follow is not believed): its rows are sent again from the "
            "first (the floor takes the ones it has as duplicates)",
            held.stream_seq,
        )
        return 0

    def met_one(self, held: Held, after: int, subject: str) -> Pending | None:
        """Count the foreign message `held`; the notice to journal now (None: said
        recently, counted for the next one, or met already)."""
        if held.stream_seq in self._seen:
            return None
        if len(self._seen) >= SEEN_KEPT:
            self._seen.clear()
        self._seen.add(held.stream_seq)
        self.met += 1
        self._unsaid += 1
        now = self.clock()
        if self._said_at is not None and now - self._said_at < SAY_EVERY:
            return None
        count, self._unsaid, self._said_at = self._unsaid, 0, now
        return notice(
            "station",
            "floor",
            FOREIGN,
            subject=subject,
            stream_seq=held.stream_seq,
            after_row=after,
            why=held.foreign,
            claims_row=None if held.claims is None else held.claims.seq,
            met=count,
        )

    def words(self, held: Held, after: int) -> str:
        """What the log and the alert say of it."""
        return (
            f"{FOREIGN} (stream seq {held.stream_seq}: {held.foreign}); this station's rows "
            f"go on after it from row {after + 1}, the floor holds it"
        )
