"""`POST /api/events`: one event of the replay format in, its verdict out.

The body is read as bytes and parsed here (strict JSON, like `station replay`: no NaN),
then checked against the bounds every event keeps (`station.core.bounds`: nesting
depth, string length, integers within 64 bits) and against request models generated
from the event vocabulary (`station.core.events`), one per event type, a union
discriminated by `type`. The
models only check: the event journaled is the parsed body exactly as sent, extra keys
included, but for the keys a row or an export line has beside its event (`RESERVED`: who
acted is the token's, when and which row the journal's), which a body cannot carry.
Anything that is not a valid event is a 422 with a message that says what to send, and
is not journaled; a valid event always gets 200 with its verdict, whatever the verdict.
The models are the request body of the OpenAPI schema (`openapi_components`).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from station.api.access import check_role, require_ready
from station.api.auth import identify, refuse
from station.api.limits import require_json
from station.api.refusals import TOKEN, refusals
from station.core.bounds import MAX_DEPTH, MAX_INT, MAX_TEXT, MIN_INT, problem
from station.core.events import (
    EVENT_TYPES,
    VOCABULARY,
    EventKind,
    bad_input_reason,
    not_json_reason,
)
from station.live.errors import NotReady, Refused
from station.shared.rows import Row

MAX_BODY = 64 * 1024
#: Keys a body cannot carry: a journal row's own fields (`Row`: who acted, from where,
#: when, which row, its hashes; `/api/journal` shows them beside the event) and the keys
#: `station journal export` adds to each line. A client's word for any of them would
#: stand beside the station's in the export and the log.
RESERVED = (*(f.name for f in dataclasses.fields(Row)), "journal")
_REFS = "#/components/schemas/{model}"


def _no_default(schema: dict[str, Any]) -> None:
    del schema["default"]


def _extra(depth: int) -> str:
    return f"ExtraValue{depth}"


def extra_value_schemas() -> dict[str, Any]:
    """What an extra key may hold, as the bounds say (`station.core.bounds`): text up to
    MAX_TEXT characters, numbers within 64 bits, lists and objects nested at most
    MAX_DEPTH levels deep counting the event (one schema a level, the last with no
    containers), so a schema-driven client never builds an event the station refuses."""
    schemas: dict[str, Any] = {}
    for depth in range(2, MAX_DEPTH + 2):
        choices: list[dict[str, Any]] = [
            {"type": "null"},
            {"type": "boolean"},
            {"type": "string", "maxLength": MAX_TEXT},
            {"type": "integer", "minimum": MIN_INT, "maximum": MAX_INT},
            {"type": "number", "exclusiveMinimum": MIN_INT, "exclusiveMaximum": -MIN_INT},
        ]
        if depth <= MAX_DEPTH:
            inner = {"$ref": _REFS.format(model=_extra(depth + 1))}
            choices += [
                {"type": "array", "items": inner},
                {
                    "type": "object",
                    "additionalProperties": inner,
                    "propertyNames": {"maxLength": MAX_TEXT},
                },
            ]
        schemas[_extra(depth)] = {
            "title": _extra(depth),
            "description": f"a value of an extra key, {depth} levels into the event",
            "anyOf": choices,
        }
    return schemas


def request_model(kind: EventKind) -> type[BaseModel]:
    """The pydantic model of one event type: its TypedDict's fields, strictly typed (no
    coercion), any other key allowed."""
    required = kind.required
    fields: dict[str, Any] = {}
    for name, annotation in kind.field_types().items():
        words = "the event type" if name == "type" else kind.fields[name]
        if name in required:
            fields[name] = (annotation, Field(description=words))
        else:  # absent stays absent (the model never fills the event): no default to show
            fields[name] = (
                annotation,
                Field(None, description=words, json_schema_extra=_no_default),
            )
    config = ConfigDict(extra="allow", strict=True, title=kind.shape.__name__)
    model: type[BaseModel] = create_model(
        kind.shape.__name__, __config__=config, __doc__=kind.meaning, **fields
    )
    return model


#: The request model of each event type.
MODELS: dict[str, type[BaseModel]] = {name: request_model(k) for name, k in VOCABULARY.items()}
_ANY_MODEL: Any = functools.reduce(operator.or_, MODELS.values())
#: Any event of the vocabulary, told apart by `type`.
EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Annotated[_ANY_MODEL, Field(discriminator="type")])


def openapi_components() -> tuple[dict[str, Any], dict[str, Any]]:
    """The request body's schema (a union on `type`) and the schemas it refers to, which
    the app adds to its OpenAPI components (a route cannot add components itself)."""
    schema = EVENT_ADAPTER.json_schema(ref_template=_REFS)
    definitions = schema.pop("$defs")
    for model in MODELS.values():  # extra keys: allowed, within the bounds, not RESERVED
        extras = {"$ref": _REFS.format(model=_extra(2))}
        definitions[model.__name__]["additionalProperties"] = extras
        definitions[model.__name__]["propertyNames"] = {"not": {"enum": list(RESERVED)}}
        for prop in definitions[model.__name__]["properties"].values():
            _bound_free_objects(prop)
    return schema, {**definitions, **extra_value_schemas()}


def _bound_free_objects(prop: dict[str, Any]) -> None:
    """A field that holds any object (a resume's `decision`): its values within the
    bounds too, one level into the event."""
    for choice in prop.get("anyOf", [prop]):
        if choice.get("type") == "object" and choice.get("additionalProperties") is True:
            choice["additionalProperties"] = {"$ref": _REFS.format(model=_extra(3))}
            choice["propertyNames"] = {"maxLength": MAX_TEXT}


_BODY_SCHEMA, EVENT_SCHEMAS = openapi_components()
_REQUEST_BODY = {
    "required": True,
    "description": "One event of the replay format; keys beyond its fields (raw bytes, "
    f"...) are journaled as sent, but for the row's own ({', '.join(RESERVED)}: 422).",
    "content": {"application/json": {"schema": _BODY_SCHEMA}},
}
router = APIRouter()


def parse_event(body: bytes) -> dict[str, Any]:
    """The event in `body`, or a ValueError saying what is wrong with it."""
    if len(body) > MAX_BODY:
        raise ValueError(f"the body is over {MAX_BODY} bytes")
    try:
        event = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"the body is {not_json_reason(exc)}") from None
    if not isinstance(event, dict):
        raise ValueError(str(bad_input_reason(event)))
    out_of_bounds = problem(event)  # before the models: depth, text, 64-bit numbers
    if out_of_bounds is not None:
        raise ValueError(out_of_bounds)
    try:
        EVENT_ADAPTER.validate_python(event)
    except ValidationError as exc:
        raise ValueError(bad_input_reason(event) or _what_is_wrong(event, exc)) from None
    for key in RESERVED:
        if key in event:
            raise ValueError(
                f"the key {key!r} is reserved: the journal gives each row its own (who acted "
                "is the token's name); leave it out"
            )
    return event


def _what_is_wrong(event: dict[str, Any], exc: ValidationError) -> str:
    """The first problem pydantic found, in the vocabulary's words (for a problem
    `bad_input_reason`, the words `station replay` uses too, did not name)."""
    error = exc.errors(include_url=False)[0]
    kind = event.get("type")
    tag_error = error["type"] in ("union_tag_not_found", "union_tag_invalid")
    if tag_error or not isinstance(kind, str) or kind not in VOCABULARY:
        return f"'type' must be one of {', '.join(EVENT_TYPES)}; got {kind!r}"
    name = str(error["loc"][1]) if len(error["loc"]) > 1 else "type"
    words = VOCABULARY[kind].fields.get(name, "")
    if error["type"] == "missing":
        return f'a {kind} event needs a "{name}" key ({words})'
    return f'the "{name}" of a {kind} event must be {words}; got {event.get(name)!r}'


@router.post(
    "/api/events",
    openapi_extra={"requestBody": _REQUEST_BODY, **TOKEN},
    responses=refusals(401, 403, 413, 415, 422, 429, 503),
)
async def post_event(request: Request) -> dict[str, Any]:
    """Submit one table event; answers its verdict (the replay output's fields, with the
    journal's seq)."""
    station = require_ready(request)
    who = check_role(request, identify(request), "dealer")
    require_json(request)
    try:
        event = parse_event(await request.body())
    except ValueError as exc:
        raise refuse(request, 422, str(exc), who) from None
    role = VOCABULARY[event["type"]].role
    if role is None:
        raise refuse(request, 403, f"only the station itself journals {event['type']}", who)
    check_role(request, who, role)
    try:
        row = await station.submit(event, "api", who.name)
    except NotReady as exc:
        raise HTTPException(503, str(exc), headers={"Retry-After": "5"}) from None
    except Refused as exc:  # cannot be stored: journaled as refused, not applied
        raise refuse(request, 422, str(exc), who) from None
    assert row.verdict is not None
    return {"seq": row.seq, **row.verdict}
