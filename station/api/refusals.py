"""The refusals an operation can answer, for its OpenAPI description: each status with
its JSON body (`{"detail": "..."}`, the words say what to do) and its headers.

Routes name theirs with `responses=refusals(401, 403, ...)`, so the schema lists every
status a client can meet; schemathesis checks every answer against it
(tests/service/test_schemathesis.py).
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
