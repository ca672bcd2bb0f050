"""Helpers for the service tests: configs, a real uvicorn server in a thread, clients."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from drivers.base import CardReader
from station.api import create_app
from station.api.server import uvicorn_options
from station.live.config import ApiConfig, JournalConfig, StationConfig, TableConfig
from station.live.service import Station
from station.shared.config import TokenEntry
from station.shared.tokens import TokenStore, new_token, token_hash

ROLES = ("viewer", "dealer", "supervisor", "rig")


def make_tokens() -> tuple[dict[str, str], tuple[TokenEntry, ...]]:
    """A token per role: the tokens by role, and the config entries (hashes only)."""
    tokens = {role: new_token() for role in ROLES}
    entries = tuple(
        TokenEntry(name=f"test-{r}", role=r, sha256=token_hash(t)) for r, t in tokens.items()
    )
    return tokens, entries


def make_config(tmp: Path, **api: Any) -> tuple[StationConfig, dict[str, str]]:
    tokens, entries = make_tokens()
    api_config = ApiConfig(tokens=entries, token_file=tmp / "tokens.toml", **api)
    config = StationConfig(
        table=TableConfig(id="t-test"),
        journal=JournalConfig(path=tmp / "journal.db"),
        api=api_config,
    )
    return config, tokens


@dataclass
class Running:
    url: str
    station: Station
    tokens: dict[str, str]
    app: FastAPI

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    def post(self, event: Any, role: str = "rig") -> httpx.Response:
        return httpx.post(f"{self.url}/api/events", json=event, headers=self.headers(role))

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://") + "/api/live"


@contextmanager
def serve(
    config: StationConfig,
    tokens: dict[str, str],
    reader: CardReader | None = None,
    wait_ready: bool = True,
    server_options: dict[str, Any] | None = None,
) -> Iterator[Running]:
    """The station's app under a real uvicorn server on 127.0.0.1, a free port (with the
    options of `station run`, or `server_options`)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = config.model_copy(
        update={"api": config.api.model_copy(update={"bind": f"127.0.0.1:{port}"})}
    )
    station = Station(config, reader)
    store = TokenStore(config.api.tokens, config.api.token_file)
    app = create_app(station, store)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            lifespan="on",
            **(
                uvicorn_options(config.api, config.api.trusted_proxies)
                if server_options is None
                else server_options
            ),
        )
    )
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    running = Running(f"http://127.0.0.1:{port}", station, tokens, app)
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        while wait_ready and not station.ready:
            assert station.fatal is None, station.fatal
            assert time.monotonic() < deadline, "the station did not get ready"
            time.sleep(0.01)
        yield running
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
