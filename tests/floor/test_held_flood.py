"""Issue 32, attack 7's rest, on real processes: the shipped config/nats-server.conf run as
shipped, a real `station floor` (`[floor] held_rows = 100`, table 1's key configured,
table 2 an unsigned station), and a flood of distinct junk with table 1's broker login
(rows made with the station's own hash but no key, messages that are not rows) while
table 2's station publishes. The floor holds at most 100 of table 1's junk however long
the flood, counts the rest (`dropped`), alerts HELD_FULL once, and archives every row of
table 2 meanwhile. Before the bound, 3,000 such messages held 286 rows against a stream
of 100 a table, and a longer flood held more."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from station.shared.messages import STREAM, journal_subject
from station.shared.signing import SigningKey
from tests.floor.kit import SITE, FloorBroker, Writer, admin, new_journal, run_publisher
from tests.floor.shippedkit import shipped_broker
from tests.floor.signedkit import FloorProcess, floor_process, forged, wait_until
from tests.floor.test_broker_isolation import table_1
from tests.floor.test_held_bound import After

pytestmark = [pytest.mark.floor, pytest.mark.server, pytest.mark.slow]

BOUND = 100
OWN = journal_subject(SITE, "table-1")
#: Table 2's rows, written by its station while table 1's login floods.
TABLE_2_ROWS = 60


@pytest.fixture
def shipped(tmp_path: Path) -> Iterator[FloorBroker]:
    floor = shipped_broker(tmp_path / "broker")
    try:
        yield floor
    finally:
        floor.broker.stop()


async def flood(floor: FloorBroker, numbers: range) -> None:
    """Table 1's login publishes a distinct junk message for each number, as fast as the
    broker takes them; settled once a message sent after them is acknowledged."""
    nc = await table_1(floor)
    try:
        for n in numbers:
            if n % 2:
                body = orjson.dumps({"junk": n, "pad": "x" * 200})
            else:
                body = forged("table-1", After(n + 10, "0" * 64), n=n)
            await nc.publish(OWN, body)
        await nc.flush(timeout=60)
        await nc.jetstream(timeout=30).publish(OWN, b'{"junk": "the last"}')
    finally:
        await nc.close()


async def unread(floor: FloorBroker) -> int:
    """Messages the floor service has not read and acknowledged yet."""
    async with admin(floor) as nc:
        info = await nc.jetstream().consumer_info(STREAM, "floor-service")
    return (info.num_pending or 0) + (info.num_ack_pending or 0)


def read_all(floor: FloorBroker) -> bool:
    return asyncio.run(unread(floor)) == 0


def held_in_archive(running: FloorProcess, table: str) -> int:
    """The held rows of `table` as the archive file has them (not as the API says)."""
    db = sqlite3.connect(f"file:{running.log.parent / 'floor.db'}?mode=ro", uri=True)
    try:
        found: int = db.execute(
            "SELECT count(*) FROM held WHERE table_id = ?", (table,)
        ).fetchone()[0]
    finally:
        db.close()
    return found


def test_one_logins_flood_is_held_within_the_bound_while_another_table_is_archived(
    tmp_path: Path, shipped: FloorBroker
) -> None:
    key = SigningKey.generate()
    journal = new_journal(tmp_path / "table-2.db", "table-2")
    tables = {"table-1": key.public.text, "table-2": ""}
    lines = f"held_rows = {BOUND}"
    with floor_process(tmp_path / "floor", shipped, tables, floor_lines=lines) as floor:
        publisher = run_publisher(shipped, "table-2", journal.path)
        with publisher, Writer(journal, publisher.publisher, TABLE_2_ROWS, interval=0.02):
            asyncio.run(flood(shipped, range(3000)))
            last = TABLE_2_ROWS + 1  # its journal's first row, then the writer's
            wait_until(lambda: floor.table("table-2")["archived_seq"] == last, "table 2's rows")
        wait_until(lambda: read_all(shipped), "the flood read", timeout=120)
        first = floor.table("table-1")
        held_first = held_in_archive(floor, "table-1")
        # a longer flood: still no more held
        asyncio.run(flood(shipped, range(3000, 6000)))
        wait_until(lambda: read_all(shipped), "the second flood read", timeout=120)
        second = floor.table("table-1")
        held_second = held_in_archive(floor, "table-1")
        full = floor.alerts("HELD_FULL")
        other = floor.table("table-2")
    assert held_first == held_second == BOUND
    assert first["held"] == second["held"] == BOUND
    # every message past the bound counted (one the broker sent again, counted again)
    assert first["dropped"] >= 3001 - BOUND and second["dropped"] >= 6002 - BOUND
    assert second["dropped"] > first["dropped"]
    [alert] = full
    assert alert["table"] == "table-1" and "[floor] held_rows" in alert["message"]
    assert [a["kind"] for a in second["alerts"]].count("HELD_FULL") == 1
    assert other["archived_seq"] == TABLE_2_ROWS + 1
    assert other["held"] == 0 and other["dropped"] == 0 and other["alerts"] == []
