"""The event vocabulary is complete and consistent: the table, the API's roles and request
models, the OpenAPI schema, `/api/explanations`, the reader check and the simulator all
know exactly the vocabulary's types, and agree with it on fields and senders."""

from __future__ import annotations

import threading
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from drivers.base import ReaderSink
from station.api.events import EVENT_ADAPTER, MODELS
from station.core import events as ev
from station.core.bounds import MAX_DEPTH
from station.core.events import (
    DEMO_BOT_TYPES,
    EVENT_ROLES,
    EVENT_TYPES,
    READER_TYPES,
    VOCABULARY,
)
from station.core.table import Table
from station.core.verdicts import BAD_INPUT
from station.shared.tokens import ROLES
from tests.readerkit import wait_until
from tests.service.kit import Running, make_config, serve

#: Each type's constructor with the least it needs: the type and its required fields.
MINIMAL: dict[str, dict[str, Any]] = {
    "shoe": dict(ev.shoe()),
    "card": dict(ev.card("7H")),
    "cut": dict(ev.cut()),
    "close_bets": dict(ev.close_bets()),
    "resume": dict(ev.resume()),
    "void": dict(ev.void()),
    "end_shoe": dict(ev.end_shoe()),
    "fault": dict(ev.fault()),
    "restart": dict(ev.restart()),
    "decision": dict(ev.decision(True)),
}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    config, tokens = make_config(tmp_path_factory.mktemp("vocabulary"), allow_rig=True)
    with serve(config, tokens) as running:
        yield running


def test_the_table_has_a_rule_for_exactly_the_vocabulary() -> None:
    assert Table().event_types == set(VOCABULARY) == set(EVENT_TYPES)
    assert set(MINIMAL) == set(VOCABULARY)  # a constructor for every type


@pytest.mark.parametrize("kind", EVENT_TYPES)
def test_each_type_its_shape_fields_and_required_keys(kind: str) -> None:
    entry = VOCABULARY[kind]
    hints = entry.field_types()
    assert hints["type"] == typing.Literal[kind]
    assert set(entry.fields) == set(hints) - {"type"}, "every field is described"
    assert "type" in entry.required and entry.required <= set(hints)
    assert MINIMAL[kind]["type"] == kind and set(MINIMAL[kind]) == entry.required
    assert entry.label and entry.done and entry.meaning


@pytest.mark.parametrize("kind", EVENT_TYPES)
def test_the_table_and_the_api_agree_on_what_an_event_needs(kind: str) -> None:
    event = MINIMAL[kind]
    assert Table().apply(dict(event))["error"] != BAD_INPUT
    EVENT_ADAPTER.validate_python(event)
    assert type(EVENT_ADAPTER.validate_python(event)) is MODELS[kind]
    for key in VOCABULARY[kind].required - {"type"}:
        without = {k: v for k, v in event.items() if k != key}
        assert Table().apply(without)["error"] == BAD_INPUT
        with pytest.raises(ValidationError):
            EVENT_ADAPTER.validate_python(without)


#: Values of every JSON kind, to put in each field of each type.
JSON_VALUES: tuple[Any, ...] = (None, True, 0, 1.5, "", "7H", "x", [], ["7H"], {}, {"a": 1})


def _variants() -> Iterator[Any]:
    """Things that are not objects, objects with every kind of `type`, and each type's
    minimal event with each field missing, or set to each kind of JSON value."""
    yield from JSON_VALUES
    yield from ({"type": value} for value in JSON_VALUES)
    yield {"type": "dance"}
    for kind, event in MINIMAL.items():
        for key in VOCABULARY[kind].fields:
            yield {k: v for k, v in event.items() if k != key}
            yield from ({**event, key: value} for value in JSON_VALUES)
        yield {**event, "extra": [1, 2]}


@pytest.mark.parametrize("event", list(_variants()), ids=repr)
def test_bad_input_reason_agrees_with_the_api_and_the_table(event: Any) -> None:
    """`bad_input_reason` (the words of replay's `reason` and of the API's 422) finds a
    problem exactly when the API's models refuse the event, and whenever the table
    answers BAD_INPUT."""
    reason = ev.bad_input_reason(event)
    try:
        EVENT_ADAPTER.validate_python(event)
    except ValidationError:
        assert reason, f"the API refuses {event!r} but bad_input_reason finds nothing"
    else:
        assert reason is None, reason
    if Table().apply(event)["error"] == BAD_INPUT:
        assert reason


def test_senders() -> None:
    api_roles = set(ROLES) - {"viewer"}
    for kind, entry in VOCABULARY.items():
        assert entry.role is None or entry.role in api_roles, kind
        if entry.role in ("dealer", "supervisor"):  # a person's action: the page offers it
            assert entry.confirm and "?" in entry.confirm, kind
    assert {k for k, e in VOCABULARY.items() if e.role is None} == {"restart"}
    assert dict(EVENT_ROLES) == {k: e.role for k, e in VOCABULARY.items() if e.role}
    assert sorted(READER_TYPES) == ["card", "cut", "decision", "fault"]
    assert set(VOCABULARY) - DEMO_BOT_TYPES == {"restart"}  # it reads, deals and supervises


