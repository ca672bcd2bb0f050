"""`GET /metrics`: the station's Prometheus metrics, for any token (viewer and up).

Behind a token because the API may face the floor's network; `[api] metrics_bind` serves
the same metrics without a token on a listener of its own (localhost or a monitoring
network), for a Prometheus that holds no secrets. The endpoint is a plain function, so
FastAPI runs it on a worker thread: reading /proc and the journal's size never holds up
the event loop, where the writer commits.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from station.api.access import check_role, station_of
from station.api.auth import identify
from station.api.refusals import TOKEN, refusals

router = APIRouter()


@router.get(
    "/metrics",
    tags=["monitoring"],
    response_class=Response,
    responses=refusals(401, 403, 413, 429),
    openapi_extra=TOKEN,
)
def metrics(request: Request) -> Response:
    """Prometheus text format: verdicts, latency, suspensions, reader, journal, process."""
    check_role(request, identify(request), "viewer")
    registry = station_of(request).observer.registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
