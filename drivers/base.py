"""The one interface every card reader implements, and the sink it reports to.

A reader runs a blocking loop in a thread of its own (pyserial and OpenCV are blocking
libraries) and reports what it sees as replay-format events through a `ReaderSink`.
The service's sink hands each event to the single writer (journal first, then
verdict); a test's sink can simply collect them. Readers never decide anything about
the game: a card is a card, a garbled frame is an unreadable card, a lost port is a
`fault`.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

from station.core.snapshot import TableSnapshot


class ReaderSink(Protocol):
    """Where a reader sends what it saw. Both methods are thread-safe and never block long."""

    def event(self, event: dict[str, Any]) -> None:
        """A table event in the replay format: `card` (with `card` a code or None), `cut` or
        `fault` (with `detail`). Extra keys are kept in the journal: `actor` ("reader"),
        `raw` (the bytes as received, hex), `detail` (why a card is unreadable, what failed),
        and for a camera `frame` and `confidence`."""
        ...

    def notice(self, message: str, /, **details: Any) -> None:
        """Something the journal must say that is not a table event: port opened,
        reconnecting in 2 s, reconnected, the rest of an over-long line (`raw`, hex)..."""
        ...


@runtime_checkable
class TableViewSink(ReaderSink, Protocol):
    """A sink that also shows the table: the station's (`station.live.readers.ReaderBridge`).
    A driver that plays against the station (the `sim` dealer bot) needs it; it checks with
    `isinstance(sink, TableViewSink)` at start and refuses any other sink."""

    def view(self) -> TableSnapshot:
        """The latest committed table state (an immutable value; thread-safe)."""
        ...

    def settled(self, timeout: float) -> bool:
        """Block until every event this reader sent is committed, and so in `view()`
        (woken by the writer's publication, no polling); False on timeout or when the
        station stops."""
        ...


class CardReader(Protocol):
    """A card reader driver: `run` until `stop` is set, reporting to `sink`."""

    name: str

    def run(self, sink: ReaderSink, stop: threading.Event) -> None:
        """Read cards until `stop` is set. Never raises for a reader problem: a lost or
        failing device becomes a `fault` event and the reader reconnects by itself."""
        ...

    def status(self) -> dict[str, Any]:
        """What the dashboard shows about the reader: at least `driver`, `connected` (bool)
        and `detail` (words)."""
        ...

    def send(self, data: bytes) -> bool:
        """Write to the device (a shoe's card-stop command); False if it is not connected
        or the driver cannot send."""
        ...
