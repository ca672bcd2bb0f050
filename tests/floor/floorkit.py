"""The floor service's test kit: journals made by the station's own journal, their rows
published as a station would (`JournalMessage`), the service under a real uvicorn on
127.0.0.1, and a wait that fails with what it waited for."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import orjson
import pytest
import uvicorn

from station.api.floor import create_floor_app
from station.core.table import Table
from station.floor.archive import Committed
from station.floor.config import (
    ArchiveConfig,
    BrokerConfig,
    FloorApiConfig,
    FloorServiceConfig,
    FloorSettings,
    FloorTableConfig,
)
from station.floor.service import FloorService
from station.live.journal import Journal
from station.shared.messages import (
    Alert,
    Heartbeat,
    JournalMessage,
    alert_subject,
    heartbeat_subject,
    journal_subject,
)
from station.shared.rows import Pending, Row
from station.shared.tokens import TokenStore
from tests.conftest import run_station
from tests.floor.kit import SITE, FloorBroker, admin
from tests.service.kit import make_tokens

PASSWORD_ENV = "FLOOR_TEST_PASSWORD"
T = TypeVar("T")


def shoe_events(seed: int = 3, decks: int = 1) -> list[dict[str, Any]]:
    """A whole simulated shoe (`station simulate`), events only."""
    done = run_station("simulate", "--seed", str(seed), "--decks", str(decks), "--shoes", "1")
    assert done.returncode == 0, done.stderr
    events = []
    for line in done.stdout.splitlines():
        event = orjson.loads(line)
        events.append({k: v for k, v in event.items() if k not in ("actor", "expect", "fault")})
    return events


def make_journal(
    path: Path, table_id: str, events: list[dict[str, Any]], decks: int = 8
) -> list[Row]:
    """A station's journal of `events` (decided by the core, as the writer does)."""
    table = Table(decks=decks)
    with Journal(path) as journal:
        journal.start(table_id, table)
        for event in events:
            verdict = dict(table.decide(event).verdict)
            journal.append([Pending("api", "test", event, verdict)])
        return list(journal.rows())


def message(table_id: str, row: Row, **changes: Any) -> bytes:
    """A row as its station publishes it, with `changes` to its fields (a forgery)."""
    body = JournalMessage.of(table_id, row).to_dict()
    body.update(changes)
    return orjson.dumps(body)


async def _publish(floor: FloorBroker, subject: str, bodies: list[bytes], stream: bool) -> None:
    async with admin(floor) as nc:
        js = nc.jetstream()
        for body in bodies:
            if stream:
                await js.publish(subject, body)
            else:
                await nc.publish(subject, body)
        await nc.flush()


def in_thread(call: Callable[[], T]) -> T:
    """`call()` in a thread of its own: `asyncio.run` works there even while this thread
    runs an event loop (Playwright's, in the browser tests)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result()


def publish(floor: FloorBroker, table_id: str, bodies: list[bytes]) -> None:
    """Journal messages into the stream (acknowledged by the broker when this returns)."""
    subject = journal_subject(SITE, table_id)
    in_thread(lambda: asyncio.run(_publish(floor, subject, bodies, stream=True)))


def publish_rows(floor: FloorBroker, table_id: str, rows: list[Row]) -> None:
    publish(floor, table_id, [message(table_id, r) for r in rows])


def heartbeat(
    floor: FloorBroker, table_id: str, seq: int, suspended: bool = False, **extra: Any
) -> None:
    """One heartbeat of `table_id` (core NATS)."""
    beat = Heartbeat(
        SITE, table_id, "2026-12-01T00:00:00Z", seq, "0" * 64, seq, "publishing",
        "punto_banco", 1, None, suspended, "UNREADABLE_CARD" if suspended else None,
    )  # fmt: skip
    body = orjson.dumps({**orjson.loads(beat.encode()), **extra})
    subject = heartbeat_subject(SITE, table_id)
    in_thread(lambda: asyncio.run(_publish(floor, subject, [body], stream=False)))


def station_alert(
    floor: FloorBroker,
    table_id: str,
    code: str,
    words: str,
    params: dict[str, Any] | None = None,
) -> None:
    """What a station says on `floor.<site>.<table>.alert` (core NATS), with the figures
    its words take (`params`: none, as an older station sends)."""
    alert = Alert(SITE, table_id, "2026-12-01T00:00:00Z", code, words, params=params or {})
    body = alert.encode()
    subject = alert_subject(SITE, table_id)
    in_thread(lambda: asyncio.run(_publish(floor, subject, [body], stream=False)))


def floor_config(
    tmp: Path,
    floor: FloorBroker,
    monkeypatch: pytest.MonkeyPatch,
    *,
    tables: tuple[str, ...] = (),
    broker: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    api: dict[str, Any] | None = None,
) -> tuple[FloorServiceConfig, dict[str, str]]:
    """A floor config for the test broker (the admin user, its password from the
    environment), its archive in `tmp`, a token per role."""
    monkeypatch.setenv(PASSWORD_ENV, floor.admin_password)
    tokens, entries = make_tokens()
    config = FloorServiceConfig(
        broker=BrokerConfig(
            url=floor.url,
            site=SITE,
            user="floor",
            password=f"env:{PASSWORD_ENV}",
            ack_wait=1.0,
            **(broker or {}),
        ),
        archive=ArchiveConfig(path=tmp / "floor.db"),
        floor=FloorSettings(**(settings or {})),
        api=FloorApiConfig(tokens=entries, token_file=tmp / "tokens.toml", **(api or {})),
        table=tuple(FloorTableConfig(id=t) for t in tables),
    )
    return config, tokens


@dataclass
class RunningFloor:
    url: str
    service: FloorService
    tokens: dict[str, str]

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    def tables(self, role: str = "viewer") -> dict[str, Any]:
        answer = httpx.get(f"{self.url}/api/floor/tables", headers=self.headers(role))
        assert answer.status_code == 200, answer.text
        found: dict[str, Any] = answer.json()
        return found

    def table(self, table_id: str) -> dict[str, Any]:
        return next(t for t in self.tables()["tables"] if t["id"] == table_id)


@contextmanager
def serve_floor(
    config: FloorServiceConfig,
    tokens: dict[str, str],
    after_commit: Callable[[Committed], None] | None = None,
) -> Iterator[RunningFloor]:
    """The floor app under a real uvicorn server on 127.0.0.1 (a free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    service = FloorService(config, after_commit=after_commit)
    app = create_floor_app(service, TokenStore(config.api.tokens, config.api.token_file))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started and service.ready, "the floor service to start")
        yield RunningFloor(f"http://127.0.0.1:{port}", service, tokens)
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def wait_for(check: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.02)
