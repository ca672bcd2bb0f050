"""What the floor needs of a table without reading its rows: its last archived row, the row
of its settings and the row that began its latest shoe, and how many shoes it has dealt.

Why: the board shows each table's state replayed by the station's core, and a shoe event
(accepted by the station) resets every state the board shows but the shoe count. So the
board replays a table from its latest shoe only, with the settings of its journal's first
row, and the start-up time does not grow with the archive. The archive keeps one `tip`
row per table, written in the same transaction as the rows it describes.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from station.shared.rows import CREATED, GENESIS

#: The stored text of a shoe event holds this (keys sorted, no spaces): a cheap first test.
SHOE_TEXT = '"type":"shoe"'


@dataclass(frozen=True, slots=True)
class Tip:
    """A table's last archived row (`seq`, `hash`), the row of its settings
    (`created_seq`: its journal's first row), the row of its latest shoe accepted by the
    station (`shoe_seq`) and the number of such shoes up to and including it."""

    seq: int = 0
    hash: str = GENESIS
    created_seq: int | None = None
    shoe_seq: int | None = None
    shoes: int = 0

    def after(self, seq: int, digest: str, kind: str, event: str, verdict: str | None) -> Tip:
        """The tip once the row (its stored text) is archived after this one."""
        created, shoe, shoes = self.created_seq, self.shoe_seq, self.shoes
        if kind == "notice":
            if CREATED in event:
                body = orjson.loads(event)
                if body.get("message") == CREATED and isinstance(body.get("table"), dict):
                    created = seq
        elif _accepted_shoe(event, verdict):
            shoe, shoes = seq, shoes + 1
        return Tip(seq, digest, created, shoe, shoes)

    @property
    def replay_from(self) -> int:
        """The first row the board replays: the latest shoe's, else the settings' row."""
        return self.shoe_seq or self.created_seq or 1

    @property
    def shoes_before(self) -> int:
        """Shoes dealt before the replayed rows (the board adds them to its count)."""
        return self.shoes - (1 if self.shoe_seq is not None else 0)


def _accepted_shoe(event: str, verdict: str | None) -> bool:
    """Whether the stored event is a shoe the station accepted (its verdict ok)."""
    if SHOE_TEXT not in event or verdict is None:
        return False
    return orjson.loads(event).get("type") == "shoe" and bool(orjson.loads(verdict).get("ok"))
