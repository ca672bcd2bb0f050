"""The floor archive: every table's journal rows, as each station committed them, in one
SQLite file, each table's hash chain checked on arrival.

Why the checks here: the broker is transport, the journal is the record. A row is taken
into the archive only if its hash matches its contents (by the station's own
`row_hash`) and it links to the archive's last row of its table (`prev_hash`, the next
`seq`). Anything else is *held*: kept whole in `held` with the reason, an `alert` row
written and logged, never silently accepted and never lost:
- a gap (row N arrives while the archive ends at an earlier row than N - 1): the row is
  held until the missing rows come, then taken in order (its alert is then resolved);
- a broken chain (`prev_hash` not the previous row's hash), a row whose hash does not
  match its contents, a different row under a seq the archive already has, a message
  that is not a journal row: held for good, the alert stays open for a supervisor.

Only a supervisor lets a table go on past a gap or a broken chain (`accept_gap`,
`accept_chain`, see `decisions`), or acknowledges an alert; each decision is a row of the
`decision` table with who, when and why, and the chain is checked from the accepted row on.

Idempotent on (table, seq): the same row again (the broker sends again what was fetched
but not acked, e.g. after the service was killed between its commit and its ack) is a
no-op, so each row is archived exactly once. `commit` takes a batch in one transaction
(durable when it returns: WAL, `synchronous=FULL`); the consumer acks only after it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from station.core.protection import ALERT_CODES, SHOE_SEQUENCE
from station.floor.decisions import (
    DECISION_TABLE,
    Decision,
    DecisionRefused,
    read_decisions,
)
from station.floor.supervision import Supervised
from station.floor.tip import Tip
from station.shared.messages import BadMessage, JournalMessage
from station.shared.rows import GENESIS, VERDICT_KEYS, Row, Unstorable, event_text, now_ts, row_hash

log = logging.getLogger("station.floor.archive")

#: The actor of a station's game-protection notices (`station.live.protection.monitor.ACTOR`).
PROTECTION_ACTOR = "protection"

#: SQLite's `application_id` of a floor archive ("BFLR"): a station journal or another
#: program's database given as `[archive] path` is refused, not taken over.
APPLICATION_ID = 0x42464C52
SCHEMA_VERSION = 2
#: The first schema; `UPGRADES` brings it to `SCHEMA_VERSION`.
SCHEMA = (
    """
    CREATE TABLE row (
        table_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        ts TEXT NOT NULL,
        source TEXT NOT NULL,
        actor TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('event', 'notice')),
        event TEXT NOT NULL,
        verdict TEXT,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        received TEXT NOT NULL,
        PRIMARY KEY (table_id, seq)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE held (
        id INTEGER PRIMARY KEY,
        table_id TEXT NOT NULL,
        seq INTEGER,
        hash TEXT,
        reason TEXT NOT NULL CHECK (reason IN ('gap', 'chain', 'altered', 'conflict',
                                               'malformed')),
        body BLOB NOT NULL,
        received TEXT NOT NULL,
        UNIQUE (table_id, seq, hash)
    )
    """,
    """
    CREATE TABLE alert (
        id INTEGER PRIMARY KEY,
        table_id TEXT NOT NULL,
        seq INTEGER,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        raised TEXT NOT NULL,
        resolved TEXT
    )
    """,
    "CREATE INDEX alert_open ON alert (table_id, kind) WHERE resolved IS NULL",
)
#: Each schema version's statements from the one before (2: decisions and tips).
UPGRADES: dict[int, tuple[str, ...]] = {
    2: (
        DECISION_TABLE,
        "ALTER TABLE alert ADD COLUMN acknowledged INTEGER REFERENCES decision (id)",
        "ALTER TABLE alert ADD COLUMN resolved_by INTEGER REFERENCES decision (id)",
        """
        CREATE TABLE tip (
            table_id TEXT PRIMARY KEY,
            seq INTEGER NOT NULL,
            hash TEXT NOT NULL,
            created_seq INTEGER,
            shoe_seq INTEGER,
            shoes INTEGER NOT NULL
        ) WITHOUT ROWID
        """,
    ),
}
#: Resolved alerts the floor view keeps showing (every open one is shown).
ALERTS_KEPT = 100
#: The reasons a row is held for good (a gap may still be filled).
FOR_GOOD = ("chain", "altered", "conflict", "malformed")


class ArchiveError(Exception):
    """The archive cannot be opened; the message says what to do."""


class Malformed(ValueError):
    """A message that is not a journal row of the floor's format (the message says why)."""


