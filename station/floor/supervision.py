"""A supervisor's decisions on the floor archive's held rows and alerts: whether each can
be taken as asked, and its record (`decisions` says what each means and how it is kept).

Why apart from the archive: the archive checks what arrives; a decision checks what a
supervisor asks against what the archive holds now. The archive runs each decision in one
of its transactions (one at a time with the consumer's commits) and gives it only what it
needs: its connection and each table's last archived row. A decision hands back what the
archive is to take (`Accepted`), or is refused (`DecisionRefused`) with nothing done; it
never takes a row itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from station.floor import epochs
from station.floor.arrival import FloorRow, Malformed, parse_row
from station.floor.decisions import Decision, DecisionRefused, read_decisions
from station.floor.keys import ACCEPTED, SET, TableKey, named_key
from station.floor.said import Said
from station.shared.signing import PublicKey

#: Each table's last archived row: seq and hash.
Heads = Mapping[str, tuple[int, str]]


@dataclass(frozen=True, slots=True)
class Accepted:
    """A decision to take a held row: the decision as recorded, the row it lets in and its
    id among the held rows, and the kind of the table's open alerts it resolves."""

    decision: Decision
    row: FloorRow
    held_id: int
    resolves: str
    #: The table's epoch the row begins (None: it goes on in the same epoch).
    epoch: int | None = None


def acknowledge(
    db: sqlite3.Connection, alert_id: int, by: str, role: str, reason: str, now: str
) -> Decision:
    """Record that `by` has seen the alert and deals with it (it stays open, in the
    history); `DecisionRefused` for an alert that is not there or not open."""
    found = db.execute(
        "SELECT table_id, resolved, acknowledged FROM alert WHERE id = ?", (alert_id,)
    ).fetchone()
    if found is None:
        raise DecisionRefused(404, f"no alert {alert_id} in the archive: see GET /api/floor/alerts")
    table, resolved, acknowledged = found
    if resolved is not None:
        raise DecisionRefused(
            409, f"alert {alert_id} was resolved at {resolved}: nothing to acknowledge"
        )
    if acknowledged is not None:
        [earlier] = read_decisions(db, "id = ?", (acknowledged,))
        raise DecisionRefused(
            409,
            f"alert {alert_id} was acknowledged by {earlier.by} at {earlier.decided} already",
        )
    decision = _record(db, table, "acknowledge", alert_id, None, None, None, by, role, reason, now)
    db.execute("UPDATE alert SET acknowledged = ? WHERE id = ?", (decision.id, alert_id))
    return decision


def accept_gap(
    db: sqlite3.Connection,
    heads: Heads,
    table: str,
    from_seq: int,
    to_seq: int,
    by: str,
    role: str,
    reason: str,
    digest: str | None,
    now: str,
) -> Accepted:
    """Rows `from_seq`-`to_seq` (which must be the gap the archive has now) recorded as
    missing; the next held row is the one to take (`digest`: which one, if several are
    held), the chain checked from it on."""
    _known(db, heads, table)
    head_seq = heads.get(table, (0, ""))[0]
    after = db.execute(  # rows of a replaced journal may be held below
        "SELECT min(seq) FROM held WHERE table_id = ? AND reason = 'gap' AND seq > ?",
        (table, head_seq + 1),
    ).fetchone()[0]
    if after is None:
        raise DecisionRefused(
            409,
            f"table {table} has no gap: its archive ends at row {head_seq} and no row "
            "waits behind a gap",
        )
    gap = (head_seq + 1, after - 1)
    if (from_seq, to_seq) != gap:
        raise DecisionRefused(
            409,
            f"no such gap: table {table}'s gap is rows {gap[0]}-{gap[1]} (the archive "
            f"ends at row {head_seq}, row {after} waits); accept that one",
        )
    row, held_id = _held_row(db, table, after, "gap", digest)
    decision = _record(
        db, table, "accept_gap", None, from_seq, to_seq, row.hash, by, role, reason, now
    )
    return Accepted(decision, row, held_id, "gap")


