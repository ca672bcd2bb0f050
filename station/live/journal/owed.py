"""The webhook events owed, sealed to their rows and checked before they are sent again.

Why (issue 32, attack 1): the outbox is a table of the journal file, outside the hash
chain. A station that signs and sends whatever it finds there at start sends made-up
`round_result` bodies with a valid HMAC, under the ids of the next rows, and the game
server then drops the real results as duplicates. So each entry carries a **seal**: the
station's signature over the entry (its endpoint, seq, id, the SHA-256 of its body) and
the hash of the row it comes from, written in the same transaction as the row. At start
(`check`) an entry is sent again only if
- its seal verifies with a key of the journal (a signed journal: an entry without one,
  or whose seal does not verify, was not written by the station);
- its body is its row's: the same id, seq, type, row text (ts, event, source, actor), and
  an id that names the row's journal and epoch;
- its row is in the journal with the hash sealed, unless the id names an earlier epoch
  (an event of a row a restore did not bring back, still owed under its own epoch's id).
Anything else is refused: never sent, journaled, and alerted (`Outbox`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from station.live.journal.epoch import Epoch
from station.live.journal.schema import OutboxEntry
from station.shared.rows import Row
from station.shared.signing import PublicKey, SigningKey

#: An entry as the outbox stores it: the entry and its seal (None: unsealed).
Sealed = tuple[str, int, str, bytes, str | None]
#: What the seal's signed body says it is.
KIND = "journal outbox entry"


def _body(entry: OutboxEntry, row_hash: str) -> dict[str, Any]:
    endpoint, seq, event_id, body = entry
    return {
        "type": KIND,
        "endpoint": endpoint,
        "seq": seq,
        "id": event_id,
        "body_sha256": hashlib.sha256(body).hexdigest(),
        "row_hash": row_hash,
    }


def seal(key: SigningKey | None, entry: OutboxEntry, row_hash: str) -> str | None:
    """The seal of `entry`, owed for the row whose hash is `row_hash`: `<row hash>:<the
    station's signature>` (None without a key)."""
    if key is None:
        return None
    return f"{row_hash}:{key.sign_message(_body(entry, row_hash))}"


@dataclass(frozen=True, slots=True)
class Refused:
    """An entry that is not sent: which, and why in words."""

    endpoint: str
    seq: int
    id: str
    reason: str


def check(
    entries: Iterable[Sealed],
    row_at: Callable[[int], Row | None],
    keys: Iterable[PublicKey],
    signed: bool,
    epoch: Epoch,
    table_id: str,
) -> tuple[list[OutboxEntry], list[Refused]]:
    """The entries that may be sent again, and those refused (see the module's words).
    `row_at`: the journal's row at a seq (None past its end); `keys`: every key of the
    journal (and the station's); `signed`: the journal is signed, so every entry must
    carry a seal; `epoch`: the journal's epoch now."""
    trusted = {key.fingerprint: key for key in keys}
    good: list[OutboxEntry] = []
    refused: list[Refused] = []
    for endpoint, seq, event_id, body, sealed in entries:
        entry = (endpoint, seq, event_id, body)
        reason = _reason(entry, sealed, row_at, trusted, signed, epoch, table_id)
        if reason is None:
            good.append(entry)
        else:
            refused.append(Refused(endpoint, seq, event_id, reason))
    return good, refused


def _reason(
    entry: OutboxEntry,
    sealed: str | None,
    row_at: Callable[[int], Row | None],
    trusted: dict[str, PublicKey],
    signed: bool,
    epoch: Epoch,
    table_id: str,
) -> str | None:
    """Why `entry` may not be sent (None: it may)."""
    _endpoint, seq, event_id, raw = entry
    parts = event_id.rsplit(":", 4)
    if len(parts) != 5 or parts[0] != table_id or parts[3] != str(seq):
        return f"its id {event_id[:120]!r} is not an id this table's station gives row {seq}"
    _table, journal, mark, _seq, kind = parts
    if journal != epoch.journal:
        return f"its id names journal {journal[:20]!r}, not this one ({epoch.journal})"
    current = mark == epoch.mark
    sealed_hash: str | None = None
    if sealed is not None:
        sealed_hash, _, signature = sealed.partition(":")
        if not any(
            k.verify_message(_body(entry, sealed_hash), signature) for k in trusted.values()
        ):
            return "its seal does not verify with the station's key (not written by the station)"
    elif signed:
        return (
            "it has no seal, and every entry of a signed journal has one (not written by "
            "the station)"
        )
    row = row_at(seq)
    if row is None or (sealed_hash is not None and row.hash != sealed_hash):
        if current:
            return f"its row {seq} is not in the journal (an event of no row)"
        if sealed_hash is None:
            return f"its row {seq} is not in the journal and nothing binds it to one"
        return None  # an earlier epoch's event, sealed: sent again with its own id and body
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return "its body is not JSON"
    if not isinstance(body, dict):
        return "its body is not an object"
    mine = {"id": event_id, "seq": seq, "type": kind, "table": table_id, "journal": journal}
    mine |= {"epoch": mark, "ts": row.ts, "event": row.event, "source": row.source}
    mine["actor"] = row.actor
    for name, value in mine.items():
        if body.get(name) != value:
            return f"its body's {name!r} is not its row's (row {seq})"
    verdict = row.verdict or {}
    if kind == "round_result" and (
        body.get("result") != verdict.get("result") or body.get("round") != verdict.get("round")
    ):
        return f"its result is not the one row {seq} decided"
    return None