def test_constructors_keep_the_key_order_station_simulate_prints() -> None:
    assert list(ev.card(None, actor="reader", fault="unreadable", expect="X")) == [
        "type",
        "card",
        "actor",
        "fault",
        "expect",
    ]
    assert ev.resume() == {"type": "resume"}
    assert list(ev.resume("7H", actor="supervisor")) == ["type", "card", "actor"]
    assert ev.fault() == {"type": "fault"}
    assert list(ev.fault("lost", actor="reader")) == ["type", "detail", "actor"]


def test_openapi_declares_the_body_as_a_union_of_the_vocabulary(live: Running) -> None:
    schema = httpx.get(f"{live.url}/api/openapi.json").json()
    body = schema["paths"]["/api/events"]["post"]["requestBody"]
    union = body["content"]["application/json"]["schema"]
    assert body["required"] is True
    assert set(union["discriminator"]["mapping"]) == set(EVENT_TYPES)
    assert union["discriminator"]["propertyName"] == "type"
    components = schema["components"]["schemas"]
    named = [components[ref["$ref"].rsplit("/", 1)[1]] for ref in union["oneOf"]]
    assert [m["properties"]["type"]["const"] for m in named] == list(EVENT_TYPES)
    by_type = {m["properties"]["type"]["const"]: m for m in named}
    for kind, model in by_type.items():
        assert set(model["required"]) == VOCABULARY[kind].required, kind
        # extra keys are allowed, within the bounds: nested values down to the last level
        extras = model["additionalProperties"]["$ref"].rsplit("/", 1)[1]
        levels = 0
        while extras is not None:
            levels += 1
            kinds = {c.get("type") for c in components[extras]["anyOf"]}
            assert {"null", "boolean", "string", "integer", "number"} <= kinds, kind
            inner = [c for c in components[extras]["anyOf"] if c.get("type") == "array"]
            extras = inner[0]["items"]["$ref"].rsplit("/", 1)[1] if inner else None
        assert levels == MAX_DEPTH, kind  # levels 2..17: containers down to level 16
    assert by_type["card"]["properties"]["card"]["description"] == VOCABULARY["card"].fields["card"]


def test_explanations_list_every_type_with_its_senders_and_words(live: Running) -> None:
    words = httpx.get(f"{live.url}/api/explanations").json()
    assert list(words["events"]) == list(EVENT_TYPES)
    assert words["event_roles"] == dict(EVENT_ROLES)
    for kind, entry in VOCABULARY.items():
        assert words["events"][kind] == {
            "role": entry.role,
            "reader": entry.reader,
            "label": entry.label,
            "confirm": entry.confirm,
            "done": entry.done,
        }
    assert words["events"]["restart"]["role"] is None


def test_an_event_is_journaled_as_sent_extra_keys_included(live: Running) -> None:
    sent = {
        "type": "fault",
        "detail": "cable",
        "raw": "ff00",
        "when": "12:00",
        "nested": {"frames": [1, 2]},
        "by": "somebody",
    }
    answer = live.post(sent, "rig").json()
    rows = httpx.get(
        f"{live.url}/api/journal",
        params={"after": answer["seq"] - 1},
        headers=live.headers("viewer"),
    ).json()["events"]
    assert rows[0]["event"] == sent and rows[0]["actor"] == "test-rig"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"type": "card", "card": 7}, 'the "card" of a card event must be a card code'),
        ({"type": "resume", "card": ["7H"]}, 'the "card" of a resume event must be a card code'),
        ({"type": "fault", "detail": 7}, 'the "detail" of a fault event must be a text'),
        ({"type": None}, "'type' must be one of shoe, card, cut,"),
        ({"type": ["card"]}, "'type' must be one of"),
    ],
)
def test_422_names_the_field_and_what_it_must_be(live: Running, body: Any, words: str) -> None:
    r = live.post(body, "rig")
    assert r.status_code == 422 and words in r.json()["detail"], r.text


class ScriptedReader:
    """A reader that sends a fixed list of events, then waits to be stopped."""

    name = "scripted"

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events

    def run(self, sink: ReaderSink, stop: threading.Event) -> None:
        for event in self.events:
            sink.event(event)
        stop.wait()

    def status(self) -> dict[str, Any]:
        return {"driver": self.name, "connected": True, "detail": "scripted"}

    def send(self, data: bytes) -> bool:
        return False


def test_a_reader_sending_what_a_reader_may_not_is_journaled_as_a_notice(
    tmp_path: Path,
) -> None:
    config, tokens = make_config(tmp_path)
    sent = [{"type": "shoe"}, {"type": ["card"]}, {"type": "card", "card": "AS", "raw": "4153"}]
    reader = ScriptedReader([dict(e) for e in sent])
    with serve(config, tokens, reader=reader) as running:
        url, viewer = f"{running.url}/api/journal", running.headers("viewer")

        def rows() -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = httpx.get(url, headers=viewer).json()["events"]
            return [r for r in found if r["source"] == "reader"]

        wait_until(lambda: len(rows()) == 3, what="the reader's three rows")
        shoe, bad, card = rows()
    assert shoe["event"]["type"] == "notice" and shoe["verdict"] is None
    assert "may not send" in shoe["event"]["message"] and shoe["event"]["event"] == sent[0]
    assert bad["event"]["type"] == "notice" and bad["event"]["event"] == sent[1]
    assert card["event"] == sent[2] and card["verdict"]["error"] == "NO_ACTIVE_SHOE"
