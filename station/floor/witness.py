"""The floor as witness: whether what comes in a table's name is its station's, by the
table's public key (`keys`), and what the floor view shows of it.

Why apart from the board: a table's broker login lets anyone publish heartbeats and alerts
in its name (a stopped table shown online, a made-up suspension, a dashboard link to
another site). The archive checks each row's signature itself; the heartbeats and alerts,
which are not kept, are checked here before the board lets them change anything: one
that the table's key did not sign changes nothing the floor shows; it is counted, and
alerted (FORGED_MESSAGE, by the archive, at most once a minute a table). A table whose
station has no key, or whose key waits for a supervisor, has nothing to check against:
its heartbeats count as before, its dashboard links are not shown (only the config's).

A signed heartbeat counts only if it is newer than the last one believed of its table and
of now by the floor's clock (`beats`, issue 32): one sent again, out of order, or too old
changes nothing either; it is counted and alerted (STALE_HEARTBEAT, at most once a minute
a table).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from station.floor.alerts import FORGED_MESSAGE, ROLLBACK, STALE_HEARTBEAT
from station.floor.beats import Believed, stale
from station.floor.config import HEARTBEAT_SKEW
from station.floor.decisions import Decision
from station.floor.keys import CONFIG, TableKey
from station.floor.said import Said
from station.shared.messages import OFFLINE_AFTER, Alert, Heartbeat
from station.shared.signing import PublicKey

if TYPE_CHECKING:  # the archive is handed in, never made here
    from station.floor.archive import Archive
    from station.floor.committed import Committed
    from station.floor.config import FloorTableConfig

log = logging.getLogger("station.floor")

#: The least seconds between two FORGED_MESSAGE alerts asked of the archive for a table.
ALERT_EVERY = 60.0


class Witness:
    """Every table's key as the archive holds it, and what was refused in its name."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        window: float = OFFLINE_AFTER + HEARTBEAT_SKEW,
        skew: float = HEARTBEAT_SKEW,
    ) -> None:
        self.clock = clock
        #: The floor's clock (seconds since the epoch) a heartbeat's time is judged by, how
        #: old one may be by it, and how far ahead (`beats.stale`).
        self.wall, self.window, self.skew = wall, window, skew
        #: Per table: its last signed heartbeat believed (kept in the archive), and the
        #: signed ones refused as sent again or too old (since this service started).
        self.believed: dict[str, Believed] = {}
        self.stale: dict[str, int] = {}
        self.keys: dict[str, TableKey] = {}
        #: Per table: rows held as forged (the archive's count), heartbeats and alerts
        #: ignored as forged (since this service started).
        self.forged_rows: dict[str, int] = {}
        self.forged_messages: dict[str, int] = {}
        #: Per table: the first row of a new epoch waiting for a supervisor.
        self.new_epochs: dict[str, int] = {}
        #: Told of a forged or stale message to alert (table, words, kind): the service
        #: has the archive raise FORGED_MESSAGE or STALE_HEARTBEAT.
        self.on_forged: Callable[[str, Said, str], None] | None = None
        self._alerted: dict[tuple[str, str], float] = {}

    def load(self, archive: Archive, tables: Mapping[str, FloorTableConfig]) -> None:
        """At start: the config's keys trusted in the archive (`Archive.trust`: rows held
        for a key it names are taken now, before the board reads the archive), then the
        keys and counts as the archive has them."""
        configured = {t: c.key for t, c in tables.items() if c.key is not None}
        archive.trust(configured)
        self.keys = dict(archive.keys)
        self.believed = dict(archive.believed)
        self.forged_rows = archive.forged_counts()
        self.new_epochs = archive.new_epochs()

    def committed(self, done: Committed) -> None:
        self.keys = done.keys
        self.forged_rows = done.forged
        self.new_epochs = done.new_epochs

    def trusted(self, table: str) -> PublicKey | None:
        key = self.keys.get(table)
        return None if key is None else key.trusted

    def vouches(self, table: str, message: Heartbeat | Alert, what: str) -> bool | None:
        """Whether the table's key signed `message` (a heartbeat or an alert); None: the
        floor trusts no key of the table, so there is nothing to check. False is counted
        and alerted: the caller ignores the message."""
        key = self.trusted(table)
        if key is None:
            return None
        if message.signed_by(key):
            return True
        count = self.forged_messages.get(table, 0) + 1
        self.forged_messages[table] = count
        unsigned = message.signature is None
        how = "unsigned" if unsigned else "not signed by the table's key"
        words = (
            f"a {what} in table {table}'s name, {how} ({key.fingerprint}): not its station's "
            "(the table's broker login used by someone else?); ignored, nothing it says is "
            f"shown ({count} such messages since the floor service started)"
        )
        code = f"forged_{what}_{'unsigned' if unsigned else 'bad_signature'}"
        figures = {"table": table, "fp": key.fingerprint, "count": count}
        self._alert(table, Said(code, words, figures), FORGED_MESSAGE)
        return False

    def fresh(self, table: str, beat: Heartbeat) -> bool:
        """Whether the signed `beat` is newer than the last one believed of its table and
        of now (`beats.stale`); one that is not is counted and alerted, and believed in
        nothing it says. The caller believes it (`believe`) once it counts."""
        why = stale(beat, self.believed.get(table), self.wall(), self.window, self.skew)
        if why is None:
            return True
        count = self.stale.get(table, 0) + 1
        self.stale[table] = count
        words = (
            f"a heartbeat of table {table}, signed by its key, refused: {why.message}; "
            f"ignored, nothing it says is shown ({count} such heartbeats since the floor "
            "service started)"
        )
        figures = {**why.params, "table": table, "count": count}
        self._alert(table, Said(why.code, words, figures), STALE_HEARTBEAT)
        return False

    def diverged(self, table: str, beat: Heartbeat, archived: int) -> None:
        """A signed heartbeat whose publisher is refused: the station's journal is not the
        one the floor archived. A ROLLBACK alert (the rows that would show it are kept
        off the stream), at most once a minute a table."""
        words = (
            f"table {table}'s station (its key signed the heartbeat) says its journal is "
            f"not the one the floor archived (its last row {beat.seq}, hash "
            f"{beat.hash[:12]}…; the archive ends at row {archived}; its publisher is "
            "refused): a journal rolled back or cut without `station journal restore`, or "
            "a second station with the table's key. Stop the table, find out who changed "
            "its files, and put its journal back with `station journal restore BACKUP "
            "--from-floor URL`"
        )
        figures = {"table": table, "seq": beat.seq, "hash": beat.hash[:12], "archived": archived}
        self._alert(table, Said("rollback_beat", words, figures), ROLLBACK)

    def believe(self, table: str, beat: Heartbeat) -> Believed:
        """The table's last heartbeat believed is `beat` from now on."""
        found = self.believed[table] = Believed.of(beat)
        return found

    def _alert(self, table: str, words: Said, kind: str) -> None:
        """Log and have the archive alert `kind`, at most once a minute a table."""
        now = self.clock()
        last = self._alerted.get((table, kind))
        if last is None or now - last >= ALERT_EVERY:
            self._alerted[(table, kind)] = now
            log.warning("table %s: %s", table, words.message)
            if self.on_forged is not None:
                self.on_forged(table, words, kind)

    def table(self, table_id: str, decisions: Sequence[Decision]) -> dict[str, Any]:
        """What the table's line shows of its key, the forged rows and messages, and its
        epochs."""
        key = self.keys.get(table_id)
        epoch = max((d.epoch for d in decisions if d.epoch is not None), default=1)
        waiting = self.new_epochs.get(table_id)
        return {
            "key": None if key is None else key.to_api(),
            "signed": key is not None and key.trusted is not None,
            "key_from_config": key is not None and key.origin == CONFIG,
            "forged": self.forged_rows.get(table_id, 0),
            "forged_messages": self.forged_messages.get(table_id, 0),
            "stale_heartbeats": self.stale.get(table_id, 0),
            "epoch": epoch,
            "new_epoch": None if waiting is None else {"seq": waiting, "epoch": epoch + 1},
        }
