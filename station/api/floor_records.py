"""What the floor's API says of a table as a witness: its key, its forged rows and
messages, its epochs, and its archived rows as the station's journal stores them (the
read a station makes for `station journal verify --against-floor` and `station journal
restore --from-floor`).

Why apart from `station.api.floor`: these are the archive's records, not the floor view's
glance; the floor's app takes the models and the reads from here and routes them with its
own login checks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import BaseModel, Field

from station.floor.archive import Archive, Committed
from station.floor.arrival import FloorRow
from station.floor.service import FloorService
from station.shared.signing import PublicKey

#: The most rows one read returns (a station reads the rest after the last one).
MAX_ROWS = 1000


class KeyOut(BaseModel):
    """A table's public key as the floor holds it."""

    fingerprint: str | None = Field(
        description="the key's fingerprint (`station key show` prints it); null: the "
        "table's rows are signed but name no key (give [[table]] public_key)"
    )
    public_key: str | None = Field(description="the key, ed25519:... (null: as above)")
    state: str = Field(
        description="trusted (rows, heartbeats and alerts are checked with it) or pending "
        "(named by the station on first use: its rows are held until a supervisor accepts it)"
    )
    origin: str = Field(description="config, first use, accepted or rotation")
    since_seq: int | None = Field(description="the archived row that named it (null: none yet)")


class NewEpoch(BaseModel):
    """A restored journal's new epoch waiting for a supervisor (accept-chain takes it)."""

    seq: int = Field(description="its first row (what accept-chain takes)")
    epoch: int = Field(description="the table's epoch it would begin")


class RowOut(BaseModel):
    """One archived row as its station's journal stores it: its hash is checked from these
    fields (`station.shared.rows.row_hash`), its signature with the table's key."""

    seq: int
    ts: str
    source: str
    actor: str
    kind: str = Field(description="event or notice")
    event: str = Field(description="the event as the journal stores it: sorted-key JSON text")
    verdict: str | None = Field(description="the verdict as stored (JSON text), null for a notice")
    prev_hash: str
    hash: str
    signature: str | None = Field(description="the station's signature of hash (null: unsigned)")


class Rows(BaseModel):
    """A table's archived rows after a seq: its chain as its journal now has it."""

    table: str
    archived_seq: int = Field(description="the table's last archived row")
    key: KeyOut | None = Field(description="the table's key as the floor holds it")
    rows: list[RowOut] = Field(description="in order; fewer than asked: the last ones")


def _out(row: FloorRow) -> RowOut:
    return RowOut(
        seq=row.seq,
        ts=row.ts,
        source=row.source,
        actor=row.actor,
        kind=row.kind,
        event=row.event,
        verdict=row.verdict,
        prev_hash=row.prev_hash,
        hash=row.hash,
        signature=row.signature,
    )


async def rows_of(service: FloorService, table: str, after: int, limit: int) -> Rows | None:
    """The table's archived rows after `after` (at most `limit`), None: the archive has
    no row of the table."""
    archive = service.archive
    if archive is None or table not in archive.heads:
        return None
    found = await asyncio.to_thread(archive.read_rows, table, after, min(limit, MAX_ROWS))
    key = archive.keys.get(table)
    return Rows(
        table=table,
        archived_seq=archive.heads[table][0],
        key=None if key is None else KeyOut.model_validate(key.to_api()),
        rows=[_out(r) for r in found],
    )


def accept_key(
    table: str, fingerprint: str, by: str, role: str, reason: str
) -> Callable[[Archive], Committed]:
    """The decision that trusts the key of `fingerprint` for `table`."""
    return lambda a: a.accept_key(table, fingerprint, by, role, reason)


def set_key(
    table: str, key: PublicKey, by: str, role: str, reason: str
) -> Callable[[Archive], Committed]:
    """The decision that sets `key` as `table`'s (a first-use key taken by someone else)."""
    return lambda a: a.set_key(table, key, by, role, reason)
