"""Verifying a journal: its hash chain, its head anchor, every verdict against the core,
and, given a key the verifier trusts, every signature.

Each row's hash covers its own fields and the previous row's hash, so an edited, deleted
or reordered row breaks the chain. A deleted *last* row leaves a valid chain, so the
writer also keeps a head anchor file beside the database (`<path>.head`: the last seq and
hash, which may lag the database but never lead it); the chain must reach it. Then the
core replays the table from the recorded settings and must decide every stored verdict.

The chain has no key: whoever can write the file can edit a row and compute every later
hash and the anchor again, and the chain still holds. Only the signatures tell (`keys`):
rewritten rows do not verify with the station's public key (`station.shared.keychain`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from station.live.journal import anchor as anchors
from station.live.journal import reading
from station.live.journal.epoch import DISCONTINUITY
from station.live.journal.errors import JournalError
from station.live.journal.table import replay, settings_in, settings_of, table_of
from station.shared import keychain
from station.shared.rows import GENESIS, row_hash
from station.shared.signing import PublicKey


@dataclass(slots=True)
class VerifyReport:
    """What `Journal.verify` found."""

    rows: int = 0
    events: int = 0
    last_seq: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Rows that carry a signature (checked or not).
    signed_rows: int = 0
    #: The signatures against a trusted key (None: not checked, no key was given).
    signatures: keychain.SignatureReport | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_journal(
    db: sqlite3.Connection,
    path: Path,
    head_path: Path,
    trusted: PublicKey | None = None,
    accept_unsigned_before: int = 1,
) -> VerifyReport:
    """Check the chain of the journal at `path` (open on `db`), its head anchor
    (`head_path`), that the core's replay agrees with every stored verdict and, with a
    `trusted` key, every signature: a row no key signed (written before the journal had
    one) is a problem unless its seq is below `accept_unsigned_before` (issue 32: rows
    rewritten as if never signed must not pass for the key's). Never raises for a bad
    journal: the report lists the problems."""
    report = VerifyReport()
    prev, expected_seq = GENESIS, 1
    sql = (
        "SELECT seq, ts, source, actor, kind, event, verdict, prev_hash, hash, signature "
        "FROM journal"
    )
    try:
        raw_rows = db.execute(sql + " ORDER BY rowid").fetchall()
    except sqlite3.Error as exc:
        report.problems.append(f"cannot read the journal: {exc}")
        return report
    for seq, ts, source, actor, kind, event, verdict, prev_hash, h, signature in raw_rows:
        if kind == "notice" and DISCONTINUITY in event:
            _said_discontinuity(report, seq, event)
        report.rows += 1
        report.signed_rows += signature is not None
        if seq != expected_seq:
            report.problems.append(
                f"row {seq}: expected row {expected_seq} here (a row was deleted or the "
                "rows were reordered)"
            )
        if prev_hash != prev:
            report.problems.append(
                f"row {seq}: prev_hash does not match the previous "
                "row's hash (a row before it was deleted, changed or "
                "moved)"
            )
        if row_hash(seq, ts, source, actor, kind, event, verdict, prev_hash) != h:
            report.problems.append(
                f"row {seq}: its hash does not match its contents (the row was edited)"
            )
        prev, expected_seq = h, seq + 1
    report.last_seq = raw_rows[-1][0] if raw_rows else 0
    _verify_head(report, raw_rows, head_path)
    if trusted is not None:
        report.signatures = keychain.check(
            ((r[0], r[4], r[5], r[8], r[9]) for r in raw_rows), trusted
        )
        if report.signatures.problem is not None:
            report.problems.append(report.signatures.problem)
        elif report.signatures.unsigned:
            unsigned = report.signatures.unsigned  # rows 1..unsigned: before the first key
            if unsigned >= accept_unsigned_before:
                report.problems.append(
                    f"rows {max(accept_unsigned_before, 1)}-{unsigned} are signed by no key "
                    f"(written before the journal had one, or rewritten as if never signed): "
                    f"the key given does not vouch for them; if you checked them otherwise "
                    f"(the floor, a backup), accept them with --accept-unsigned-before "
                    f"{unsigned + 1}"
                )
    if not report.problems:
        _verify_verdicts(report, db, path)
    return report


def _said_discontinuity(report: VerifyReport, seq: int, event: str) -> None:
    """A `journal discontinuity` notice: the station found, at a start, a journal other
    than the one it last signed; said, so that whoever checks looks at the floor's copy."""
    try:
        body = orjson.loads(event)
    except orjson.JSONDecodeError:
        return
    if body.get("message") == DISCONTINUITY:
        report.warnings.append(
            f"row {seq}: a journal discontinuity (epoch {body.get('epoch')}): "
            f"{body.get('found')}; compare with the floor (--against-floor)"
        )


def _verify_head(report: VerifyReport, raw_rows: list[Any], head_path: Path) -> None:
    try:
        head = anchors.read(head_path)
    except anchors.Unreadable:
        report.problems.append(f"the head anchor {head_path} is unreadable")
        return
    if head is None:
        if raw_rows:
            report.warnings.append(
                f"no head anchor {head_path}: a deleted last row would not be detected"
            )
        return
    hashes = {r[0]: r[8] for r in raw_rows}
    if head.seq not in hashes:
        report.problems.append(
            f"the head anchor says row {head.seq} was committed, but "
            "the journal does not have it (rows were deleted)"
        )
    elif hashes[head.seq] != head.hash:
        report.problems.append(f"row {head.seq}: its hash differs from the head anchor")


def _verify_verdicts(report: VerifyReport, db: sqlite3.Connection, path: Path) -> None:
    try:
        settings = settings_in(next(reading.rows(db, limit=1), None), path)
    except JournalError as exc:
        report.problems.append(str(exc))
        return
    if settings is None:
        return
    try:
        table = table_of(settings_of(settings))
    except (KeyError, TypeError, ValueError) as exc:
        report.problems.append(f"row 1: bad table settings {settings}: {exc}")
        return
    try:
        report.events = replay(reading.rows(db), table, path).events
    except JournalError as exc:
        report.problems.append(str(exc))
