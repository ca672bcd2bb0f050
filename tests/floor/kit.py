"""The floor's test kit: a real nats-server on 127.0.0.1 (a random port, a temp store),
its users, the stream, and an admin connection. Shared by the publisher's and the floor
service's tests (tests/floor)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import ssl
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client
from nats.js.errors import NotFoundError

from devkit.broker import ADMIN_USER, Broker, StationUser, free_port, render_config
from station.core.table import Table
from station.live.journal import Journal
from station.live.journal.reading import read_rows
from station.live.publisher.publisher import Publisher
from station.live.publisher.settings import FloorConfig
from station.shared.messages import STREAM, JournalMessage, journal_subject, stream_config
from station.shared.rows import GENESIS, Pending, notice

SITE = "site-1"


@dataclass
class FloorBroker:
    """A broker for one test: its process, the admin password and the station users."""

    broker: Broker
    admin_password: str
    stations: dict[str, StationUser]
    #: The CA's context for a broker that requires TLS (its url is then tls://).
    tls: ssl.SSLContext | None = None

    @property
    def url(self) -> str:
        url = self.broker.url
        return url if self.tls is None else url.replace("nats://", "tls://")

    def user(self, table: str) -> StationUser:
        return self.stations[table]


def start_broker(tmp: Path, tables: tuple[str, ...] = ("table-1", "table-2")) -> FloorBroker:
    """A started broker whose users are one station per table of `tables` (site SITE)."""
    tmp.mkdir(parents=True, exist_ok=True)
    port = free_port()
    admin = secrets.token_hex(8)
    stations = {t: StationUser(SITE, t, t, secrets.token_hex(8)) for t in tables}
    config = tmp / "nats-server.conf"
    config.write_text(render_config(port, tmp / "store", list(stations.values()), admin))
    broker = Broker(config, port, log=tmp / "nats-server.log")
    broker.start()
    return FloorBroker(broker, admin, stations)


@asynccontextmanager
async def admin(floor: FloorBroker) -> AsyncIterator[Client]:
    """An admin connection (the floor service's user) that fails fast."""
    nc = await nats.connect(
        floor.url,
        user=ADMIN_USER,
        password=floor.admin_password,
        connect_timeout=2,
        max_reconnect_attempts=0,
        allow_reconnect=False,
        tls=floor.tls,
    )
    try:
        yield nc
    finally:
        await nc.close()


async def create_stream(floor: FloorBroker) -> None:
    async with admin(floor) as nc:
        await nc.jetstream().add_stream(stream_config())


def ensure_stream(floor: FloorBroker) -> None:
    asyncio.run(create_stream(floor))


async def stored_rows(floor: FloorBroker, table: str, site: str = SITE) -> list[bytes]:
    """Every message the stream holds for `table`, in stream order (raw bodies)."""
    subject = journal_subject(site, table)
    out: list[bytes] = []
    async with admin(floor) as nc:
        jsm = nc.jetstream()
        seq = 0
        while True:
            try:
                msg = await jsm.get_msg(STREAM, seq=seq + 1, subject=subject, next=True)
            except NotFoundError:
                return out
            assert msg.data is not None and msg.seq is not None
            out.append(msg.data)
            seq = msg.seq


def station_floor(floor: FloorBroker, table: str, **settings: Any) -> FloorConfig:
    """The `[floor]` settings of the station of `table` on this broker (its password in
    the environment, as a station is given it)."""
    user = floor.user(table)
    var = f"FLOOR_TEST_PASSWORD_{user.user.upper().replace('-', '_')}"
    os.environ[var] = user.password
    return FloorConfig(
        url=floor.url,
        site=user.site,
        user=user.user,
        password=f"env:{var}",
        **{"timeout": 1.0, "heartbeat_interval": 1.0, **settings},
    )


VERDICT = {"ok": True, "error": None, "role": None, "round": None, "result": None}


def new_journal(path: Path, table: str) -> Journal:
    """A journal of `table` (its `journal created` row written)."""
    journal = Journal(path)
    journal.start(table, Table())
    return journal


def append_rows(journal: Journal, count: int, start: int = 0) -> None:
    """`count` rows, notices and events alternating (an event row carries a verdict)."""
    for i in range(start, start + count):
        if i % 2:
            journal.append([notice("test", "rig", "a test row", i=i)])
        else:
            verdict = {**VERDICT, "voided_round": None}
            journal.append([Pending("api", "dealer", {"type": "shoe", "i": i}, verdict)])


class Writer:
    """A thread committing `count` rows to `journal`, one every `interval` seconds, telling
    `publisher` of each commit as the station's writer does."""

    def __init__(
        self, journal: Journal, publisher: Publisher, count: int, interval: float = 0.002
    ) -> None:
        self.journal, self.publisher = journal, publisher
        self.count, self.interval = count, interval
        self.written = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        for i in range(self.count):
            append_rows(self.journal, 1, start=i)
            self.written += 1
            self.publisher.committed()
            time.sleep(self.interval)

    def __enter__(self) -> Writer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.join(30)


async def table_count(floor: FloorBroker, table: str, site: str = SITE) -> int:
    subject = journal_subject(site, table)
    async with admin(floor) as nc:
        info = await nc.jetstream().stream_info(STREAM, subjects_filter=subject)
    return (info.state.subjects or {}).get(subject, 0)


def wait_published(floor: FloorBroker, table: str, rows: int, timeout: float = 20.0) -> None:
    """Wait until the stream holds `rows` messages of `table`."""
    deadline = time.monotonic() + timeout
    held = -1
    while time.monotonic() < deadline:
        held = asyncio.run(table_count(floor, table))
        if held >= rows:
            return
        time.sleep(0.05)
    raise AssertionError(f"the stream holds {held} rows of {table}, not {rows}, after {timeout} s")


def assert_exactly_once(floor: FloorBroker, table: str, journal: Path) -> list[JournalMessage]:
    """The stream holds every row of `journal` once, in order, each with the journal's
    hash and a sound chain."""
    messages = [JournalMessage.decode(b) for b in asyncio.run(stored_rows(floor, table))]
    rows = read_rows(journal, 0, 1_000_000)
    assert [m.seq for m in messages] == [r.seq for r in rows]
    prev = GENESIS
    for m, r in zip(messages, rows, strict=True):
        assert m.table == table
        assert m.hash == r.hash
        assert m.chain_ok(prev), f"row {m.seq}: the chain or the hash does not hold"
        assert m.to_dict() == {
            **r.to_api(),
            "table": table,
            "prev_hash": r.prev_hash,
            "hash": r.hash,
        }
        prev = m.hash
    return messages


class Running:
    """A `Publisher` run in a thread of its own (its own event loop), as the station's
    publisher process runs it; its journal notices kept by whoever made it."""

    def __init__(self, publisher: Publisher) -> None:
        self.publisher = publisher
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._started.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self.publisher.run()

    def __enter__(self) -> Running:
        self._thread.start()
        self._started.wait(5.0)
        return self

    def __exit__(self, *exc: object) -> None:
        """Cancel the publisher and wait for its thread: cancelled again while it runs (on
        Python 3.11 `asyncio.wait_for` can swallow a cancellation that meets its result),
        so that no publisher of one block still publishes in the next."""
        loop, task = self._loop, self._task
        deadline = time.monotonic() + 15.0
        while loop is not None and task is not None and self._thread.is_alive():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)
            self._thread.join(3.0)  # longer than its own clean-up takes (closing: 2 s)
            assert time.monotonic() < deadline, "the publisher did not stop"
        self._thread.join(5.0)


def run_publisher(
    floor: FloorBroker, table: str, journal: Path, notices: list[Pending] | None = None
) -> Running:
    publisher = Publisher(
        station_floor(floor, table),
        table,
        journal,
        journal_notice=None if notices is None else notices.append,
    )
    return Running(publisher)


def wait_for(condition: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what or condition}"
        time.sleep(0.02)


class Listener:
    """An admin subscription (core NATS) in a thread of its own: the messages on
    `subject` as they come (heartbeats, alerts)."""

    def __init__(self, floor: FloorBroker, subject: str) -> None:
        self.floor, self.subject = floor, subject
        self.messages: list[bytes] = []
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        async with admin(self.floor) as nc:

            async def keep(msg: Any) -> None:
                self.messages.append(msg.data)

            await nc.subscribe(self.subject, cb=keep)
            await nc.flush()
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> Listener:
        self.thread.start()
        assert self._ready.wait(5), "the listener did not subscribe"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(5)
