"""`/api/health` and `/api/ready` against a real station: no token, each check said."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from drivers.base import ReaderSink
from station.api import health
from tests.service.kit import make_config, serve

pytestmark = pytest.mark.server


class UnpluggedReader:
    """A reader whose device is gone: it only says so."""

    name = "unplugged"

    def run(self, sink: ReaderSink, stop: threading.Event) -> None:
        stop.wait()

    def status(self) -> dict[str, Any]:
        return {"driver": self.name, "connected": False, "detail": "cannot open /dev/shoe"}

    def send(self, data: bytes) -> bool:
        return False


def test_health_and_ready_answer_without_a_token(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path)
    with serve(config, tokens) as live:
        h = httpx.get(f"{live.url}/api/health")
        assert h.status_code == 200
        assert h.json()["status"] == "ok" and h.json()["version"]
        r = httpx.get(f"{live.url}/api/ready")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["ready"] is True and body["table"] == "t-test"
        assert set(body["checks"]) == {"journal", "disk", "reader"}
        assert all(check["ok"] for check in body["checks"].values())
        assert "test-" not in r.text + h.text  # no token names to an anonymous caller
        assert httpx.get(f"{live.url}/api/state").status_code == 401  # state still needs one


def test_not_ready_while_the_reader_is_unplugged(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path)
    with serve(config, tokens, reader=UnpluggedReader()) as live:
        r = httpx.get(f"{live.url}/api/ready")
        assert r.status_code == 503
        reader = r.json()["checks"]["reader"]
        assert reader == {"ok": False, "driver": "unplugged", "detail": "cannot open /dev/shoe"}
        assert httpx.get(f"{live.url}/api/health").status_code == 200  # alive all the same


def test_not_ready_when_the_disk_is_nearly_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, tokens = make_config(tmp_path)
    with serve(config, tokens) as live:
        monkeypatch.setattr(health, "MIN_FREE_BYTES", 2**62)
        r = httpx.get(f"{live.url}/api/ready")
        assert r.status_code == 503
        assert "free some space" in r.json()["checks"]["disk"]["detail"]


def test_a_failed_journal_is_unhealthy(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path)
    with serve(config, tokens) as live:
        live.station.writer.fatal = "the journal commit failed: disk I/O error"
        h = httpx.get(f"{live.url}/api/health")
        assert h.status_code == 503 and h.json()["status"] == "failed"
        r = httpx.get(f"{live.url}/api/ready")
        assert r.status_code == 503
        assert "disk I/O error" in r.json()["checks"]["journal"]["detail"]
