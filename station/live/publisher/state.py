"""What the floor publisher says of itself and of its table: its status (`/api/health`, the
heartbeat) and the table's state a heartbeat carries. Apart from the publisher (which
imports the broker's client) so that the station's end of the link reads them cheaply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from station.core.snapshot import TableSnapshot
from station.shared.messages import Heartbeat
from station.shared.rows import now_ts


@dataclass(frozen=True, slots=True)
class PublisherStatus:
    """What `/api/health` and the heartbeat say of the floor."""

    #: "connecting", "publishing" (caught up or catching up), "refused" or "stopped".
    state: str
    #: The last journal row the stream is known to hold (0: none).
    published: int
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "published": self.published, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class TableState:
    """What a heartbeat says the table is doing (from the station's published snapshot)."""

    game: str = "punto_banco"
    #: Shoes started so far.
    shoe: int = 0
    #: The round being dealt or last dealt (None before the first).
    round: int | None = None
    #: The suspension's code, None when not suspended.
    code: str | None = None
    #: Why the journal cannot be written now (disk full, ...), None when it can.
    journal: str | None = None

    @classmethod
    def of(cls, snapshot: TableSnapshot, journal: str | None = None) -> TableState:
        rnd = snapshot.round["number"] if snapshot.round else snapshot.last_round
        code = snapshot.suspension["code"] if snapshot.suspension else None
        return cls(str(snapshot.game), snapshot.shoes_started, rnd, code, journal)

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "shoe": self.shoe,
            "round": self.round,
            "code": self.code,
            "journal": self.journal,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableState:
        journal = data.get("journal")
        return cls(
            str(data["game"]),
            int(data["shoe"]),
            data["round"],
            data["code"],
            None if journal is None else str(journal),
        )

    def heartbeat(
        self,
        site: str,
        table: str,
        journal: tuple[int, str],
        floor: PublisherStatus,
        interval: float,
    ) -> Heartbeat:
        """The heartbeat of this state (unsigned): the journal's last row (seq, hash), the
        publisher's status `floor` (its state and the last row the stream holds), sent
        every `interval` seconds."""
        return Heartbeat(
            site=site,
            table=table,
            ts=now_ts(),
            seq=journal[0],
            hash=journal[1],
            published=floor.published,
            floor=floor.state,
            game=self.game,
            shoe=self.shoe,
            round=self.round,
            suspended=self.code is not None,
            code=self.code,
            interval=interval,
            journal=self.journal,
        )
