"""Schemathesis over every operation of the OpenAPI schema, against a live station under
uvicorn on 127.0.0.1 with a rig token (which may send every event type but `restart`):
no 500, and every answer (status, content type, headers, body) as the schema declares.
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

from station.api import create_app
from station.live.service import Station
from station.live.tokens import TokenStore
from tests.service.kit import Running, make_config, serve

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
schema = schemathesis.openapi.from_dict(DOCUMENT)


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    config, tokens = make_config(tmp_path_factory.mktemp("schemathesis"), allow_rig=True)
    with serve(config, tokens) as running:
        yield running


def test_the_live_station_serves_the_schema_under_test(station: Running) -> None:
    assert httpx.get(f"{station.url}/api/openapi.json").json() == DOCUMENT


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_its_schema_says(
    case: schemathesis.Case, station: Running
) -> None:
    case.call_and_validate(base_url=station.url, headers=station.headers("rig"), timeout=10)
