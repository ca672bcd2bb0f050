"""The floor API's request and response models: what `GET /api/floor/tables`, the alerts and
the supervisors' decisions answer and take (and the OpenAPI schema says), apart from the
routes that serve them (`station.api.floor`)."""

from __future__ import annotations

import unicodedata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from station.api.floor_records import KeyOut, NewEpoch
from station.core.bounds import MAX_INT
from station.floor.decisions import MAX_REASON


class Suspension(BaseModel):
    code: str = Field(description="the error code that suspended the table")
    explanation: str = Field(description="the code in a supervisor's words")
    since_seq: int | None = Field(description="the journal row that began the suspension")
    source: str = Field(
        description="archive (the archived rows say so) or heartbeat (the station, ahead "
        "of the archive, says so now)"
    )


class Result(BaseModel):
    round: int | None = Field(description="the round's number in its shoe")
    winner: str | None = Field(description="player, banker or tie (null: no single winner)")
    totals: dict[str, int] = Field(description="each hand's total, by hand name")
    outcomes: dict[str, str] | None = Field(
        None, description="baccarat banque: each tableau's win, lose or tie"
    )


class DecisionOut(BaseModel):
    """A supervisor's decision, as the archive records it."""

    id: int
    table: str
    kind: str = Field(description="acknowledge, accept_gap, accept_chain, accept_key or set_key")
    alert: int | None = Field(description="the alert acknowledged (acknowledge)")
    from_seq: int | None = Field(
        description="the first row accepted as missing, or of the new chain"
    )
    to_seq: int | None = Field(
        description="the last row accepted as missing (accept_chain: from_seq)"
    )
    hash: str | None = Field(
        description="the hash of the row the archive went on from (accept_key: the key's "
        "fingerprint)"
    )
    by: str = Field(description="the token's name that decided")
    role: str = Field(description="its role")
    reason: str = Field(description="why, in the supervisor's words")
    decided: str = Field(description="when (UTC)")
    epoch: int | None = Field(
        None, description="accept_chain of a restored journal: the table's epoch it began"
    )


class AlertOut(BaseModel):
    id: int
    table: str
    seq: int | None = Field(description="the row it is about (null: not a readable row)")
    kind: str = Field(
        description="gap, chain, altered, conflict, malformed or late (a row of an accepted "
        "gap came after all) (the archive); SHOE_SEQUENCE "
        "or WEAK_SHUFFLE (game protection: a station's notice, or the floor-wide check); "
        "protection (the floor-wide check is off, table empty); FORGED_ROW (a row its "
        "station did not sign: held, never archived), FORGED_MESSAGE (a heartbeat or alert "
        "its station did not sign: ignored), new_key (a key named on first use waits for a "
        "supervisor), epoch (a restored journal's new epoch waits for accept-chain), "
        "ROLLBACK (rows branch off the archive without a restore's or discontinuity's "
        "notice: held for good, no epoch), STALE_HEARTBEAT (a signed heartbeat sent again "
        "or too old: ignored)"
    )
    message: str = Field(
        description="what happened and what the floor did, in English (for logs and older "
        "clients; a screen puts `code` and `params` into its own words)"
    )
    code: str | None = Field(
        None,
        description="what the message says, language-free (gap_row, chain, forged_unsigned, "
        "held_full_pending, stale_behind, station_protection, ...: station.floor.said.CODES); "
        "null: an alert of an archive older than codes, shown as its message",
    )
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="the figures the code's words take (rows, hash prefixes, a key's "
        "fingerprint, a table, a count; a protection alert's own fields)",
    )
    raised: str = Field(description="when (UTC)")
    resolved: str | None = Field(
        description="when the missing rows came (gap) or a supervisor accepted the gap or "
        "chain (resolved_by), else null"
    )
    acknowledged: DecisionOut | None = Field(
        None, description="a supervisor's acknowledgement (who, when, why), else null"
    )
    resolved_by: DecisionOut | None = Field(
        None, description="the supervisor's decision that resolved it (an accepted gap or chain)"
    )


