"""What one transaction of the floor archive did (`Archive.commit`, a supervisor's
decision): the rows it took, the alerts it raised and resolved, and the archive's held
rows, alerts and keys as they are after it, read in the writer's thread so that the
board never touches the writer's connection.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from station.floor.alerts import Alert
from station.floor.arrival import FloorRow
from station.floor.decisions import Decision
from station.floor.keys import TableKey

#: Each table's last archived row: seq and hash.
Heads = dict[str, tuple[int, str]]


@dataclass(slots=True)
class Committed:
    """What one `commit` did: the rows taken into the archive (in order, per table), how
    many arrivals were rows the archive had already, and the alerts raised and resolved."""

    accepted: list[FloorRow] = field(default_factory=list)
    duplicates: int = 0
    held: int = 0
    raised: list[Alert] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)
    #: Seconds the commit took (the transaction, fsync included).
    seconds: float = 0.0
    #: After the commit: held rows per table, and the newest alerts (read in the same
    #: thread as the commit, so readers of the board never touch the writer's connection).
    held_counts: dict[str, int] = field(default_factory=dict)
    alerts: list[Alert] = field(default_factory=list)
    #: Per table with held rows: the first row held behind a gap, and the first held for
    #: a broken chain (None: none), what a supervisor's decision would be about.
    waiting: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    #: Per table: the first row of a new epoch held for a supervisor (accept-chain).
    new_epochs: dict[str, int] = field(default_factory=dict)
    #: Per table: the row at which this decision began the table's next epoch (the rows
    #: from it on are the new epoch's: the floor's checks go back to it).
    epochs_begun: dict[str, int] = field(default_factory=dict)
    #: Per table: its rows held as forged (FORGED_ROW), and its key as the floor holds it.
    forged: dict[str, int] = field(default_factory=dict)
    #: Per table: rows not kept, its bound of held rows full (`holding`).
    dropped: dict[str, int] = field(default_factory=dict)
    keys: dict[str, TableKey] = field(default_factory=dict)
    #: The supervisor's decision this was (None: a commit of the consumer's).
    decision: Decision | None = None

    def alerted(self, alert: Alert | None) -> None:
        """Count an alert raised in the transaction (None: none was)."""
        if alert is not None:
            self.raised.append(alert)
