"""The app factory: routers, the station's life cycle, and error shapes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI

from station.api import (
    docs,
    events,
    health,
    history,
    live,
    metrics,
    odds,
    protection,
    reads,
    sim,
    web,
)
from station.api.auth import Throttle
from station.api.backfill import Backfills
from station.api.display import router as display_router
from station.api.edges import guard
from station.api.limits import BodyLimit
from station.api.refusals import declare_tokens
from station.live.service import Station
from station.shared.tokens import TokenStore
from station.version import station_version

log = logging.getLogger("station.api")


def create_app(station: Station, tokens: TokenStore) -> FastAPI:
    """The API for `station`. Its lifespan starts the station without waiting for it
    (endpoints answer 503 meanwhile) and stops it on shutdown."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        starting = asyncio.create_task(_start(station), name="station start")
        try:
            yield
        finally:
            if not starting.done():
                starting.cancel()
                await asyncio.gather(starting, return_exceptions=True)
            await station.stop()

    app = FastAPI(
        title="Baccarat station",
        version=station_version(),
        lifespan=lifespan,
        docs_url=None,
        openapi_url="/api/openapi.json",
        redoc_url=None,  # docs: api/docs.py
    )
    app.state.station = station
    app.state.tokens = tokens
    app.state.throttle = Throttle()
    api = station.config.api
    app.state.backfills = Backfills(api.max_backfills, api.backfill_queue)  # WS catch-ups
    app.add_middleware(BodyLimit, limit=events.MAX_BODY)
    guard(app, api)  # HEAD, the Host (public_read), quiet failed accepts
    app.include_router(health.router)
    app.include_router(metrics.router)
    app.include_router(events.router)
    app.include_router(reads.router)
    app.include_router(live.router)
    app.include_router(display_router)  # the players' screen: GET /display and its data
    routers = (history.router, odds.router, protection.router, sim.router, web.router)
    for router in (*routers, docs.router):
        app.include_router(router)
    generate_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        """FastAPI's schema plus the event models `POST /api/events` names as its body, the
        bearer tokens (which operations need one, given `[api] public_read`), and
        every refusal declared as JSON (FastAPI gives a route's refusals the media type of
        its answer: `/api/export` answers JSON Lines but refuses in JSON)."""
        schema = generate_openapi()
        schema.setdefault("components", {}).setdefault("schemas", {}).update(events.EVENT_SCHEMAS)
        declare_tokens(schema, station.config.api.public_read)
        for operations in schema["paths"].values():
            for operation in operations.values():
                for status, answer in operation["responses"].items():
                    content = answer.get("content", {})
                    if int(status) >= 400 and "application/json" not in content:
                        answer["content"] = {"application/json": next(iter(content.values()))}
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


async def _start(station: Station) -> None:
    try:
        await station.start()
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        message = f"the station could not start: {exc}"
        log.critical(message)
        station.fail(message)
