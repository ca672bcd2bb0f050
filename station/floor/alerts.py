"""The floor's alerts, as the archive keeps them in its `alert` table: what the floor must
look at (a gap, a broken chain, a row that is not one, a row or a message its station did
not sign, a key or a new epoch waiting for a supervisor, a station's game-protection
notice, the floor-wide SHOE_SEQUENCE check's finding).

Why apart from the archive: the archive decides that a row is held; what the floor is told
of it, once, and when that is over, is this module's. Each function works on the
connection it is given, inside the caller's transaction (the archive's writer, the
protection thread's own connection), and returns what it raised or resolved: it never
commits.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from typing import Any

import orjson

from station.core.protection import ALERT_CODES, SHOE_SEQUENCE
from station.floor.arrival import FloorRow
from station.floor.decisions import Decision, read_decisions
from station.floor.said import Said

log = logging.getLogger("station.floor.archive")

#: The actor of a station's game-protection notices (`station.live.protection.monitor.ACTOR`).
PROTECTION_ACTOR = "protection"
#: Resolved alerts the floor view keeps showing (every open one is shown).
ALERTS_KEPT = 100
#: A row its station did not sign (held, never archived), and a heartbeat or an alert in
#: a table's name that its station did not sign (ignored): a table's broker login used
#: by someone else. Each stays open for a supervisor, one per table at a time (the floor
#: view counts the rest).
FORGED_ROW, FORGED_MESSAGE = "FORGED_ROW", "FORGED_MESSAGE"
#: A table's station named a key the floor does not know (first use: a supervisor
#: accepts it), and a table's journal restored without its floor (a new epoch).
NEW_KEY, EPOCH = "new_key", "epoch"
#: A table's rows that branch off its archive without an epoch's notice (a journal rolled
#: back or cut without `journal restore`, or old rows republished), and a signed heartbeat
#: not newer than the last one believed or older than the floor's clock allows (a
#: replay): each stays open for a supervisor, one per table at a time.
ROLLBACK, STALE_HEARTBEAT = "ROLLBACK", "STALE_HEARTBEAT"
#: A table's archive holds `[floor] held_rows` rows its key did not sign: more are not
#: stored, only counted (`holding`). One per table while it is open.
HELD_FULL = "HELD_FULL"


@dataclass(frozen=True, slots=True)
class Alert:
    """Something the floor must look at: a gap, a broken chain, a row that is not one."""

    id: int
    table: str
    seq: int | None
    kind: str
    message: str
    raised: str
    resolved: str | None = None
    #: The supervisor's acknowledgement, and the decision that resolved it (accepted).
    acknowledged: Decision | None = None
    resolved_by: Decision | None = None
    #: What the screens put into words (`said`); None: an alert of an archive older than
    #: codes (schema 5), shown as its message.
    code: str | None = None
    params: dict[str, Any] | None = None

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "table": self.table,
            "seq": self.seq,
            "kind": self.kind,
            "message": self.message,
            "code": self.code,
            "params": self.params or {},
            "raised": self.raised,
            "resolved": self.resolved,
            "acknowledged": None if self.acknowledged is None else self.acknowledged.to_api(),
            "resolved_by": None if self.resolved_by is None else self.resolved_by.to_api(),
        }


def read_alerts(db: sqlite3.Connection, limit: int) -> list[Alert]:
    """The newest alerts, newest first: every open one, and the others up to `limit` in
    all, with the decisions that acknowledged or resolved them (any connection: the
    consumer's, the protection thread's)."""
    rows = db.execute(
        "SELECT id, table_id, seq, kind, message, raised, resolved, acknowledged, resolved_by, "
        "code, params FROM alert WHERE resolved IS NULL "
        "OR id > (SELECT coalesce(max(id), 0) FROM alert) - ? ORDER BY id DESC",
        (limit,),
    ).fetchall()
    wanted = {d for r in rows for d in r[7:9] if d is not None}
    decisions: dict[int | None, Decision] = {}
    if wanted:
        marks = ", ".join("?" * len(wanted))
        decisions = {d.id: d for d in read_decisions(db, f"id IN ({marks})", tuple(wanted))}
    return [
        Alert(
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            decisions.get(r[7]),
            decisions.get(r[8]),
            r[9],
            None if r[10] is None else orjson.loads(r[10]),
        )
        for r in rows
    ]


def shoe_of(message: str) -> int | None:
    """The shoe a SHOE_SEQUENCE alert's words name ("shoe at row N"), the station's or the
    floor-wide check's: what tells the same alert again."""
    marker = "shoe at row "
    at = message.find(marker)
    if at < 0:
        return None
    digits = ""
    for c in message[at + len(marker) :]:
        if not c.isdigit():
            break
        digits += c
    return int(digits) if digits else None


