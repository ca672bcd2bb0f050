"""A journal's identity and its epoch: what every id the station hands out carries, so that
no id is ever given to two different events.

A journal restored from a backup without the rows after it (`station journal restore`)
numbers its next rows again from the backup's end: seq 272 may have been shoe 1 round 44
before the restore and be shoe 2 round 9 after it. The restore therefore begins a new
**epoch** with a `journal restored` notice (hash-chained like every row), and the ids a
game server keys on name the journal and the epoch as well as the row:
- the journal: the first 12 hex digits of its first row's hash (that row holds the table
  and the time it was started, so no two journals share it; a restore keeps it);
- the epoch: the first 8 hex digits of the hash of the row that began it (the first row,
  then each restore's notice, which holds when it was made and binds every row before it,
  so two restores of one backup still begin two epochs).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import orjson

from station.shared.rows import Pending, notice

#: The notice a restore ends the restored journal with (`restore.py`).
RESTORED = "journal restored"
#: The notice a station journals when it starts on a journal shorter than, or other than,
#: what it last signed or what the floor holds (a rollback or a cut without `journal
#: restore`, issue 32): it begins a new epoch as a restore does, so that no id the game
#: server has seen is given again, and it says what was found.
DISCONTINUITY = "journal discontinuity"
#: The notices that begin an epoch after the first.
EPOCH_NOTICES = (RESTORED, DISCONTINUITY)
#: Hex digits of a hash that name a journal, and an epoch.
JOURNAL_DIGITS, EPOCH_DIGITS = 12, 8


@dataclass(frozen=True, slots=True)
class Epoch:
    """The journal and the stretch of it since its last restore."""

    journal: str  # the first row's hash, JOURNAL_DIGITS hex digits
    mark: str  # the hash of the row that began the epoch, EPOCH_DIGITS hex digits
    number: int  # 1, then one more each restore (for people: the mark is what is unique)
    since: int  # the row that began it

    def event_id(self, table: str, seq: int, what: str) -> str:
        """The id of the event `what` of row `seq` at `table`, unique across restores."""
        return f"{table}:{self.journal}:{self.mark}:{seq}:{what}"

    def fields(self) -> dict[str, str]:
        """What a webhook body says of it (`journal`, `epoch`: the id's two parts)."""
        return {"journal": self.journal, "epoch": self.mark}


def epoch_of(db: sqlite3.Connection) -> Epoch | None:
    """The epoch the journal open on `db` is in now (None for an empty journal)."""
    first = db.execute("SELECT seq, hash FROM journal ORDER BY seq LIMIT 1").fetchone()
    if first is None:
        return None
    sql = (
        "SELECT seq, hash, event FROM journal WHERE kind = 'notice' AND "
        "json_extract(event, '$.message') IN (?, ?) ORDER BY seq DESC LIMIT 1"
    )
    restored = db.execute(sql, EPOCH_NOTICES).fetchone()
    journal = first[1][:JOURNAL_DIGITS]
    if restored is None:
        return Epoch(journal, first[1][:EPOCH_DIGITS], 1, first[0])
    number = orjson.loads(restored[2]).get("epoch")
    return Epoch(
        journal,
        restored[1][:EPOCH_DIGITS],
        number if isinstance(number, int) else 0,
        restored[0],
    )


def restored_notice(epoch: int, **details: object) -> Pending:
    """The notice that begins epoch `epoch` (`details`: the backup, the journal replaced)."""
    return notice("station", "restore", RESTORED, epoch=epoch, **details)


def discontinuity_notice(epoch: int, **details: object) -> Pending:
    """The notice that begins epoch `epoch` after a discontinuity (`details`: what the
    station last signed, what it found, and where it was found: the head anchor, the
    floor's stream)."""
    return notice("station", "integrity", DISCONTINUITY, epoch=epoch, **details)
