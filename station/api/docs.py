"""`GET /api/docs`: the interactive API documentation, from the station's own files.

FastAPI's default page loads Swagger UI from a CDN, which is blank on a casino network
with no internet. The Swagger UI files come from the `fastapi-offline` package (installed
with the station); the page and its start-up script are ours, so the same strict
Content-Security-Policy as the dashboard's applies (no inline script).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

from station.api.static import HEADERS, TYPES, WEB

router = APIRouter()
#: The asset name in the URL -> the file.
ASSETS: dict[str, Path] = {
    "swagger-ui-bundle.js": Path(str(files("fastapi_offline") / "static" / "swagger-ui-bundle.js")),
    "swagger-ui.css": Path(str(files("fastapi_offline") / "static" / "swagger-ui.css")),
    "favicon.png": Path(str(files("fastapi_offline") / "static" / "favicon.png")),
    "api-docs.js": WEB / "api-docs.js",
}


@router.get("/api/docs", include_in_schema=False)
async def api_docs() -> FileResponse:
    return FileResponse(WEB / "api-docs.html", media_type=TYPES[".html"], headers=HEADERS)


@router.get("/api/docs/assets/{name}", include_in_schema=False)
async def api_docs_asset(name: str) -> FileResponse:
    path = ASSETS.get(name)
    if path is None:
        raise HTTPException(404, f"no documentation file {name!r}")
    return FileResponse(path, media_type=TYPES[path.suffix], headers=HEADERS)