def raise_alert(
    db: sqlite3.Connection, table: str, seq: int | None, kind: str, said: Said, raised: str
) -> Alert:
    """Insert an alert however many of its kind are open."""
    params = dict(said.params)
    code: str | None = said.code
    if not said.fits():
        log.error("alert code %s with figures %s its words do not take", code, sorted(params))
        code = None
    cur = db.execute(
        "INSERT INTO alert (table_id, seq, kind, message, raised, code, params) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (table, seq, kind, said.message, raised, code, orjson.dumps(params).decode()),
    )
    assert cur.lastrowid is not None
    return Alert(cur.lastrowid, table, seq, kind, said.message, raised, code=code, params=params)


def raise_once(
    db: sqlite3.Connection, table: str, seq: int | None, kind: str, said: Said, raised: str
) -> Alert | None:
    """Raise an alert, unless one of this kind is open for the table already (None): a
    replaced journal sends hundreds of rows that do not fit; the first says it, the held
    rows count the rest."""
    if is_open(db, table, kind):
        return None
    return raise_alert(db, table, seq, kind, said, raised)


def is_open(db: sqlite3.Connection, table: str, kind: str) -> bool:
    """Whether an alert of this kind is open for the table."""
    found = db.execute(
        "SELECT 1 FROM alert WHERE table_id = ? AND kind = ? AND resolved IS NULL LIMIT 1",
        (table, kind),
    ).fetchone()
    return found is not None


def gap_words(head_seq: int, seq: int) -> Said:
    """A gap alert's words: row `seq` came while the archive ends at row `head_seq`."""
    one = seq == head_seq + 2
    missing = f"row {head_seq + 1}" if one else f"rows {head_seq + 1}-{seq - 1}"
    message = (
        f"row {seq} arrived but the archive ends at row {head_seq}: {missing} missing; it "
        "and later rows are held until the missing rows come"
    )
    if one:
        return Said("gap_row", message, {"seq": seq, "head": head_seq, "missing": head_seq + 1})
    return Said(
        "gap_rows", message, {"seq": seq, "head": head_seq, "from": head_seq + 1, "to": seq - 1}
    )


def resolve(
    db: sqlite3.Connection, table: str, kind: str, when: str, by: Decision | None = None
) -> list[int]:
    """Resolve the table's open alerts of `kind` (`by`: the supervisor's decision that
    did; None: the rows came); their ids."""
    found = db.execute(
        "SELECT id FROM alert WHERE table_id = ? AND kind = ? AND resolved IS NULL",
        (table, kind),
    ).fetchall()
    decision = None if by is None else by.id
    for (alert_id,) in found:
        db.execute(
            "UPDATE alert SET resolved = ?, resolved_by = ? WHERE id = ?",
            (when, decision, alert_id),
        )
    return [alert_id for (alert_id,) in found]


def station_alert(db: sqlite3.Connection, row: FloorRow, received: str) -> Alert | None:
    """A station's game-protection notice (SHOE_SEQUENCE, WEAK_SHUFFLE) as a floor alert,
    written in the same transaction as its row: archived once, so shown once, restarts
    included. Each one stays open (a supervisor's matter, not a gap that fills). None: the
    row is no such notice, or the floor-wide check said it first."""
    if row.kind != "notice" or row.actor != PROTECTION_ACTOR:
        return None
    event = orjson.loads(row.event)
    code = event.get("alert")
    if code not in ALERT_CODES:
        return None
    shoe = event.get("shoe_seq")
    if code == SHOE_SEQUENCE and _sequence_alerted(db, row.table, shoe, event.get("earlier")):
        return None  # the floor-wide check said it first (same shoe, same earlier shoe)
    words = f"the station says (shoe at row {shoe}): {event.get('message')}"
    advice = event.get("advice")
    message = f"{words}; {advice}" if isinstance(advice, str) else words
    figures = {k: v for k, v in event.items() if k not in ("type", "message", "advice")}
    said = Said("station_protection", message, figures)
    return raise_alert(db, row.table, row.seq, code, said, received)


def _sequence_alerted(db: sqlite3.Connection, table: str, shoe: object, earlier: object) -> bool:
    """Whether a SHOE_SEQUENCE alert of this table's `shoe` naming `earlier` is in."""
    if not isinstance(shoe, int) or not isinstance(earlier, str):
        return False
    return any(
        shoe_of(message) == shoe and earlier in message
        for (message,) in db.execute(
            "SELECT message FROM alert WHERE table_id = ? AND kind = ?",
            (table, SHOE_SEQUENCE),
        )
    )
