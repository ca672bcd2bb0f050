"""The pages' files, served by both programs from `station/web/` in the package: nothing
from a CDN (a table has no internet), only known types, and a strict
Content-Security-Policy that keeps anything else from running in a page.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import HTTPException
from fastapi.responses import FileResponse

WEB = Path(__file__).resolve().parent.parent / "web"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'"
)
HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def web_response(path: Path) -> FileResponse:
    return FileResponse(path, media_type=TYPES[path.suffix], headers=HEADERS)


async def web_file(name: str) -> FileResponse:
    """A file of the dashboard; only files under `station/web/` of known types."""
    if "\x00" in name:  # a NUL cannot name a file (and os calls would raise on it)
        raise HTTPException(404, "no such dashboard file")
    path = (WEB / name).resolve()
    if not path.is_relative_to(WEB) or path.suffix not in TYPES or not path.is_file():
        raise HTTPException(404, f"no dashboard file {name!r}")
    return web_response(path)
