"""The table a journal is the record of: the settings its first row holds, and its events
replayed into a table dealt by them.

The first row of every journal is the `journal created` notice with the table settings
(id, game, decks, gated, cut_policy, burn); the settings are hash-protected with the rest,
and the station refuses to continue a journal under different settings: under another
game with a message of its own (a journal is one game's record). A journal written before
the cercle games has no game or burn: it is punto banco's, with the burn reveal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from station.core.games import BEFORE_GAMES as BEFORE_GAMES  # re-exported
from station.core.games import settings_of as settings_of  # re-exported
from station.core.table import Table
from station.live.journal.errors import JournalError
from station.shared.rows import CREATED, Row, dumps


def table_settings(table_id: str, table: Table) -> dict[str, Any]:
    return {
        "id": table_id,
        "game": table.game.name,
        "decks": table.decks,
        "gated": table.gated,
        "cut_policy": table.cut_policy,
        "burn": table.burn,
    }


def table_of(settings: Mapping[str, Any]) -> Table:
    """A fresh table dealt by a journal's recorded settings (`settings_of`)."""
    return Table(
        game=settings["game"],
        decks=settings["decks"],
        gated=settings["gated"],
        cut_policy=settings["cut_policy"],
        burn=settings["burn"],
    )


def settings_in(first: Row | None, path: Path) -> dict[str, Any] | None:
    """The table settings of the `journal created` row `first` (the first row of the
    journal at `path`), or None for an empty journal."""
    if first is None:
        return None
    if first.kind != "notice" or first.event.get("message") != CREATED:
        raise JournalError(
            f"{path}: the first row is not the '{CREATED}' notice; this is not a station journal"
        )
    table = first.event.get("table")
    return table if isinstance(table, dict) else None


@dataclass(slots=True)
class Replayed:
    """What a replay found: how many events, and the row that began the suspension."""

    events: int = 0
    suspended_since: int | None = None


def replay(rows: Iterable[Row], table: Table, path: Path) -> Replayed:
    """Apply every event row to `table` (notices skipped), checking that the core still
    decides what the journal at `path` says."""
    done = Replayed()
    for row in rows:
        if row.kind != "event":
            continue
        decided, cleared, began = table.decide(row.event)
        verdict = dict(decided)
        if row.verdict != verdict:
            raise JournalError(
                f"{path}: row {row.seq}: the rules now decide {dumps(verdict)} but "
                f"the journal says {dumps(row.verdict)}; run `station journal verify`"
            )
        if began:
            done.suspended_since = row.seq
        elif cleared:
            done.suspended_since = None
        done.events += 1
    return done