@dataclass(frozen=True, slots=True)
class FloorRow:
    """One journal row as a station published it, in the journal's stored text."""

    table: str
    seq: int
    ts: str
    source: str
    actor: str
    kind: str
    event: str  # the stored text (sorted keys), as the station hashed it
    verdict: str | None
    prev_hash: str
    hash: str

    def hash_ok(self) -> bool:
        """Whether the row's hash matches its contents (the station's own `row_hash`)."""
        computed = row_hash(
            self.seq,
            self.ts,
            self.source,
            self.actor,
            self.kind,
            self.event,
            self.verdict,
            self.prev_hash,
        )
        return computed == self.hash

    def to_row(self) -> Row:
        """As the station's journal reads it back (`event` and `verdict` parsed)."""
        verdict = None if self.verdict is None else orjson.loads(self.verdict)
        return Row(
            self.seq,
            self.ts,
            self.source,
            self.actor,
            self.kind,
            orjson.loads(self.event),
            verdict,
            self.prev_hash,
            self.hash,
        )


def parse_row(body: bytes, table: str | None = None) -> FloorRow:
    """A message of `floor.<site>.<table>.journal` (`JournalMessage`: a row of
    `/api/journal` plus `table`, `hash` and `prev_hash`) as a `FloorRow` in the journal's
    stored text; `Malformed` saying why it is not one. `table`, if given, is the table
    the subject names: the row must say the same."""
    try:
        message = JournalMessage.decode(body)
    except BadMessage as exc:
        raise Malformed(str(exc)) from None
    if table is not None and message.table != table:
        raise Malformed(
            f"the row says table {message.table!r} but came on the subject of {table!r}"
        )
    for key in ("prev_hash", "hash"):
        value = getattr(message, key)
        if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise Malformed(f"'{key}' must be 64 lower-case hex digits")
    verdict = message.verdict
    try:
        text = event_text(message.event)
        verdict_text = (
            None if verdict is None else event_text({k: verdict[k] for k in VERDICT_KEYS})
        )
    except Unstorable as exc:
        raise Malformed(str(exc)) from None
    return FloorRow(
        table=message.table,
        seq=message.seq,
        ts=message.ts,
        source=message.source,
        actor=message.actor,
        kind=message.kind,
        event=text,
        verdict=verdict_text,
        prev_hash=message.prev_hash,
        hash=message.hash,
    )