class StationAlertOut(BaseModel):
    code: str = Field(description="what happened: foreign, discontinuity or conflict")
    message: str = Field(description="the station's words, in English (logs, older clients)")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="the figures a screen says it with in its own words (by code): the "
        "station's `detail` (its record of what it found), foreign's `stream_seq` and "
        "`after`; a conflict the floor made from ignored heartbeats: `why` (publisher: its "
        "publisher is refused; journal: its journal is not the archived one); none from an "
        "older station",
    )
    ts: str = Field(description="when, by the station's clock (UTC)")
    heartbeats_ignored: int = Field(
        description="conflict: the heartbeats of another journal's station ignored for the "
        "table's line (the latest conflict alert counts them; one is made from them if no "
        "station said so)"
    )
    ignored_seq: int | None = Field(
        description="conflict: the last journal row of that station, as its last ignored "
        "heartbeat said (null: none ignored)"
    )


class Gap(BaseModel):
    from_seq: int = Field(description="the first missing row")
    to_seq: int = Field(description="the last missing row")


class FloorTable(BaseModel):
    """One table at a glance."""

    id: str
    name: str = Field(description="what the floor calls it ([[table]] name, else its id)")
    dashboard: str | None = Field(description="the table's own dashboard (config or heartbeat)")
    online: bool = Field(description="a heartbeat came within [floor] offline_after seconds")
    silent_for: float | None = Field(description="seconds since its last heartbeat (null: none)")
    game: str | None = Field(description="punto_banco, ...; null before its first row")
    decks: int | None
    shoe: int | None = Field(description="shoes started (the shoe in play is this one)")
    in_play: bool = Field(description="a shoe is in play")
    round: int | None = Field(description="the round being dealt, null between rounds")
    rounds: int = Field(description="rounds completed in this shoe")
    expecting: str | None = Field(description="what the table waits for, in words")
    due: str | None = Field(
        None,
        description="what the table waits for as a code (a card role such as B2, burn, "
        "close_bets, decision, shoe; null: suspended, or not known): the screens say it in "
        "their language",
    )
    burns_due: int | None = Field(None, description="burn cards still to come (with due burn)")
    option: dict[str, Any] | None = Field(
        None, description="the option waiting for its decision: hand, total, against (codes)"
    )
    suspended: bool
    suspension: Suspension | None
    journal_down: str | None = Field(
        description="why the station cannot write its journal now, from its heartbeat "
        "(null: it can, or it is offline); the table is then suspended with code "
        "JOURNAL_UNWRITABLE"
    )
    results: list[Result] = Field(description="the shoe's last results, oldest first")
    archived_seq: int = Field(description="the table's last journal row in the floor archive")
    station_seq: int | None = Field(description="the station's last journal row (heartbeat)")
    rows_behind: int | None = Field(description="station_seq - archived_seq (null: not known)")
    held: int = Field(description="rows held back (gap or broken chain), not archived")
    dropped: int = Field(
        description="rows not kept at all: the table's held rows its key did not sign "
        "reached [floor] held_rows (a flood with its broker login: HELD_FULL)"
    )
    gap: Gap | None = Field(
        description="the rows missing before the first row held behind a gap (what "
        "accept-gap takes), else null"
    )
    broken_chain: int | None = Field(
        description="the held row that does not link to the last archived one (what "
        "accept-chain takes), else null"
    )
    alerts: list[AlertOut] = Field(description="the table's open alerts")
    problem: str | None = Field(
        description="why the floor cannot show the table's state, or why it may be off "
        "(rows accepted as missing, until the next shoe), in English"
    )
    problem_code: str | None = Field(
        None,
        description="the problem, language-free (problem_rules, problem_settings, "
        "unsure_row, unsure_rows, unsure_chain, unsure_epoch), which a screen says in its "
        "own words; null: no problem",
    )
    problem_params: dict[str, Any] = Field(
        default_factory=dict, description="the figures the problem's words take"
    )
    state_known: bool = Field(
        description="false after rows accepted as missing (or a new chain): game, shoe and "
        "decks stay, the round, results and a suspension from the rows are not shown until "
        "the table's next shoe (problem says why; a heartbeat still says suspended)"
    )
    accepted: list[DecisionOut] = Field(
        description="the gaps and new chains supervisors accepted on this table, oldest first"
    )
    publisher: str | None = Field(
        description="the table's station's publisher as its heartbeat says: connecting or "
        "publishing (a refused station's heartbeats are not the table's: they are counted on "
        "its conflict alert in station_alerts)"
    )
    station_alerts: list[StationAlertOut] = Field(
        description="what the station said the floor must see (its latest alerts)"
    )
    key: KeyOut | None = Field(description="the table's public key (null: none known)")
    signed: bool = Field(
        description="the floor trusts the table's key: only rows, heartbeats and alerts it "
        "signed count (false: an unsigned station, or its key waits for a supervisor)"
    )
    key_from_config: bool = Field(description="the key is [[table]] public_key's")
    forged: int = Field(description="rows held as forged (not signed by the table's key)")
    forged_messages: int = Field(
        description="heartbeats and alerts ignored as forged since the service started"
    )
    stale_heartbeats: int = Field(
        description="signed heartbeats refused since the service started: not newer than "
        "the last one believed, or too far from the floor's clock (replays: STALE_HEARTBEAT)"
    )
    epoch: int = Field(description="the table's epoch (1, then one more each restored journal)")
    new_epoch: NewEpoch | None = Field(
        description="a restored journal's new epoch waiting for accept-chain, else null"
    )


