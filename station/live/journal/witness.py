"""The floor archive as the journal's witness: its copy of the table's rows, read over the
floor service's API (`GET /api/floor/tables/{table}/rows`, a viewer's token), compared
with the journal (`station journal verify --against-floor`) or taken after a backup
(`station journal restore --from-floor`).

Why: whoever holds the station's key and can write its journal file can rewrite the
journal so that it verifies; the rows the floor archived when they were committed are
what such a rewrite is measured against. And a journal lost after its last backup is
still whole on the floor, every row of it checked there (hash, chain, signature) and
checked again here before it is taken.

The floor service is another program: this module speaks to it over HTTP only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from station.shared.rows import GENESIS, row_hash

#: Rows asked at a time (the floor answers at most 1,000).
PAGE = 500
#: The environment variable a viewer's token for the floor may come from.
TOKEN_ENV = "STATION_FLOOR_TOKEN"
#: A stored row: seq, ts, source, actor, kind, event, verdict, prev_hash, hash, signature.
Stored = tuple[int, str, str, str, str, str, str | None, str, str, str | None]


class WitnessError(Exception):
    """The floor cannot be read, or what it holds cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class FloorArchive:
    """The floor service at `url`, read with a viewer's `token`."""

    url: str
    token: str | None
    timeout: float = 10.0

    def _get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        headers = {} if not self.token else {"Authorization": f"Bearer {self.token}"}
        where = self.url.rstrip("/") + path
        try:
            answer = httpx.get(where, params=params, headers=headers, timeout=self.timeout)
        except httpx.HTTPError as exc:
            raise WitnessError(f"cannot reach the floor service at {self.url}: {exc}") from None
        if answer.status_code in (401, 403):
            raise WitnessError(
                f"the floor service at {self.url} refused the token ({answer.status_code}): "
                f"give a viewer's token (--floor-token, or ${TOKEN_ENV})"
            )
        if answer.status_code != 200:
            detail = answer.text[:300]
            raise WitnessError(f"the floor service answered {answer.status_code}: {detail}")
        try:
            return answer.json()
        except ValueError:
            raise WitnessError(f"the floor service at {self.url} did not answer JSON") from None

    def rows(self, table: str, after: int = 0) -> Iterator[Stored]:
        """The table's archived rows after `after`, in order, as the journal stores them."""
        path = f"/api/floor/tables/{table}/rows"  # a table id is a subject token: no quoting
        while True:
            page = self._get(path, {"after": after, "limit": PAGE})
            found = page.get("rows") if isinstance(page, dict) else None
            if not isinstance(found, list):
                raise WitnessError("the floor service's answer has no rows")
            for row in found:
                stored = _stored(row)
                yield stored
                after = stored[0]
            if len(found) < PAGE:
                return

    def station_seq(self, table: str) -> int | None:
        """The last row the table's station said it had (its last heartbeat the floor
        heard), None: the floor does not know."""
        floor = self._get("/api/floor/tables")
        for seen in floor.get("tables", []) if isinstance(floor, dict) else []:
            if isinstance(seen, dict) and seen.get("id") == table:
                seq = seen.get("station_seq")
                return seq if isinstance(seq, int) else None
        return None


def _stored(row: Any) -> Stored:
    """A row of the floor's answer as the journal stores it; WitnessError if it is not."""
    try:
        stored: Stored = (
            int(row["seq"]),
            str(row["ts"]),
            str(row["source"]),
            str(row["actor"]),
            str(row["kind"]),
            str(row["event"]),
            None if row["verdict"] is None else str(row["verdict"]),
            str(row["prev_hash"]),
            str(row["hash"]),
            None if row.get("signature") is None else str(row["signature"]),
        )
    except (KeyError, TypeError, ValueError):
        raise WitnessError(f"the floor sent a row that is not one: {str(row)[:200]}") from None
    return stored


def chained(rows: Iterable[Stored], seq: int, prev: str) -> list[Stored]:
    """The rows, each checked to follow the one before (from row `seq`, whose hash is
    `prev`) and to hash to its own contents; WitnessError naming the first that does not.
    (Signatures are checked with the whole journal: `Journal.verify`.)"""
    taken = []
    for row in rows:
        if row[0] != seq + 1 or row[7] != prev:
            raise WitnessError(
                f"the floor's row {row[0]} does not follow row {seq} (hash {prev[:12]}…): the "
                "floor holds another journal's rows of this table (or another epoch's)"
            )
        if row_hash(*row[:8]) != row[8]:
            raise WitnessError(f"the floor's row {row[0]}: its hash does not match its contents")
        taken.append(row)
        seq, prev = row[0], row[8]
    return taken


@dataclass(slots=True)
class Comparison:
    """The journal against the floor archive's copy of it."""

    compared: int = 0  # rows both have, the same
    floor_last: int = 0  # the floor archive's last row of the table
    journal_last: int = 0
    problem: str | None = None  # the first row that differs, in words

    @property
    def ok(self) -> bool:
        return self.problem is None


def compare(journal: Iterable[tuple[int, str]], floor: Iterable[Stored]) -> Comparison:
    """Compare the journal's rows (seq, hash) with the floor's, row by row; the first row
    that differs is named (a row the floor has past the journal's end too: rows removed)."""
    found = Comparison()
    ours = iter(journal)
    prev = GENESIS
    for row in floor:
        found.floor_last = row[0]
        mine = next(ours, None)
        if mine is None:
            found.problem = (
                f"row {row[0]}: the floor archive has it, this journal ends at row "
                f"{found.journal_last}: rows were removed from the journal"
            )
            return found
        found.journal_last = mine[0]
        if mine[0] != row[0]:
            found.problem = (
                f"row {min(mine[0], row[0])}: one of the two lacks it (the journal has row "
                f"{mine[0]} where the floor archive has row {row[0]})"
            )
            return found
        if mine[1] != row[8]:
            found.problem = (
                f"row {row[0]}: the floor archive has hash {row[8][:12]}…, this journal "
                f"{mine[1][:12]}…: the row was changed (or rows before it were) after the "
                "floor archived it"
            )
            return found
        if row_hash(*row[:8]) != row[8] or row[7] != prev:
            found.problem = f"row {row[0]}: the floor archive's copy does not hold together"
            return found
        prev = row[8]
        found.compared += 1
    for mine in ours:
        found.journal_last = mine[0]
    return found
