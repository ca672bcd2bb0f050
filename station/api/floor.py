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
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, TypeVar

import orjson
from fastapi import FastAPI, HTTPException, Query, Request
from fastapi import Path as InPath
from fastapi.responses import FileResponse
from pydantic import BaseModel, ValidationError
from starlette.requests import HTTPConnection

from station.api import docs
from station.api.auth import Throttle, identify, refuse
from station.api.edges import guard
from station.api.floor_models import (
    AcceptChain,
    AcceptGap,
    AcceptKeyBody,
    AlertOut,
    Alerts,
    Decided,
    DecisionOut,
    Decisions,
    FloorProtectionOut,
    FloorTable,
    FloorTables,
    Reason,
    SetKeyBody,
)
from station.api.floor_records import (
    MAX_ROWS,
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
from station.floor.decisions import DecisionRefused
from station.floor.service import FloorService
from station.shared.signing import PublicKey, SigningError
from station.shared.tokens import Identity, TokenStore, allows
from station.version import station_version

log = logging.getLogger("station.floor")

#: The largest request body the floor reads (it takes none: a small bound).
MAX_BODY = 64 * 1024


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
