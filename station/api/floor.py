"""The floor service's web app (`station floor`): the floor page, `GET /api/floor/tables`,
the alerts, and the same token login and roles as a station's.

Why a separate app: the floor service has no table of its own (no `Station`), only the
board and the archive of `station.floor`. The login is the station's
(`station.api.auth.identify`: bearer tokens by hash from `[api] tokens` and the token
file, the throttle on wrong tokens); any role from viewer up may see the floor, a rig
token may not (the floor has no rig). A supervisor may acknowledge an alert and let a table
held behind a gap or a broken chain go on (`POST /api/floor/...`, a reason required), each
decision recorded in the archive with who. The page's files come from `station/web/` under the
dashboard's Content-Security-Policy: no CDN, nothing from outside.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import unicodedata
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, TypeVar

import orjson
from fastapi import FastAPI, HTTPException, Query, Request
from fastapi import Path as InPath
from fastapi.responses import FileResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.requests import HTTPConnection

from station.api import docs
from station.api.auth import Throttle, identify, refuse
from station.api.edges import guard
from station.api.floor_records import (
    MAX_ROWS,
    KeyOut,
    NewEpoch,
    Rows,
    accept_key,
    rows_of,
    set_key,
)
from station.api.limits import BodyLimit, require_json
from station.api.refusals import READ, refusals
from station.api.static import HEADERS, TYPES, WEB, web_file
from station.core.bounds import MAX_INT
from station.floor.archive import Archive, Committed
from station.floor.decisions import MAX_REASON, DecisionRefused
from station.floor.service import FloorService
from station.shared.signing import PublicKey, SigningError
from station.shared.tokens import Identity, TokenStore, allows
from station.version import station_version

log = logging.getLogger("station.floor")

#: The largest request body the floor reads (it takes none: a small bound).
MAX_BODY = 64 * 1024


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


def service_of(conn: HTTPConnection) -> FloorService:
    service: FloorService = conn.app.state.floor
    return service


def floor_reader(request: Request) -> Identity | None:
    """Any valid token from viewer up (none with `[api] public_read`); 503 until the
    archive is replayed."""
    who = identify(request)
    service = service_of(request)
    if not service.config.api.public_read:
        check_floor_role(request, who, "viewer")
    if not service.ready:
        detail = service.fatal or "the floor service is starting (replaying its archive)"
        raise HTTPException(503, detail, headers={"Retry-After": "1"})
    return who


def check_floor_role(conn: HTTPConnection, who: Identity | None, needed: str) -> Identity:
    """`who` if it may act as `needed` on the floor; a rig token never may."""
    if who is None:
        raise refuse(conn, 401, "a token is needed: send 'Authorization: Bearer TOKEN'", None)
    if who.role == "rig":
        raise refuse(
            conn, 403, "this action needs a token of a higher role", who, "no rig on the floor"
        )
    if not allows(who.role, needed):
        raise refuse(
            conn, 403, "this action needs a token of a higher role", who, f"needs {needed}"
        )
    return who


M = TypeVar("M", bound=BaseModel)
DECIDE = (401, 403, 404, 409, 413, 415, 422, 429, 503)


def body_of(raw: bytes, model: type[M]) -> M:
    """The request body as `model`; a ValueError saying what to send instead."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ValueError('the body is not JSON: send an object such as {"reason": "..."}') from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"]) or "the body"
        fields = ", ".join(model.model_fields)
        raise ValueError(f"{where}: {error['msg']} (send {fields})") from None


def supervisor(request: Request) -> Identity:
    """Who decides: a supervisor's token (401, 403 else); 503 until the archive is open."""
    who = check_floor_role(request, identify(request), "supervisor")
    floor = service_of(request)
    if not floor.ready:
        detail = floor.fatal or "the floor service is starting (replaying its archive)"
        raise HTTPException(503, detail, headers={"Retry-After": "1"})
    return who


