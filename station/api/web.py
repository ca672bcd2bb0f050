"""The supervisor dashboard: its page and files (`/`, `/web/...`), and the two small reads
it needs to decide what to show: who a token is (`/api/whoami`) and the words for the
error codes, the role each event needs and the words of each event (`/api/explanations`,
all from the station's own rules and event vocabulary).

Why served by the station: the dashboard must work at a table with no internet, so every
file comes from `station/web/` in the package, nothing from a CDN. A strict
Content-Security-Policy keeps anything else from running in the page.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from station.api.access import station_of
from station.api.auth import identify
from station.api.refusals import OPTIONAL_TOKEN, refusals
from station.api.static import WEB, web_file, web_response
from station.core.events import EVENT_ROLES, VOCABULARY
from station.core.games import GAMES
from station.core.words import DUE_WORDS, EXPLANATIONS
from station.shared.tokens import RANK

router = APIRouter()
router.add_api_route("/web/{name:path}", web_file, methods=["GET"], include_in_schema=False)


@router.get("/", include_in_schema=False)
async def index() -> FileResponse:
    return web_response(WEB / "index.html")


@router.get("/api/whoami", responses=refusals(401, 413, 429), openapi_extra=OPTIONAL_TOKEN)
async def whoami(request: Request) -> dict[str, Any]:
    """The token's name and role (401 for an unknown token); without a token, whether
    reads are public. The dashboard's login checks a token with this."""
    who = identify(request)
    config = station_of(request).config
    role = who.role if who else None
    # A rig token on a station without allow_rig is refused every action: show it none.
    acts_as = "viewer" if role == "rig" and not config.api.allow_rig else role
    return {
        "name": who.name if who else None,
        "role": role,
        "acts_as": acts_as,
        "public_read": config.api.public_read,
        "table": config.table.id,
    }


#: Every event type: the role it needs through the API (null: only the station sends
#: it), whether a card reader sends it, its label, the dashboard's confirmation question
#: (null: no dashboard action) and its words once done. The page keeps no copy.
EVENT_WORDS = {
    kind.name: {
        "role": kind.role,
        "reader": kind.reader,
        "label": kind.label,
        "confirm": kind.confirm,
        "done": kind.done,
    }
    for kind in VOCABULARY.values()
}


#: What the table waits for (`state.due`, `state.round.due`), in a supervisor's words.
#: With every game's card roles (`T1.1` .. `B.3` too: what a card read by eye is for).
DUE_NAMES = {
    **{role: words for game in GAMES.values() for role, words in game.role_words.items()},
    **{due: words for due, words in DUE_WORDS.items() if due is not None},
}


@router.get("/api/explanations", responses=refusals(413))
async def explanations(request: Request) -> dict[str, Any]:
    """The words for every error code, the role each event type needs, the roles in order,
    the words of every event type and of what the table can wait for (`due`: a card role
    like `B2`, `burn`, ...): the page shows only what a role may do, by the station's own
    rules, in the station's own words (English, for other clients: the dashboard has the
    words of every code in its catalogues), and the dashboard's default language
    (`[dashboard] language`; a person's own choice and their browser's come first)."""
    return {
        "language": station_of(request).config.dashboard.language,
        "errors": EXPLANATIONS,
        "event_roles": dict(EVENT_ROLES),
        "roles": sorted(RANK, key=RANK.__getitem__),
        "events": EVENT_WORDS,
        "due": DUE_NAMES,
    }
