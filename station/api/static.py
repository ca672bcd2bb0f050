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


#: The longest name asked for that may be a file of the pages (theirs are short): a
#: longer one is no file of theirs, and the system would refuse it (ENAMETOOLONG).
MAX_NAME = 200


async def web_file(name: str) -> FileResponse:
    """A file of the dashboard; only files under `station/web/` of known types. Any other
    name is a 404, however long or odd (never an OSError's 500)."""
    if "\x00" in name or len(name) > MAX_NAME:  # a NUL cannot name a file either
        raise HTTPException(404, "no such dashboard file")
    try:
        path = (WEB / name).resolve()
        found = path.is_relative_to(WEB) and path.suffix in TYPES and path.is_file()
    except (OSError, ValueError):  # a component too long, a loop of links, ...
        found = False
    if not found:
        raise HTTPException(404, f"no dashboard file {name!r}")
    return web_response(path)
