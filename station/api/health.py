"""`GET /api/health` and `GET /api/ready`: for monitoring and systemd-style checks.

Both answer without a token (a monitor holds no secrets) and say nothing a viewer could
not see: no token names, no table state beyond "ready or not, and why".

- health is liveness: the process and its event loop answer. 200 unless the station has
  stopped for good (its journal failed), then 503, so a supervisor restarts it. While
  the journal cannot be written (disk full, ...) it is 200 "degraded": a restart would
  not help, the station recovers by itself when the disk can be written again. It also
  says whether the journal is signed (`journal.signed`, and the public key's fingerprint:
  never the key), so a monitor sees an unsigned station.
- ready is "this table can be dealt at": the journal is replayed and can be written, its
  folder is writable with room to spare, and the reader (if one is configured) is
  connected. 200 when every check passes, else 503; the body lists each check either way.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from station.api.access import station_of
from station.api.refusals import refusals
from station.live.service import Station
from station.version import station_version

router = APIRouter()

#: Below this much free space in the journal's folder the station is not ready: a shoe
#: journals well under 1 MiB, so this leaves hours of play to act before the disk is full.
MIN_FREE_BYTES = 64 * 1024 * 1024
_SAME_BODY = {"application/json": {"schema": {"type": "object"}}}
STOPPED = {
    503: {"description": "The station has stopped for good (the same body)", "content": _SAME_BODY},
    **refusals(413),
}
NOT_READY = {
    503: {"description": "A check failed (the same body)", "content": _SAME_BODY},
    **refusals(413),
}


@router.get("/api/health", tags=["monitoring"], responses=STOPPED)
async def health(request: Request) -> JSONResponse:
    """Liveness: 200 while the station serves; 503 once it has stopped for good."""
    station = station_of(request)
    alive = station.fatal is None
    process = station.publisher.process
    floor = process.status if process is not None else None
    refused = floor is not None and floor.state == "refused"
    degraded = station.unavailable is not None or refused
    body: dict[str, Any] = {
        "status": "failed" if not alive else "degraded" if degraded else "ok",
        "version": station_version(),
        "detail": station.fatal
        or station.unavailable
        or (f"floor refused: {floor.detail}" if floor is not None and refused else "serving"),
    }
    body["journal"] = _signing(station)
    if floor is not None:  # [floor] url set: the publisher's state
        body["floor"] = floor.to_dict()
    return JSONResponse(body, status_code=200 if alive else 503)


def _signing(station: Station) -> dict[str, Any]:
    """Whether the journal's rows are signed, and by which key (its fingerprint only)."""
    journal = station.journal
    key = journal.signed_by if journal is not None else None
    if key is not None:
        return {"signed": True, "key": key.fingerprint}
    if station.config.journal.signing_key is not None:  # not open yet: the config says
        return {"signed": True, "key": None, "detail": "the journal is not open yet"}
    return {
        "signed": False,
        "detail": "the journal is unsigned: give [journal] signing_key a key (station key init)",
    }


@router.get("/api/ready", tags=["monitoring"], responses=NOT_READY)
async def ready(request: Request) -> JSONResponse:
    """Readiness: journal replayed, disk writable with room, reader connected."""
    station = station_of(request)
    checks = {
        "journal": _journal_check(station),
        "disk": _disk_check(station),
        "reader": _reader_check(station),
    }
    ok = all(check["ok"] for check in checks.values())
    body = {"ready": ok, "table": station.config.table.id, "checks": checks}
    return JSONResponse(body, status_code=200 if ok else 503)


def _journal_check(station: Station) -> dict[str, Any]:
    if station.fatal is not None:
        return {"ok": False, "detail": station.fatal}
    if station.unavailable is not None:  # disk full, read-only, file deleted: recovers
        return {"ok": False, "detail": station.unavailable}
    if not station.ready:
        return {"ok": False, "detail": "the station is starting (replaying its journal)"}
    return {"ok": True, "detail": f"replayed; last row {station.snapshot.seq}"}


def _disk_check(station: Station) -> dict[str, Any]:
    folder = station.config.journal.path.resolve().parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        return {"ok": False, "detail": f"cannot check {folder}: {exc.strerror}"}
    if not os.access(folder, os.W_OK):
        return {"ok": False, "detail": f"{folder} is not writable", "free_bytes": free}
    if free < MIN_FREE_BYTES:
        return {
            "ok": False,
            "free_bytes": free,
            "detail": f"only {free // 2**20} MiB free in {folder}: free some space",
        }
    return {"ok": True, "detail": f"{free // 2**20} MiB free", "free_bytes": free}


def _reader_check(station: Station) -> dict[str, Any]:
    if station.reader is None:
        return {"ok": True, "detail": "no reader configured (events come through the API)"}
    status = station.reader_status()
    return {
        "ok": bool(status.get("connected")),
        "driver": status.get("driver"),
        "detail": str(status.get("detail", "")),
    }
