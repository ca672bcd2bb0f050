"""The journal's row and its hash chain: what the live station commits and what the floor
archives and checks, in one place both programs import.

Each row's hash covers its own stored text and the previous row's hash (`row_hash`), so
an edited, deleted or reordered row breaks the chain; the first row's previous hash is
`GENESIS`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

GENESIS = "0" * 64
#: The verdict's keys a row shows (`Row.to_api`) and the floor's messages carry.
VERDICT_KEYS = ("ok", "error", "role", "round", "result", "voided_round")
#: The message of every journal's first row (the table settings it was started with).
CREATED = "journal created"
_SEP = "\x1f"


class Unstorable(ValueError):
    """A row that cannot be stored as JSON (the message says why): refused on its own."""


def now_ts() -> str:
    """UTC time with microseconds, as stored in `ts` (sortable, human-readable)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def row_hash(
    seq: int,
    ts: str,
    source: str,
    actor: str,
    kind: str,
    event: str,
    verdict: str | None,
    prev_hash: str,
) -> str:
    """The chain link: sha256 over the row's stored text and the previous row's hash."""
    text = _SEP.join((str(seq), ts, source, actor, kind, event, verdict or "", prev_hash))
    return hashlib.sha256(text.encode()).hexdigest()


def dumps(obj: object) -> str:
    """JSON with sorted keys: how the journal stores an event and a verdict."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode()


def event_text(event: Mapping[str, Any]) -> str:
    """The event as the journal stores it, or `Unstorable` saying why it cannot be (the
    writer asks before the table decides, so a row that cannot be stored changes nothing)."""
    try:
        return dumps(dict(event))
    except (TypeError, ValueError) as exc:  # orjson.JSONEncodeError is a TypeError
        raise Unstorable(f"it cannot be stored as JSON: {exc}") from None


@dataclass(frozen=True, slots=True)
class Row:
    """One committed journal row."""

    seq: int
    ts: str
    source: str
    actor: str
    kind: str
    event: dict[str, Any]
    verdict: dict[str, Any] | None
    prev_hash: str
    hash: str
    #: The station's Ed25519 signature of `hash` (base64), None for an unsigned journal's
    #: rows (`station.shared.signing`; not covered by the hash, so the chain is unchanged).
    signature: str | None = None

    def to_api(self) -> dict[str, Any]:
        """The row as `/api/journal` and the WebSocket show it: the verdict carries `seq`,
        like a line of `station replay` output (here the journal's seq)."""
        v = self.verdict
        verdict = None if v is None else {"seq": self.seq, **{k: v[k] for k in VERDICT_KEYS}}
        return {
            "seq": self.seq,
            "ts": self.ts,
            "source": self.source,
            "actor": self.actor,
            "event": self.event,
            "verdict": verdict,
        }


@dataclass(frozen=True, slots=True)
class Pending:
    """A row to commit: what happened, who sent it, and (for an event) the verdict."""

    source: str
    actor: str
    event: Mapping[str, Any]
    verdict: Mapping[str, Any] | None = None
    ts: str = field(default_factory=now_ts)
    #: The event as stored (`event_text`), when the writer has already made it.
    text: str | None = None

    @property
    def kind(self) -> str:
        return "notice" if self.verdict is None else "event"


def notice(source: str, actor: str, message: str, /, **details: Any) -> Pending:
    """A notice row to append (not a table event). Any detail may be given, even one named
    like the notice's own keys: `type` and `message` are kept as `detail_type`, ..."""
    event: dict[str, Any] = {"type": "notice", "message": message}
    for key, value in details.items():
        event[f"detail_{key}" if key in ("type", "message") else key] = value
    return Pending(source, actor, event)


def row_of(r: tuple[Any, ...]) -> Row:
    """A row from its stored columns (`seq, ts, source, actor, kind, event, verdict,
    prev_hash, hash`, and `signature` where the journal has it)."""
    return Row(
        r[0],
        r[1],
        r[2],
        r[3],
        r[4],
        orjson.loads(r[5]),
        None if r[6] is None else orjson.loads(r[6]),
        r[7],
        r[8],
        r[9] if len(r) > 9 else None,
    )