def accept_chain(
    db: sqlite3.Connection,
    heads: Heads,
    table: str,
    seq: int,
    by: str,
    role: str,
    reason: str,
    digest: str | None,
    now: str,
) -> Accepted:
    """The held row `seq` that does not link to the archive's last row recorded as the
    start of a new chain (`digest`: which one, if several rows `seq` are held); the chain
    is checked from it on. A held row that branches off an archived row (a station
    restored without its floor) begins a new epoch of the table (`epochs`)."""
    _known(db, heads, table)
    head_seq = heads.get(table, (0, ""))[0]
    rolled = db.execute(
        "SELECT 1 FROM held WHERE table_id = ? AND seq = ? AND reason = 'rollback' LIMIT 1",
        (table, seq),
    ).fetchone()
    if rolled is not None:
        raise DecisionRefused(
            409,
            f"row {seq} of table {table} is held as a ROLLBACK: it branches off the archive "
            "without a `journal restored` or `journal discontinuity` notice, so it is no "
            "epoch and cannot be accepted as one. Put the station's journal back with "
            "`station journal restore BACKUP --from-floor URL`, and find out who changed it",
        )
    branch = db.execute(
        "SELECT min(seq) FROM held WHERE table_id = ? AND reason = 'epoch' AND seq <= ?",
        (table, head_seq),
    ).fetchone()[0]
    if branch is not None and seq == branch:
        row, held_id = _held_row(db, table, seq, "epoch", digest)
        number = epochs.current(db, table) + 1
        decision = _record(
            db, table, "accept_chain", None, seq, seq, row.hash, by, role, reason, now, number
        )
        return Accepted(decision, row, held_id, "epoch", number)
    broken = sorted(
        s
        for (s,) in db.execute(
            "SELECT DISTINCT seq FROM held WHERE table_id = ? AND reason = 'chain'", (table,)
        )
    )
    if not broken and branch is None:
        raise DecisionRefused(409, f"table {table} has no broken chain: no row is held for one")
    if seq != head_seq + 1 or seq not in broken:
        held = ", ".join(map(str, broken)) or "none"
        epoch = "" if branch is None else f"; a new epoch waits from row {branch}"
        raise DecisionRefused(
            409,
            f"no such broken chain: table {table}'s archive ends at row {head_seq}; the "
            f"row held for a broken chain is {held}{epoch}; accept row {head_seq + 1} if "
            "it is held, else the gap first",
        )
    row, held_id = _held_row(db, table, seq, "chain", digest)
    decision = _record(db, table, "accept_chain", None, seq, seq, row.hash, by, role, reason, now)
    return Accepted(decision, row, held_id, "chain")


def accept_key(
    db: sqlite3.Connection,
    keys: Mapping[str, TableKey],
    table: str,
    fingerprint: str,
    by: str,
    role: str,
    reason: str,
    now: str,
) -> tuple[Decision, TableKey]:
    """The key the table's station named on first use, `fingerprint` (as the floor view
    shows it), trusted from now on; the decision and the table's key as it now is."""
    held = keys.get(table)
    if held is None or held.state != "pending":
        state = "none" if held is None else f"{held.fingerprint} ({held.state})"
        raise DecisionRefused(
            404 if held is None else 409,
            f"table {table} has no key waiting to be accepted (its key: {state})",
        )
    if held.key is None:
        raise DecisionRefused(
            409,
            f"table {table}'s rows name no key: set the key `station key show` prints at "
            "the table (set-key), or give [[table]] public_key in the floor's config",
        )
    if fingerprint.strip().lower() != held.key.fingerprint:
        other = _held_naming(db, table, fingerprint.strip().lower())
        if other is not None:  # its first row was someone else's: the station's key is set
            return set_key(db, keys, table, other, by, role, reason, now)
        raise DecisionRefused(
            409,
            f"table {table}'s station named key {held.key.fingerprint}, not {fingerprint}, "
            "and no held row names and is signed by that key: compare it with `station key "
            "show` at the table (or set the key the station shows: set-key)",
        )
    decision = _record(
        db, table, "accept_key", None, None, None, held.key.fingerprint, by, role, reason, now
    )
    return decision, TableKey(table, held.key, "trusted", ACCEPTED, None, held.key, decision.id)


