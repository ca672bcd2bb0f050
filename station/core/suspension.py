"""Why the table is suspended: the error that began it, and what came while it lasted.

The table's state machine (`station.core.table`) keeps one while a supervisor is due;
the published state (`station.core.snapshot`) shows it. Bounded: a line that sends
garbage while the table is suspended must not grow the state.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

#: How many of the errors after the first a suspension keeps with their cards (the rest
#: are only counted: a line that sends garbage while suspended must not grow the state).
LATER_KEPT = 10


def _later() -> deque[tuple[str, object]]:
    return deque(maxlen=LATER_KEPT)


@dataclass(slots=True)
class Suspension:
    """Why the table is suspended: the first error, the last few errors (and cards) since,
    and how many of each code came since (bounded whatever the line sends)."""

    code: str
    card: Any = None  # what the line sent (mypyc's dataclasses resolve no builtin `object`)
    later: deque[tuple[str, object]] = field(default_factory=_later)
    later_counts: dict[str, int] = field(default_factory=dict)
    later_total: int = 0

    def add_later(self, code: str, card: object) -> None:
        self.later.append((code, card))
        self.later_counts[code] = self.later_counts.get(code, 0) + 1
        self.later_total += 1
