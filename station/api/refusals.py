"""The refusals an operation can answer, for its OpenAPI description: each status with
its JSON body (`{"detail": "..."}`, the words say what to do) and its headers.

Routes name theirs with `responses=refusals(401, 403, ...)`, so the schema lists every
status a client can meet; schemathesis checks every answer against it
(tests/service/test_schemathesis.py).

Routes that take a token say so with `openapi_extra=TOKEN` (always needed), `READ_TOKEN`
(needed unless `[api] public_read` is on: the app's schema settles it, see
`declare_tokens`) or `OPTIONAL_TOKEN`: the schema's `bearer` security scheme, so clients
and schemathesis's auth checks know which operations refuse a request without one. The
tokens are checked in the routes themselves (`station.api.auth`), after the readiness
check and without a FastAPI dependency on the events' hot path.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Refusal(BaseModel):
    """Why the request was refused and what to do instead."""

    detail: str = Field(description="what went wrong and what to do")


_RETRY_AFTER = {
    "Retry-After": {
        "description": "seconds to wait before trying again",
        "schema": {"type": "integer"},
    }
}
WORDS: dict[int, tuple[str, dict[str, Any]]] = {
    401: (
        "No token, or a token the station does not know: send 'Authorization: Bearer TOKEN'",
        {"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}},
    ),
    403: ("The token's role may not do this: use a token of a higher role", {}),
    404: ("No such table or alert here: the detail says where to look", {}),
    409: (
        "Not what the archive holds now (another gap, no broken chain, decided already): "
        "the detail says what it holds",
        {},
    ),
    413: (
        "The body is over 64 KiB: refused as soon as the limit is passed (the connection "
        "is then closed)",
        {"Connection": {"description": "close", "schema": {"type": "string"}}},
    ),
    415: ("The body is not declared 'Content-Type: application/json'", {}),
    422: ("The body is not a valid event: the detail says what to send", {}),
    429: (
        "Too many tokens that are not valid from this address: every request that sends "
        "a token is refused, unchecked, until Retry-After has passed",
        _RETRY_AFTER,
    ),
    503: ("The station is starting (replaying its journal) or has stopped", _RETRY_AFTER),
}


def refusals(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a route for these statuses."""
    answers: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        words, headers = WORDS[status]
        answer: dict[str, Any] = {"model": Refusal, "description": words}
        if headers:
            answer["headers"] = headers
        answers[status] = answer
    return answers


#: The statuses of a read that needs a token (or none with `public_read`).
READ = (401, 403, 413, 429, 503)


#: The security scheme of the OpenAPI schema: the station's bearer tokens.
SECURITY_SCHEMES = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "a token of `station token add` (or a demo token), sent as "
        "'Authorization: Bearer TOKEN'",
    }
}
_PUBLIC_READ = "x-station-public-read"  # marks a read in `openapi_extra`, removed from the schema
#: `openapi_extra` of a route that needs a token.
TOKEN: dict[str, Any] = {"security": [{"bearer": []}]}
#: `openapi_extra` of a read: a token needed unless `[api] public_read` is on.
READ_TOKEN: dict[str, Any] = {**TOKEN, _PUBLIC_READ: True}
#: `openapi_extra` of a route that answers with or without a token (not with a wrong one).
OPTIONAL_TOKEN: dict[str, Any] = {"security": [{"bearer": []}, {}]}


def declare_tokens(schema: dict[str, Any], public_read: bool) -> None:
    """Add the security scheme to `schema`, and make the reads' token optional if
    `public_read` (an empty requirement: no token at all)."""
    schema.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
    for operations in schema["paths"].values():
        for operation in operations.values():
            if operation.pop(_PUBLIC_READ, False) and public_read:
                operation["security"] = [*operation["security"], {}]