def set_key(
    db: sqlite3.Connection,
    keys: Mapping[str, TableKey],
    table: str,
    key: PublicKey,
    by: str,
    role: str,
    reason: str,
    now: str,
) -> tuple[Decision, TableKey]:
    """`key` (the one `station key show` prints at the table) trusted as the table's from
    now on, covering it from row 1, instead of a key its rows named on first use (a first
    row taken with someone else's key, issue 32) or none; refused for a table whose key
    the floor trusts already (it changes by an endorsed rotation, or the config)."""
    held = keys.get(table)
    if held is not None and held.state == "trusted":
        raise DecisionRefused(
            409,
            f"table {table}'s key is {held.fingerprint} ({held.origin}), trusted: it changes "
            "only by a rotation it endorses (`station key rotate`) or in the floor's config",
        )
    if held is None:
        found = db.execute(
            "SELECT 1 FROM held WHERE table_id = ? UNION SELECT 1 FROM row WHERE table_id = ? "
            "LIMIT 1",
            (table, table),
        ).fetchone()
        if found is None:
            raise DecisionRefused(
                404,
                f"unknown table {table!r}: the archive has no row of it; give its key as "
                "[[table]] public_key in the floor's config",
            )
    decision = _record(
        db, table, "set_key", None, None, None, key.fingerprint, by, role, reason, now
    )
    return decision, TableKey(table, key, "trusted", SET, None, key, decision.id)


def _held_naming(db: sqlite3.Connection, table: str, fingerprint: str) -> PublicKey | None:
    """The key of `fingerprint` that a row held for a key names and is signed by (the
    station's first row, held behind a first row someone else's key signed)."""
    for (body,) in db.execute(
        "SELECT body FROM held WHERE table_id = ? AND reason IN ('key', 'forged') "
        "AND instr(body, 'signing_key') > 0 ORDER BY seq, id",
        (table,),
    ):
        try:
            row = parse_row(body, table)
        except Malformed:
            continue
        named = named_key(row)
        if named is not None and named.fingerprint == fingerprint:
            return named
    return None


def accepted_gap(db: sqlite3.Connection, table: str, seq: int) -> Decision | None:
    """The accepted gap that row `seq` falls in: a row come after a supervisor accepted it
    as missing (the archive went on without it). None: no such decision."""
    found = read_decisions(
        db,
        "table_id = ? AND kind = 'accept_gap' AND ? BETWEEN from_seq AND to_seq",
        (table, seq),
    )
    return found[0] if found else None


def late_words(seq: int, accepted: Decision) -> Said:
    """The alert's words for row `seq`, come after `accepted` let the archive go on."""
    words = (
        f"row {seq} came after {accepted.by} accepted rows {accepted.from_seq}-"
        f"{accepted.to_seq} as missing ({accepted.decided}); it is held, not archived"
    )
    figures = {
        "seq": seq,
        "by": accepted.by,
        "from": accepted.from_seq,
        "to": accepted.to_seq,
        "at": accepted.decided,
    }
    return Said("late", words, figures)


def _known(db: sqlite3.Connection, heads: Heads, table: str) -> None:
    """A refusal for a table the archive has neither a row nor a held row of."""
    if table in heads:
        return
    held = db.execute("SELECT 1 FROM held WHERE table_id = ? LIMIT 1", (table,))
    if held.fetchone() is None:
        known = ", ".join(sorted(heads)[:20]) or "none yet"
        raise DecisionRefused(
            404,
            f"unknown table {table!r}: the archive has no row of it (its tables: {known}); "
            "see GET /api/floor/tables",
        )


def _held_row(
    db: sqlite3.Connection, table: str, seq: int, reason: str, digest: str | None
) -> tuple[FloorRow, int]:
    """The held row `seq` a decision takes, and its id; a refusal if several are held and
    `digest` does not say which."""
    found = db.execute(
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


def _record(
    db: sqlite3.Connection,
    table: str,
    kind: str,
    alert_id: int | None,
    from_seq: int | None,
    to_seq: int | None,
    digest: str | None,
    by: str,
    role: str,
    reason: str,
    now: str,
    epoch: int | None = None,
) -> Decision:
    """Write the decision (inside the archive's transaction), as it is read back."""
    cur = db.execute(
        "INSERT INTO decision (table_id, kind, alert_id, from_seq, to_seq, hash, actor, "
        "role, reason, decided, epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (table, kind, alert_id, from_seq, to_seq, digest, by, role, reason, now, epoch),
    )
    assert cur.lastrowid is not None
    return Decision(
        cur.lastrowid,
        table,
        kind,
        alert_id,
        from_seq,
        to_seq,
        digest,
        by,
        role,
        reason,
        now,
        epoch,
    )
