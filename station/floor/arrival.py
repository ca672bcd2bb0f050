"""What arrives at the floor archive: a message off the broker (`Arrival`) and the journal
row it carries (`FloorRow`, read by `parse_row`).

Why apart from the archive: the row is what the archive checks, the floor-wide protection
check reads and the board replays; none of them needs the archive's file to know a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import orjson

from station.shared.messages import BadMessage, JournalMessage
from station.shared.rows import VERDICT_KEYS, Row, Unstorable, event_text, row_hash


class Malformed(ValueError):
    """A message that is not a journal row of the floor's format (the message says why)."""


@dataclass(frozen=True, slots=True)
class FloorRow:
    """One journal row as a station published it, in the journal's stored text."""

    table: str
    seq: int
    ts: str
    source: str
    actor: str
    kind: str
    event: str  # the stored text (sorted keys), as the station hashed it
    verdict: str | None
    prev_hash: str
    hash: str
    #: The station's signature of `hash` (None: an unsigned journal's row).
    signature: str | None = None

    def hash_ok(self) -> bool:
        """Whether the row's hash matches its contents (the station's own `row_hash`)."""
        computed = row_hash(
            self.seq,
            self.ts,
            self.source,
            self.actor,
            self.kind,
            self.event,
            self.verdict,
            self.prev_hash,
        )
        return computed == self.hash

    def to_row(self) -> Row:
        """As the station's journal reads it back (`event` and `verdict` parsed)."""
        verdict = None if self.verdict is None else orjson.loads(self.verdict)
        return Row(
            self.seq,
            self.ts,
            self.source,
            self.actor,
            self.kind,
            orjson.loads(self.event),
            verdict,
            self.prev_hash,
            self.hash,
            self.signature,
        )


def parse_row(body: bytes, table: str | None = None) -> FloorRow:
    """A message of `floor.<site>.<table>.journal` (`JournalMessage`: a row of
    `/api/journal` plus `table`, `hash` and `prev_hash`) as a `FloorRow` in the journal's
    stored text; `Malformed` saying why it is not one. `table`, if given, is the table
    the subject names: the row must say the same."""
    try:
        message = JournalMessage.decode(body)
    except BadMessage as exc:
        raise Malformed(str(exc)) from None
    if table is not None and message.table != table:
        raise Malformed(
            f"the row says table {message.table!r} but came on the subject of {table!r}"
        )
    for key in ("prev_hash", "hash"):
        value = getattr(message, key)
        if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise Malformed(f"'{key}' must be 64 lower-case hex digits")
    verdict = message.verdict
    try:
        text = event_text(message.event)
        verdict_text = (
            None if verdict is None else event_text({k: verdict[k] for k in VERDICT_KEYS})
        )
    except Unstorable as exc:
        raise Malformed(str(exc)) from None
    return FloorRow(
        table=message.table,
        seq=message.seq,
        ts=message.ts,
        source=message.source,
        actor=message.actor,
        kind=message.kind,
        event=text,
        verdict=verdict_text,
        prev_hash=message.prev_hash,
        hash=message.hash,
        signature=message.signature,
    )


@dataclass(frozen=True, slots=True)
class Arrival:
    """One message off the broker: its body and the table its subject names."""

    table: str
    body: bytes


def lag_seconds(row: FloorRow, now: datetime | None = None) -> float:
    """Seconds from the row's commit at its station (its `ts`) to `now` (default: this
    moment): with `FloorService(after_commit=...)`, the station -> floor archive latency
    of each row of a commit (`Committed.accepted`), for the benchmarks."""
    committed = datetime.strptime(row.ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return ((now or datetime.now(UTC)) - committed).total_seconds()