async def decide(
    request: Request, who: Identity, decision: Callable[[Archive], Committed]
) -> Decided:
    """A supervisor's decision: the archive's transaction; a refusal says what to do and
    is logged with who asked (the decision itself is recorded with who)."""
    floor = service_of(request)
    try:
        done = await floor.decide(decision)
    except DecisionRefused as exc:
        raise refuse(request, exc.status, str(exc), who) from None
    assert done.decision is not None
    table = done.decision.table
    head = floor.archive.heads.get(table) if floor.archive is not None else None
    return Decided(
        decision=DecisionOut.model_validate(done.decision.to_api()),
        archived=len(done.accepted),
        archived_seq=head[0] if head is not None else None,
    )


async def parsed(request: Request, model: type[M]) -> M:
    """The body as `model` (after the role check: a viewer learns nothing from a 422)."""
    require_json(request)
    try:
        return body_of(await request.body(), model)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None


def create_floor_app(service: FloorService, tokens: TokenStore) -> FastAPI:
    """The floor's API and page. Its lifespan starts the service (answers 503 until the
    archive is replayed) and stops it on shutdown."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        starting = asyncio.create_task(service.start(), name="floor start")
        try:
            yield
        finally:
            if not starting.done():
                starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            await service.stop()

    app = FastAPI(
        title="Baccarat floor",
        version=station_version(),
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.floor = service
    app.state.tokens = tokens
    app.state.throttle = Throttle()
    app.add_middleware(BodyLimit, limit=MAX_BODY)
    guard(app, service.config.api)  # HEAD, the Host (public_read), quiet failed accepts

    @app.get("/", include_in_schema=False)
    async def floor_page() -> FileResponse:
        return FileResponse(WEB / "floor.html", media_type=TYPES[".html"], headers=HEADERS)

    app.add_api_route("/web/{name:path}", web_file, methods=["GET"], include_in_schema=False)
    app.include_router(docs.router)

    @app.get("/api/whoami", responses=refusals(401, 413, 429))
    async def whoami(request: Request) -> dict[str, Any]:
        """The token's name and role (401 for an unknown token); without a token, whether
        the floor is public. The floor page's login checks a token with this; its
        `language` is the floor view's default (`[floor] language`: a person's own choice
        and their browser's come first)."""
        who = identify(request)
        role = who.role if who else None
        config = service_of(request).config
        return {
            "name": who.name if who else None,
            "role": role,
            "acts_as": None if role == "rig" else role,
            "public_read": config.api.public_read,
            "site": config.broker.site,
            "language": config.floor.language,
        }

    @app.get("/api/health", responses=refusals(413))
    async def health(request: Request) -> dict[str, Any]:
        """Liveness without a token: the service answers, whether its archive is open and
        whether the broker is reachable (no table state)."""
        floor = service_of(request)
        status = "stopped" if floor.fatal else "ok" if floor.ready else "starting"
        return {"status": status, "broker_up": floor.board.broker_up, "version": app.version}

    @app.get("/api/floor/tables", responses=refusals(*READ))
    async def floor_tables(request: Request) -> FloorTables:
        """Every table at a glance: game, shoe, round, suspended and why, online (a
        heartbeat within `offline_after` seconds), rows behind the station's journal, the
        shoe's last results, open alerts and a link to the table's own dashboard."""
        floor_reader(request)
        floor = service_of(request)
        board = floor.board
        return FloorTables(
            site=floor.config.broker.site,
            broker=board.broker,
            broker_up=board.broker_up,
            offline_after=floor.config.floor.offline_after,
            tables=[FloorTable.model_validate(t) for t in board.tables()],
            protection=FloorProtectionOut.model_validate(floor.protection.status()),
        )

    @app.get("/api/floor/alerts", responses=refusals(*READ))
    async def floor_alerts(request: Request) -> Alerts:
        """Every open alert (a gap, a broken chain, a row that is not one, a repeated
        shoe or a weak shuffle, the floor-wide check being off) and the latest resolved
        ones, newest first."""
        floor_reader(request)
        floor = service_of(request)
        off = floor.protection.error_alert()
        alerts = ([off] if off is not None else []) + floor.board.alerts
        return Alerts(alerts=[AlertOut.model_validate(a.to_api()) for a in alerts])

    @app.get("/api/floor/decisions", responses=refusals(*READ))
    async def floor_decisions(request: Request) -> Decisions:
        """Every supervisor's decision (acknowledged alerts, accepted gaps and chains),
        newest first, with who, when and why."""
        floor_reader(request)
        archive = service_of(request).archive
        found = [] if archive is None else await asyncio.to_thread(archive.decisions)
        return Decisions(
            decisions=[DecisionOut.model_validate(d.to_api()) for d in reversed(found)]
        )

    @app.post("/api/floor/alerts/{alert_id}/acknowledge", responses=refusals(*DECIDE))
    async def acknowledge(
        request: Request, alert_id: Annotated[int, InPath(ge=1, le=MAX_INT)]
    ) -> Decided:
        """Supervisor: the alert is seen and dealt with (it stays open, shown as
        acknowledged, and in the history). Body: `reason`."""
        who = supervisor(request)
        body = await parsed(request, Reason)
        return await decide(
            request, who, lambda a: a.acknowledge(alert_id, who.name, who.role, body.reason)
        )

    @app.post("/api/floor/tables/{table}/accept-gap", responses=refusals(*DECIDE))
    async def accept_gap(request: Request, table: str) -> Decided:
        """Supervisor: the table's missing rows `from_seq`-`to_seq` will not come; its
        archive goes on from the next row it holds, the chain checked from there.
        Body: `from_seq`, `to_seq` (the gap the table's line shows), `reason`."""
        who = supervisor(request)
        body = await parsed(request, AcceptGap)
        return await decide(
            request,
            who,
            lambda a: a.accept_gap(
                table, body.from_seq, body.to_seq, who.name, who.role, body.reason, body.hash
            ),
        )

    @app.post("/api/floor/tables/{table}/accept-chain", responses=refusals(*DECIDE))
    async def accept_chain(request: Request, table: str) -> Decided:
        """Supervisor: the held row `seq`, which does not link to the row before it,
        starts a new chain; the archive takes it and checks the chain from it on.
        Body: `seq`, `reason`, and `hash` if several rows `seq` are held."""
        who = supervisor(request)
        body = await parsed(request, AcceptChain)
        return await decide(
            request,
            who,
            lambda a: a.accept_chain(table, body.seq, who.name, who.role, body.reason, body.hash),
        )

    @app.post("/api/floor/tables/{table}/accept-key", responses=refusals(*DECIDE))
    async def accept_table_key(request: Request, table: str) -> Decided:
        """Supervisor: the key the table's station named on first use (`key`, pending) is
        the table's; its held rows are checked with it. Body: `fingerprint` (compared with
        `station key show` at the table), `reason`."""
        who = supervisor(request)
        body = await parsed(request, AcceptKeyBody)
        decision = accept_key(table, body.fingerprint, who.name, who.role, body.reason)
        return await decide(request, who, decision)

    @app.post("/api/floor/tables/{table}/set-key", responses=refusals(*DECIDE))
    async def set_table_key(request: Request, table: str) -> Decided:
        """Supervisor: the table's key is `public_key` (as `station key show` prints it at
        the table), from row 1, instead of a key its first row named (someone else's) or
        none; its rows held for a key are checked with it, without a restart. Refused for
        a table whose key is trusted already. Body: `public_key`, `reason`."""
        who = supervisor(request)
        body = await parsed(request, SetKeyBody)
        try:
            key = PublicKey.from_text(body.public_key.strip())
        except SigningError as exc:
            raise HTTPException(
                422, f"public_key: {exc}; give it as `station key show` prints it"
            ) from None
        decision = set_key(table, key, who.name, who.role, body.reason)
        return await decide(request, who, decision)

    @app.get("/api/floor/tables/{table}/rows", responses=refusals(*READ, 404))
    async def table_rows(
        request: Request,
        table: str,
        after: Annotated[int, Query(ge=0, le=MAX_INT)] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_ROWS)] = 500,
    ) -> Rows:
        """A table's archived rows after `after`, as its journal stores them, with hashes
        and signatures (its chain as its journal now has it): what `station journal
        verify --against-floor` compares and `restore --from-floor` takes. A token from
        viewer up, even with `public_read` (the rows are the journal, not the view)."""
        check_floor_role(request, identify(request), "viewer")
        floor_reader(request)  # ready (503 until the archive is replayed)
        found = await rows_of(service_of(request), table, after, limit)
        if found is None:
            raise HTTPException(404, f"the floor archive has no row of table {table!r}")
        return found

    return app
