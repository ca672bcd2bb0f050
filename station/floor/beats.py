"""Which signed heartbeats the floor believes: newer than the last one it believed, and of
now by the floor's clock (issue 32, attack 8).

Why: a heartbeat is signed, so no one can make one up, but anyone holding the table's
broker login can send one again. Heartbeats captured earlier (the station pointed at a
broker of the insider's) and replayed would show a dead table online and not suspended.
So a signed heartbeat counts only if its time (`ts`, the station's clock, in what the
signature covers) is after the last one believed of its table, and no further from the
floor's clock than `offline_after` + `heartbeat_skew` (older: a replay, or the station's
clock behind; ahead: its clock ahead, which would shut out its next real heartbeats).
The last one believed is kept in the archive (`heartbeat` table), so a restart of the
floor service does not open the door again. A table without a trusted key has nothing
to check a heartbeat against (anyone could make one): its heartbeats count as before.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

from station.floor.said import Said
from station.shared.messages import Heartbeat


@dataclass(frozen=True, slots=True)
class Believed:
    """The last heartbeat of a table the floor believed: its time, and the journal row it
    named."""

    ts: str
    seq: int
    hash: str

    @classmethod
    def of(cls, beat: Heartbeat) -> Believed:
        return cls(beat.ts, beat.seq, beat.hash)


def moment(ts: str) -> datetime | None:
    """A heartbeat's time as a moment (None: not an ISO time)."""
    try:
        found = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


def stale(
    beat: Heartbeat, last: Believed | None, now: float, window: float, skew: float
) -> Said | None:
    """Why the signed `beat` is not to be believed (None: it is): `last` the table's last
    believed one, `now` the floor's clock (seconds since the epoch), `window` how old a
    heartbeat may be by it (`offline_after` + `skew`), `skew` how far ahead."""
    at = moment(beat.ts)
    if at is None:
        words = f"its time {beat.ts[:40]!r} is not an ISO time"
        return Said("stale_not_iso", words, {"ts": beat.ts[:40]})
    before = None if last is None else moment(last.ts)
    if last is not None and before is not None and at <= before:
        words = (
            f"its time {beat.ts} is not after the last heartbeat believed ({last.ts}): "
            "sent again or out of order (a replay with the table's broker login?)"
        )
        return Said("stale_replayed", words, {"ts": beat.ts, "last": last.ts})
    age = now - at.timestamp()
    if age > window:
        words = (
            f"its time {beat.ts} is {age:.0f} s behind the floor's clock (at most "
            f"{window:.0f} s): an old heartbeat sent again (a replay?), or the station's "
            "clock is behind (check its NTP time)"
        )
        figures = {"ts": beat.ts, "age": round(age), "window": round(window)}
        return Said("stale_behind", words, figures)
    if age < -skew:
        words = (
            f"its time {beat.ts} is {-age:.0f} s ahead of the floor's clock (at most "
            f"{skew:.0f} s): the station's clock is ahead (check its NTP time)"
        )
        return Said("stale_ahead", words, {"ts": beat.ts, "age": round(-age), "skew": round(skew)})
    return None


def read_believed(db: sqlite3.Connection) -> dict[str, Believed]:
    """table -> its last heartbeat believed, as the archive has them."""
    return {
        t: Believed(ts, seq, digest)
        for t, ts, seq, digest in db.execute("SELECT table_id, ts, seq, hash FROM heartbeat")
    }


def write_believed(db: sqlite3.Connection, table: str, beat: Believed, received: str) -> None:
    """Keep the table's last heartbeat believed (inside the caller's transaction)."""
    db.execute(
        "INSERT OR REPLACE INTO heartbeat VALUES (?, ?, ?, ?, ?)",
        (table, beat.ts, beat.seq, beat.hash, received),
    )
