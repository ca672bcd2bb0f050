"""Schemathesis over every operation of the OpenAPI schema, against a live station under
uvicorn on 127.0.0.1 with a rig token (which may send every event type but `restart`):
no 500, and every answer (status, content type, headers, body) as the schema declares.
Its auth checks run too: every answer with the token is sent again without it and with
a wrong one, which an operation that declares the bearer scheme must refuse.
Bounded: 25 examples per operation, well under two minutes.

The schema is the app's own (`create_app(...).openapi()`, taken at collection, the same
document the live station serves: checked below), since schemathesis parametrizes tests
when they are collected."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from station.api import create_app
from station.api.auth import Throttle
from station.live.service import Station
from station.shared.tokens import TokenStore
from tests.service.kit import Running, make_config, make_tokens, serve

pytestmark = [pytest.mark.server, pytest.mark.slow]


def app_schema() -> dict[str, Any]:
    """The OpenAPI document of a station's app (no station is started for it)."""
    with tempfile.TemporaryDirectory() as folder:
        config, _ = make_config(Path(folder))
        document: dict[str, Any] = create_app(
            Station(config), TokenStore(config.api.tokens, config.api.token_file)
        ).openapi()
    return document


DOCUMENT = app_schema()
TOKENS, ENTRIES = make_tokens()  # known at collection, for schemathesis's auth config
#: Schemathesis sends the rig token as the schema's `bearer` scheme, so it knows the
#: credentials: its auth checks send each request again without them and with wrong ones.
schema = schemathesis.openapi.from_dict(
    DOCUMENT,
    config=SchemathesisConfig.from_dict(
        {"auth": {"openapi": {"bearer": {"bearer": TOKENS["rig"]}}}}
    ),
)


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    config, _ = make_config(tmp_path_factory.mktemp("schemathesis"), allow_rig=True)
    config = config.model_copy(update={"api": config.api.model_copy(update={"tokens": ENTRIES})})
    with serve(config, TOKENS) as running:
        # The auth checks send a wrong token after each answer: with the station's own
        # throttle every request would get 429 after the tenth, and nothing else be tested
        # (the throttle has tests of its own: test_doors.py).
        running.app.state.throttle = Throttle(limit=1_000_000)
        yield running


def test_the_live_station_serves_the_schema_under_test(station: Running) -> None:
    assert httpx.get(f"{station.url}/api/openapi.json").json() == DOCUMENT


def test_every_operation_that_takes_a_token_declares_the_bearer_scheme() -> None:
    """Those that refuse a missing or wrong token (401), and only those; only
    /api/whoami answers without one (reads too with public_read: test_api.py)."""
    assert DOCUMENT["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    security = {
        f"{method.upper()} {path}": (operation.get("security"), "401" in operation["responses"])
        for path, operations in DOCUMENT["paths"].items()
        for method, operation in operations.items()
    }
    public = {name for name, (needs, _) in security.items() if not needs}
    assert public == {name for name, (_, refuses) in security.items() if not refuses}
    assert public >= {"GET /api/health", "GET /api/ready", "GET /api/explanations"}
    optional = {name for name, (needs, _) in security.items() if needs and {} in needs}
    assert optional == {"GET /api/whoami"}
    assert all({"bearer": []} in needs for needs, _ in security.values() if needs)
    assert "GET /metrics" in set(security) - public


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_its_schema_says(
    case: schemathesis.Case, station: Running
) -> None:
    case.call_and_validate(base_url=station.url, timeout=10)