class FloorProtectionOut(BaseModel):
    """The floor-wide SHOE_SEQUENCE check."""

    enabled: bool = Field(description="[protection] enabled")
    running: bool = Field(description="the check runs (false: off, or not started yet)")
    error: str | None = Field(description="why it is off")
    index: str = Field(description="the floor's index of earlier shoes")
    history_shoes: int | None = Field(description="shoes of the floor in the index")
    k: dict[str, int] = Field(description="the run length each table is checked at now")


class FloorTables(BaseModel):
    """The floor: every table, the broker, the offline timeout."""

    site: str
    broker: str = Field(description="the broker as the service last found it, in words")
    broker_up: bool
    offline_after: float = Field(description="seconds without a heartbeat before offline")
    tables: list[FloorTable]
    protection: FloorProtectionOut


class Alerts(BaseModel):
    alerts: list[AlertOut] = Field(description="every open alert and the latest resolved ones")


class Decisions(BaseModel):
    decisions: list[DecisionOut] = Field(description="every decision, newest first")


class Reason(BaseModel):
    """Why (required): what was checked and why this is right."""

    model_config = ConfigDict(extra="forbid", strict=True)
    reason: str = Field(min_length=1, max_length=MAX_REASON, description="why, in words")

    @field_validator("reason")
    @classmethod
    def _words(cls, value: str) -> str:
        """Words, and line breaks between them (the floor view's box takes several lines;
        a text log writes them escaped, on the decision's one line): no other control
        character, which could hide or overwrite what a terminal shows of the log."""
        if any(unicodedata.category(c) == "Cc" and c not in "\n\t" for c in value):
            raise ValueError("write the reason in words, without control characters")
        return value


class AcceptGap(Reason):
    """The gap as the floor view shows it: the first and last missing rows."""

    from_seq: int = Field(ge=1, le=MAX_INT, description="the first missing row")
    to_seq: int = Field(ge=1, le=MAX_INT, description="the last missing row")
    hash: str | None = Field(
        None, description="which row to_seq + 1 to go on from, if several are held (its hash)"
    )


class AcceptChain(Reason):
    """The held row that starts the new chain."""

    seq: int = Field(ge=1, le=MAX_INT, description="the row that does not link to the one before")
    hash: str | None = Field(None, description="which row `seq`, if several are held (their hash)")


class AcceptKeyBody(Reason):
    """The key the table's station named, as the floor view shows it."""

    fingerprint: str = Field(
        min_length=1, max_length=64, description="its fingerprint, compared at the table"
    )


class SetKeyBody(Reason):
    """The table's key as its station shows it (`station key show`)."""

    public_key: str = Field(
        min_length=1, max_length=200, description="ed25519:... as `station key show` prints it"
    )


class Decided(BaseModel):
    """What a decision did."""

    decision: DecisionOut
    archived: int = Field(description="rows it let into the archive")
    archived_seq: int | None = Field(description="the table's last archived row now")