@dataclass(frozen=True, slots=True)
class Arrival:
    """One message off the broker: its body and the table its subject names."""

    table: str
    body: bytes


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

    def to_api(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "table": self.table,
            "seq": self.seq,
            "kind": self.kind,
            "message": self.message,
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
        "SELECT id, table_id, seq, kind, message, raised, resolved, acknowledged, resolved_by "
        "FROM alert WHERE resolved IS NULL "
        "OR id > (SELECT coalesce(max(id), 0) FROM alert) - ? ORDER BY id DESC",
        (limit,),
    ).fetchall()
    wanted = {d for r in rows for d in r[7:] if d is not None}
    decisions: dict[int | None, Decision] = {}
    if wanted:
        marks = ", ".join("?" * len(wanted))
        decisions = {d.id: d for d in read_decisions(db, f"id IN ({marks})", tuple(wanted))}
    return [
        Alert(r[0], r[1], r[2], r[3], r[4], r[5], r[6], decisions.get(r[7]), decisions.get(r[8]))
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


def lag_seconds(row: FloorRow, now: datetime | None = None) -> float:
    """Seconds from the row's commit at its station (its `ts`) to `now` (default: this
    moment): with `FloorService(after_commit=...)`, the station -> floor archive latency
    of each row of a commit (`Committed.accepted`), for the benchmarks."""
    committed = datetime.strptime(row.ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return ((now or datetime.now(UTC)) - committed).total_seconds()


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
    #: The supervisor's decision this was (None: a commit of the consumer's).
    decision: Decision | None = None


class Archive(Supervised):
    """The archive file. One writer connection, one transaction at a time (the consumer's
    commits and the supervisors' decisions take turns under `_writing`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock: int | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._take_lock()
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._adopt()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
        except (OSError, sqlite3.Error) as exc:
            self._release_lock()
            raise ArchiveError(
                f"cannot open the floor archive {self.path}: {exc}; check [archive] path and "
                "that its folder is writable"
            ) from exc
        except ArchiveError:
            self._release_lock()
            raise
        self._writing = threading.Lock()
        #: Inside a transaction: the tips as they will be, and the tables whose tip moved.
        self._tips_now: dict[str, Tip] = {}
        self._touched: set[str] = set()
        #: table -> its tip (its last archived row, its settings' and latest shoe's rows),
        #: one row per table: what the start reads instead of every row.
        self.tips: dict[str, Tip] = {
            r[0]: Tip(*r[1:]) for r in self._db.execute("SELECT * FROM tip ORDER BY table_id")
        }
        #: table -> (seq, hash) of its last archived row.
        self.heads: dict[str, tuple[int, str]] = {t: (p.seq, p.hash) for t, p in self.tips.items()}

    def _adopt(self) -> None:
        db = self._db
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        if app_id == 0 and not tables:
            db.execute("BEGIN IMMEDIATE")
            for sql in SCHEMA:
                db.execute(sql)
            for version in range(2, SCHEMA_VERSION + 1):
                for sql in UPGRADES[version]:
                    db.execute(sql)
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
            return
        if app_id != APPLICATION_ID:
            db.close()
            what = f"tables {', '.join(sorted(tables))}" if tables else f"application_id {app_id}"
            raise ArchiveError(
                f"{self.path} is not a floor archive ({what}); it was left untouched. Give "
                "[archive] path a file of its own"
            )
        if version > SCHEMA_VERSION:
            db.close()
            raise ArchiveError(
                f"the floor archive {self.path} has schema {version}, written by a newer "
                f"station (this one knows up to {SCHEMA_VERSION}); upgrade the station"
            )
        if version < SCHEMA_VERSION:
            self._upgrade(version)

    def _upgrade(self, version: int) -> None:
        """Bring an archive of an older station to this schema, in one transaction (the
        tips of schema 2 from every row: once, at the first start of this version)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for step in range(version + 1, SCHEMA_VERSION + 1):
                for sql in UPGRADES[step]:
                    db.execute(sql)
                if step == 2:
                    tips: dict[str, Tip] = {}
                    for table, seq, digest, kind, event, verdict in db.execute(
                        "SELECT table_id, seq, hash, kind, event, verdict FROM row "
                        "ORDER BY table_id, seq"
                    ):
                        tips[table] = tips.get(table, Tip()).after(
                            seq, digest, kind, event, verdict
                        )
                    self._write_tips(tips)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        log.warning(
            "the floor archive %s: schema %d upgraded to %d", self.path, version, SCHEMA_VERSION
        )

    def _write_tips(self, tips: dict[str, Tip]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO tip VALUES (?, ?, ?, ?, ?, ?)",
            [(t, p.seq, p.hash, p.created_seq, p.shoe_seq, p.shoes) for t, p in tips.items()],
        )

    def _take_lock(self) -> None:
        """Be the archive's one writer: a second floor service on the same file would
        archive with heads of its own and stops at once instead."""
        self._lock = os.open(
            self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644
        )
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._release_lock()
            raise ArchiveError(
                f"another floor service is using the archive {self.path}; stop it first, or "
                "give this one its own [archive] path"
            ) from None

    def _release_lock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def close(self) -> None:
        self._db.close()
        self._release_lock()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------

    def commit(self, arrivals: Sequence[Arrival]) -> Committed:
        """Take a batch of arrivals in one transaction (durable when this returns)."""

        def take(heads: dict[str, tuple[int, str]], received: str, done: Committed) -> None:
            for arrival in arrivals:
                self._take(arrival, heads, received, done)

        done = self._transaction(take)
        for alert_id in done.resolved:
            log.warning("floor alert %d resolved: the missing rows came", alert_id)
        return done

    def _transaction(
        self, work: Callable[[dict[str, tuple[int, str]], str, Committed], None]
    ) -> Committed:
        """`work(heads, now, done)` in one transaction, the heads and tips it changes kept
        only once it is committed; then the held rows and alerts as they are now."""
        db = self._db
        with self._writing:
            started = time.perf_counter()
            done = Committed()
            heads = dict(self.heads)
            self._tips_now = dict(self.tips)
            self._touched = set()
            db.execute("BEGIN IMMEDIATE")
            try:
                work(heads, now_ts(), done)
                self._write_tips({t: self._tips_now[t] for t in self._touched})
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            self.heads, self.tips = heads, self._tips_now
            done.seconds = time.perf_counter() - started
            done.held_counts = self.held_counts()
            done.waiting = self.waiting() if done.held_counts else {}
            done.alerts = self.alerts()
        for alert in done.raised:
            log.error("floor alert: table %s: %s", alert.table, alert.message)
        return done

    def _take(
        self, arrival: Arrival, heads: dict[str, tuple[int, str]], received: str, done: Committed
    ) -> None:
        try:
            row = parse_row(arrival.body, arrival.table)
        except Malformed as exc:
            if self._hold(arrival.table, None, None, "malformed", arrival.body, received):
                done.held += 1
                self._alert(
                    done,
                    arrival.table,
                    None,
                    "malformed",
                    f"a message that is not a journal row ({exc}); it is held, not archived",
                    received,
                )
            return
        table, seq = row.table, row.seq
        head_seq, head_hash = heads.get(table, (0, GENESIS))
        if seq <= head_seq:
            have = self._db.execute(
                "SELECT hash FROM row WHERE table_id = ? AND seq = ?", (table, seq)
            ).fetchone()
            if have is not None and have[0] == row.hash:
                done.duplicates += 1
                return
            if have is None and self._late(table, seq, row.hash, arrival.body, received, done):
                return
            if self._hold(table, seq, row.hash, "conflict", arrival.body, received):
                done.held += 1
                self._alert(
                    done,
                    table,
                    seq,
                    "conflict",
                    f"row {seq} arrived again with other contents (hash {row.hash[:12]}…, the "
                    f"archive has {have[0][:12] if have else 'none'}…): the table's journal "
                    "was changed or replaced; the new row is held, not archived",
                    received,
                )
            return
        if not row.hash_ok():
            if self._hold(table, seq, row.hash, "altered", arrival.body, received):
                done.held += 1
                self._alert(
                    done,
                    table,
                    seq,
                    "altered",
                    f"row {seq}: its hash does not match its contents (changed on the way or "
                    "in the journal); it is held, not archived",
                    received,
                )
            return
        if seq > head_seq + 1:
            if self._hold(table, seq, row.hash, "gap", arrival.body, received):
                done.held += 1
                self._gap_alert(done, table, head_seq, seq, received)
            return
        if row.prev_hash != head_hash:
            if self._hold(table, seq, row.hash, "chain", arrival.body, received):
                done.held += 1
                self._alert(
                    done,
                    table,
                    seq,
                    "chain",
                    f"row {seq} does not link to row {head_seq} (its prev_hash "
                    f"{row.prev_hash[:12]}… is not {head_hash[:12]}…): the chain is broken; "
                    "the row and every later one are held, not archived",
                    received,
                )
            return
        self._insert(row, received)
        heads[table] = (seq, row.hash)
        done.accepted.append(row)
        self._station_protection(row, received, done)
        self._release(table, heads, received, done)

    def _insert(self, row: FloorRow, received: str) -> None:
        """Archive the row (inside a transaction) and move its table's tip on."""
        tip = self._tips_now.get(row.table, Tip())
        self._tips_now[row.table] = tip.after(row.seq, row.hash, row.kind, row.event, row.verdict)
        self._touched.add(row.table)
        self._db.execute(
            "INSERT INTO row VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.table,
                row.seq,
                row.ts,
                row.source,
                row.actor,
                row.kind,
                row.event,
                row.verdict,
                row.prev_hash,
                row.hash,
                received,
            ),
        )

    def _hold(
        self,
        table: str,
        seq: int | None,
        digest: str | None,
        reason: str,
        body: bytes,
        received: str,
    ) -> bool:
        """Keep a row that cannot be archived; False if it is held already (sent again)."""
        if seq is None:  # SQLite's UNIQUE lets NULLs repeat: look for the same body
            same = self._db.execute(
                "SELECT 1 FROM held WHERE table_id = ? AND seq IS NULL AND body = ?",
                (table, body),
            ).fetchone()
            if same is not None:
                return False
        cur = self._db.execute(
            "INSERT OR IGNORE INTO held (table_id, seq, hash, reason, body, received) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (table, seq, digest, reason, body, received),
        )
        return cur.rowcount == 1

    def _alert(
        self, done: Committed, table: str, seq: int | None, kind: str, message: str, raised: str
    ) -> None:
        """Raise an alert, unless one of this kind is open for the table already: a replaced
        journal sends hundreds of rows that do not fit; the first says it, the held rows
        count the rest."""
        if self._open_alert(table, kind):
            return
        cur = self._db.execute(
            "INSERT INTO alert (table_id, seq, kind, message, raised) VALUES (?, ?, ?, ?, ?)",
            (table, seq, kind, message, raised),
        )
        assert cur.lastrowid is not None
        done.raised.append(Alert(cur.lastrowid, table, seq, kind, message, raised))

    def _station_protection(self, row: FloorRow, received: str, done: Committed) -> None:
        """A station's game-protection notice (SHOE_SEQUENCE, WEAK_SHUFFLE) becomes a floor
        alert in the same transaction as its row: archived once, so shown once, restarts
        included. Each one stays open (a supervisor's matter, not a gap that fills)."""
        if row.kind != "notice" or row.actor != PROTECTION_ACTOR:
            return
        event = orjson.loads(row.event)
        code = event.get("alert")
        if code not in ALERT_CODES:
            return
        shoe = event.get("shoe_seq")
        if code == SHOE_SEQUENCE and self._sequence_alerted(row.table, shoe, event.get("earlier")):
            return  # the floor-wide check said it first (same shoe, same earlier shoe)
        words = f"the station says (shoe at row {shoe}): {event.get('message')}"
        advice = event.get("advice")
        message = f"{words}; {advice}" if isinstance(advice, str) else words
        self.add_alert(done, row.table, row.seq, code, message, received)

    def _sequence_alerted(self, table: str, shoe: object, earlier: object) -> bool:
        """Whether a SHOE_SEQUENCE alert of this table's `shoe` naming `earlier` is in."""
        if not isinstance(shoe, int) or not isinstance(earlier, str):
            return False
        return any(
            shoe_of(message) == shoe and earlier in message
            for (message,) in self._db.execute(
                "SELECT message FROM alert WHERE table_id = ? AND kind = ?",
                (table, SHOE_SEQUENCE),
            )
        )

    def add_alert(
        self, done: Committed, table: str, seq: int | None, kind: str, message: str, raised: str
    ) -> None:
        """Insert an alert however many of its kind are open (inside a transaction)."""
        cur = self._db.execute(
            "INSERT INTO alert (table_id, seq, kind, message, raised) VALUES (?, ?, ?, ?, ?)",
            (table, seq, kind, message, raised),
        )
        assert cur.lastrowid is not None
        done.raised.append(Alert(cur.lastrowid, table, seq, kind, message, raised))

    def _open_alert(self, table: str, kind: str) -> bool:
        found = self._db.execute(
            "SELECT 1 FROM alert WHERE table_id = ? AND kind = ? AND resolved IS NULL LIMIT 1",
            (table, kind),
        ).fetchone()
        return found is not None

    def _gap_alert(
        self, done: Committed, table: str, head_seq: int, seq: int, received: str
    ) -> None:
        """One open gap alert per table: raised by the first row after the gap."""
        if self._open_alert(table, "gap"):
            return
        missing = f"row {head_seq + 1}" if seq == head_seq + 2 else f"rows {head_seq + 1}-{seq - 1}"
        self._alert(
            done,
            table,
            seq,
            "gap",
            f"row {seq} arrived but the archive ends at row {head_seq}: {missing} missing; it "
            "and later rows are held until the missing rows come",
            received,
        )

    def _release(
        self, table: str, heads: dict[str, tuple[int, str]], received: str, done: Committed
    ) -> None:
        """Take held rows that now follow the archive's last row (a gap filled)."""
        while True:
            head_seq, head_hash = heads[table]
            held = self._db.execute(
                "SELECT id, body FROM held WHERE table_id = ? AND seq = ? AND reason = 'gap'",
                (table, head_seq + 1),
            ).fetchall()
            if not held:
                break
            # Rows of two journals may wait at one seq: the one that links is taken.
            candidates = [(held_id, parse_row(body, table)) for held_id, body in held]
            linked = [(i, r) for i, r in candidates if r.prev_hash == head_hash]
            held_id, row = (linked or candidates)[0]
            if row.prev_hash != head_hash:
                self._db.execute("UPDATE held SET reason = 'chain' WHERE id = ?", (held_id,))
                self._alert(
                    done,
                    table,
                    row.seq,
                    "chain",
                    f"row {row.seq} (held after a gap) does not link to row {head_seq}: the "
                    "chain is broken; it stays held",
                    received,
                )
                break
            self._db.execute("DELETE FROM held WHERE id = ?", (held_id,))
            self._insert(row, received)
            heads[table] = (row.seq, row.hash)
            done.accepted.append(row)
            self._station_protection(row, received, done)
        waiting = self._db.execute(
            "SELECT 1 FROM held WHERE table_id = ? AND reason = 'gap' LIMIT 1", (table,)
        ).fetchone()
        if waiting is None:
            for (alert_id,) in self._db.execute(
                "SELECT id FROM alert WHERE table_id = ? AND kind = 'gap' AND resolved IS NULL",
                (table,),
            ).fetchall():
                self._db.execute("UPDATE alert SET resolved = ? WHERE id = ?", (received, alert_id))
                done.resolved.append(alert_id)

    def _held_row(
        self, table: str, seq: int, reason: str, digest: str | None
    ) -> tuple[FloorRow, int]:
        """The held row `seq` a decision takes; a refusal if several are held and `digest`
        does not say which."""
        found = self._db.execute(
            "SELECT id, hash, body FROM held WHERE table_id = ? AND seq = ? AND reason = ?",
            (table, seq, reason),
        ).fetchall()
        if digest is not None:
            found = [f for f in found if f[1] == digest]
        if len(found) != 1:
            hashes = ", ".join(f[1] for f in found) or "none with that hash"
            raise DecisionRefused(
                409, f"rows {seq} held for table {table}: {hashes}; name the one to take (hash)"
            )
        held_id, _, body = found[0]
        return parse_row(body, table), held_id

    # -- reading -------------------------------------------------------------------------

    def tables(self) -> list[str]:
        """Every table the archive has heard of (rows, held rows or alerts)."""
        cur = self._db.execute(
            "SELECT table_id FROM tip UNION SELECT table_id FROM held "
            "UNION SELECT table_id FROM alert ORDER BY 1"
        )
        return [t for (t,) in cur]

    def decisions(self, table: str | None = None) -> list[Decision]:
        """The supervisors' decisions (of one table), oldest first: between two
        transactions (the API asks from a thread of its own)."""
        with self._writing:
            if table is None:
                return read_decisions(self._db)
            return read_decisions(self._db, "table_id = ?", (table,))

    def rows(self, table: str, after: int = 0, limit: int | None = None) -> Iterator[FloorRow]:
        """A table's archived rows with seq > after, in order."""
        sql = "SELECT * FROM row WHERE table_id = ? AND seq > ? ORDER BY seq"
        args: tuple[Any, ...] = (table, after)
        if limit is not None:
            sql += " LIMIT ?"
            args = (table, after, limit)
        for r in self._db.execute(sql, args).fetchall():
            yield FloorRow(*r[:10])

    def row(self, table: str, seq: int) -> FloorRow | None:
        found = self._db.execute(
            "SELECT * FROM row WHERE table_id = ? AND seq = ?", (table, seq)
        ).fetchone()
        return None if found is None else FloorRow(*found[:10])

    def count(self, table: str) -> int:
        found: int = self._db.execute(
            "SELECT count(*) FROM row WHERE table_id = ?", (table,)
        ).fetchone()[0]
        return found

    def held_counts(self) -> dict[str, int]:
        """Held rows per table."""
        cur = self._db.execute("SELECT table_id, count(*) FROM held GROUP BY table_id")
        return {t: n for t, n in cur}

    def waiting(self) -> dict[str, tuple[int | None, int | None]]:
        """Per table with held rows: its first row held behind a gap, and its first held
        for a broken chain (None: none), past its last archived row."""
        found: dict[str, tuple[int | None, int | None]] = {}
        for table, gap, chain in self._db.execute(
            "SELECT h.table_id, min(CASE h.reason WHEN 'gap' THEN h.seq END), "
            "min(CASE h.reason WHEN 'chain' THEN h.seq END) FROM held h "
            "LEFT JOIN tip t ON t.table_id = h.table_id "
            "WHERE h.seq > coalesce(t.seq, 0) GROUP BY h.table_id"
        ):
            found[table] = (gap, chain)
        return found

    def alerts(self, limit: int = ALERTS_KEPT) -> list[Alert]:
        """The newest alerts, newest first: every open one, and resolved ones up to `limit`
        in all."""
        return read_alerts(self._db, limit)

    def verify(self, table: str) -> list[str]:
        """Check a table's archived chain from its first row (problems in words): where a
        supervisor accepted a gap or a new chain, from the accepted row on."""
        problems: list[str] = []
        accepted = {
            (d.to_seq + 1 if d.kind == "accept_gap" else d.from_seq, d.hash): d
            for d in self.decisions(table)
            if d.kind != "acknowledge" and d.to_seq is not None
        }
        prev, expected = GENESIS, 1
        for row in self.rows(table):
            decision = accepted.get((row.seq, row.hash))
            gap_ok = decision is not None and decision.kind == "accept_gap"
            if row.seq != expected and not (gap_ok and decision and decision.from_seq == expected):
                problems.append(f"row {row.seq}: expected row {expected}")
            if row.prev_hash != prev and decision is None:
                problems.append(f"row {row.seq}: prev_hash does not match row {row.seq - 1}")
            if not row.hash_ok():
                problems.append(f"row {row.seq}: its hash does not match its contents")
            prev, expected = row.hash, row.seq + 1
        return problems
