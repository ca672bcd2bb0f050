"""A supervisor's decisions about the floor archive's alerts, as the archive keeps them.

Why decisions at all: a gap or a broken chain holds a table's rows (issue 11: never
silently accepted). Only a supervisor may let the table's archive go on, and only with a
reason, recorded with who and when in the archive's `decision` table, shown on the floor
view and kept across restarts:
- `acknowledge`: the alert was seen and is being dealt with (it stays in the history);
- `accept_gap`: rows `from_seq`-`to_seq` will not come; the archive continues from the
  next row it holds (`to_seq` + 1, its `hash`), and checks the chain from there on;
- `accept_chain`: the row `from_seq` (its `hash`) starts a new chain; the archive takes
  it and checks the chain from it on. When that row branches off an archived row (a
  station restored from a backup without its floor: `journal restored`), it begins a new
  `epoch` of the table: the archived rows it replaces are kept, under their epoch;
- `accept_key`: the public key a table's station named on first use (its `hash` field
  holds the key's fingerprint) is the table's; its rows held for it are checked with it;
- `set_key`: a supervisor gives a table whose key is not trusted yet its real key (its
  `hash` field holds the fingerprint): a first-use table whose row 1 someone else's key
  took (issue 32), without editing the config or restarting the floor; the table's rows
  held for a key are checked with it (the station's are taken, the others stay forged).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

KINDS = ("acknowledge", "accept_gap", "accept_chain", "accept_key", "set_key")
#: The kinds of schema 3 (before `set_key`).
KINDS_3 = KINDS[:4]
#: The longest reason kept (a supervisor's sentence or two, not a report).
MAX_REASON = 500


def decision_table(name: str = "decision", kinds: tuple[str, ...] = KINDS) -> str:
    """The decision table as this version writes it (schema 3: `accept_key`, `epoch`;
    schema 4: `set_key`), or with the `kinds` of an older schema."""
    allowed = ", ".join(f"'{k}'" for k in kinds)
    return f"""
    CREATE TABLE {name} (
        id INTEGER PRIMARY KEY,
        table_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ({allowed})),
        alert_id INTEGER,
        from_seq INTEGER,
        to_seq INTEGER,
        hash TEXT,
        actor TEXT NOT NULL,
        role TEXT NOT NULL,
        reason TEXT NOT NULL,
        decided TEXT NOT NULL,
        epoch INTEGER
    )
"""


COLUMNS = "id, table_id, kind, alert_id, from_seq, to_seq, hash, actor, role, reason, decided"
_COLUMNS = f"{COLUMNS}, epoch"


class DecisionRefused(Exception):
    """A decision the archive cannot take; the message says what to do instead.
    `status`: 404 (no such table or alert) or 409 (not what the archive holds now)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Decision:
    """One supervisor's decision, as recorded."""

    id: int
    table: str
    kind: str
    alert: int | None
    from_seq: int | None
    to_seq: int | None
    hash: str | None
    by: str
    role: str
    reason: str
    decided: str
    #: accept_chain: the table's epoch the accepted row begins (None: the same epoch).
    epoch: int | None = None

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "table": self.table,
            "kind": self.kind,
            "alert": self.alert,
            "from_seq": self.from_seq,
            "to_seq": self.to_seq,
            "hash": self.hash,
            "by": self.by,
            "role": self.role,
            "reason": self.reason,
            "decided": self.decided,
            "epoch": self.epoch,
        }

    def words(self) -> str:
        """What was decided, for the log and the floor view."""
        if self.kind == "accept_gap":
            rows = (
                f"row {self.from_seq}"
                if self.from_seq == self.to_seq
                else f"rows {self.from_seq}-{self.to_seq}"
            )
            return f"{rows} accepted as missing by {self.by}: {self.reason}"
        if self.kind == "accept_chain" and self.epoch is not None:
            return (
                f"epoch {self.epoch} accepted from row {self.from_seq} (a restored journal; "
                f"the rows it replaces stay archived) by {self.by}: {self.reason}"
            )
        if self.kind == "accept_chain":
            return f"a new chain accepted from row {self.from_seq} by {self.by}: {self.reason}"
        if self.kind == "accept_key":
            return f"key {self.hash} accepted as the table's by {self.by}: {self.reason}"
        if self.kind == "set_key":
            return (
                f"key {self.hash} set as the table's (instead of the key its first row "
                f"named) by {self.by}: {self.reason}"
            )
        return f"alert {self.alert} acknowledged by {self.by}: {self.reason}"


def checked_reason(reason: str) -> str:
    """The reason as recorded (trimmed); a refusal saying what to give instead."""
    text = reason.strip()
    if not text:
        raise DecisionRefused(422, "give a reason: what was checked and why this is right")
    if len(text) > MAX_REASON:
        raise DecisionRefused(422, f"the reason is over {MAX_REASON} characters: shorten it")
    return text


def read_decisions(
    db: sqlite3.Connection, where: str = "1", args: tuple[Any, ...] = ()
) -> list[Decision]:
    """Decisions matching `where` (SQL over the decision table), oldest first."""
    sql = f"SELECT {_COLUMNS} FROM decision WHERE {where} ORDER BY id"
    return [Decision(*r) for r in db.execute(sql, args).fetchall()]
