"""The floor's test kit: a real nats-server on 127.0.0.1 (a random port, a temp store),
its users, the stream, and an admin connection. Shared by the publisher's and the floor
service's tests (tests/floor)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import nats
from nats.aio.client import Client
from nats.js.errors import NotFoundError

from station.live.floor.broker import ADMIN_USER, Broker, StationUser, free_port, render_config
from station.live.floor.messages import STREAM, journal_subject, stream_config

SITE = "site-1"


@dataclass
class FloorBroker:
    """A broker for one test: its process, the admin password and the station users."""

    broker: Broker
    admin_password: str
    stations: dict[str, StationUser]

    @property
    def url(self) -> str:
        return self.broker.url

    def user(self, table: str) -> StationUser:
        return self.stations[table]


def start_broker(tmp: Path, tables: tuple[str, ...] = ("table-1", "table-2")) -> FloorBroker:
    """A started broker whose users are one station per table of `tables` (site SITE)."""
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
