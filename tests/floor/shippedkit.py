"""The shipped config/nats-server.conf run as shipped: only its port and store moved into
a temp folder (and, for a test that fills the broker, its `max_file_store` made small),
its passwords in the environment as the manual says. Shared by the tests that attack the
broker through the tables' real logins."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from devkit.broker import Broker, free_port
from tests.floor.kit import FloorBroker, StationUser, create_stream

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "config" / "nats-server.conf"
PASSWORDS = {"FLOOR_PASSWORD": "floor-secret", "TABLE_1_PASSWORD": "one", "TABLE_2_PASSWORD": "two"}
#: The shipped file's station logins (site-1, tables 1 and 2).
USERS = {
    "table-1": StationUser("site-1", "table-1", "table-1", "one"),
    "table-2": StationUser("site-1", "table-2", "table-2", "two"),
}


def shipped_text(tmp: Path, port: int, *, max_file_store: str | None = None) -> str:
    """The shipped file with its port and store moved (exactly one of each, or the file
    changed shape and the test says so)."""
    text = SHIPPED.read_text()
    text, listens = re.subn(r"(?m)^listen: .*$", f"listen: 127.0.0.1:{port}", text)
    text, stores = re.subn(r"(?m)^(\s*)store_dir: .*$", rf"\1store_dir: {tmp}/store", text)
    assert (listens, stores) == (1, 1), "the shipped file has one listen and one store_dir"
    if max_file_store is not None:
        text, sizes = re.subn(
            r"(?m)^(\s*)max_file_store: .*$", rf"\1max_file_store: {max_file_store}", text
        )
        assert sizes == 1
    return text


def shipped_broker(
    tmp: Path, *, max_file_store: str | None = None, stream: bool = True
) -> FloorBroker:
    """The shipped broker, started (the caller stops it: `.broker.stop()`), with the stream
    made as the floor service makes it (`stream_config()`'s defaults) unless `stream` is
    False."""
    tmp.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = tmp / "nats-server.conf"
    config.write_text(shipped_text(tmp, port, max_file_store=max_file_store))
    broker = Broker(config, port, log=tmp / "nats.log", env=PASSWORDS)
    broker.start()
    floor = FloorBroker(broker, PASSWORDS["FLOOR_PASSWORD"], dict(USERS))
    if stream:
        try:
            asyncio.run(create_stream(floor))
        except BaseException:
            broker.stop()
            raise
    return floor
