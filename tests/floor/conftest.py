"""Fixtures of tests/floor: a real broker per test (see tests/floor/kit.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.floor.kit import FloorBroker, ensure_stream, start_broker


@pytest.fixture
def floor(tmp_path: Path) -> Iterator[FloorBroker]:
    """A nats-server on 127.0.0.1 (random port, store in tmp_path) with the stream made."""
    broker = start_broker(tmp_path / "broker")
    try:
        ensure_stream(broker)
        yield broker
    finally:
        broker.broker.stop()
