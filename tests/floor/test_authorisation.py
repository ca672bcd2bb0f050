"""The shipped config/nats-server.conf, run as shipped (only its port and store moved into
a temp folder): a station's credentials publish its own table's rows and nothing else."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest

from devkit.broker import ADMIN_USER, render_config
from station.shared.messages import (
    STREAM,
    floor_exports,
    journal_subject,
    station_imports,
    station_permissions,
    table_limits,
)
from tests.floor.kit import (
    FloorBroker,
    append_rows,
    assert_exactly_once,
    new_journal,
    run_publisher,
    table_count,
    wait_published,
)
from tests.floor.shippedkit import SHIPPED, shipped_broker

pytestmark = pytest.mark.floor


@pytest.fixture
def shipped(tmp_path: Path) -> Iterator[FloorBroker]:
    floor = shipped_broker(tmp_path)
    try:
        yield floor
    finally:
        floor.broker.stop()


async def _as_table_1(floor: FloorBroker) -> list[str]:
    """What table-1's user may not do: publish table-2's rows, read table-2's last row,
    delete a message. Returns the broker's permission errors."""
    errors: list[str] = []

    async def error_cb(exc: Exception) -> None:
        errors.append(str(exc))

    nc = await nats.connect(
        floor.url,
        user="table-1",
        password="one",
        inbox_prefix="_INBOX.site-1.table-1",
        error_cb=error_cb,
        allow_reconnect=False,
    )
    js = nc.jetstream(timeout=0.5)
    with pytest.raises(nats.errors.TimeoutError):
        await js.publish(journal_subject("site-1", "table-2"), b"{}")
    with pytest.raises(nats.errors.TimeoutError):
        await js.get_last_msg(STREAM, journal_subject("site-1", "table-2"), direct=True)
    for api in (f"STREAM.MSG.DELETE.{STREAM}", f"STREAM.PURGE.{STREAM}", f"STREAM.DELETE.{STREAM}"):
        with pytest.raises(nats.errors.TimeoutError):
            await nc.request(f"$JS.API.{api}", b'{"seq": 1}', timeout=0.5)
    # its own subject is allowed (with the inbox of its own)
    ack = await js.publish(journal_subject("site-1", "table-1"), b"{}")
    assert ack.stream == STREAM
    await nc.close()
    return errors


def test_station_a_cannot_publish_to_table_b(shipped: FloorBroker) -> None:
    errors = asyncio.run(_as_table_1(shipped))
    assert any('publish to "floor.site-1.table-2.journal"' in e for e in errors), errors
    assert any("direct.get.floor.floor.site-1.table-2" in e.lower() for e in errors), errors
    assert any("stream.purge.floor" in e.lower() for e in errors), errors
    assert asyncio.run(table_count(shipped, "table-2")) == 0


def test_the_shipped_permissions_suffice_for_the_publisher(
    shipped: FloorBroker, tmp_path: Path
) -> None:
    journal = new_journal(tmp_path / "journal.db", "table-2")
    append_rows(journal, 12)
    with run_publisher(shipped, "table-2", journal.path):
        wait_published(shipped, "table-2", journal.last_seq)
    assert_exactly_once(shipped, "table-2", journal.path)


def test_the_shipped_blocks_are_station_permissions() -> None:
    """The shipped file's per-table blocks say what `station_permissions` says (the
    tests' brokers use the latter)."""
    text = SHIPPED.read_text()
    for table in ("table-1", "table-2"):
        for subject in station_permissions("site-1", table)["publish"]:
            assert f'"{subject}"' in text
        assert f'"_INBOX.site-1.{table}.>"' in text
    assert re.search(r"(?m)^\s*sync_interval: always$", text)
    assert ADMIN_USER in render_config(4222, Path("s"), [], "x")


def account_block(text: str, name: str) -> str:
    """The text of the shipped file's account `name` (from `  NAME: {` to its `  }`)."""
    start = text.index(f"\n  {name}: {{\n")
    return text[start : text.index("\n  }\n", start)]


def test_the_shipped_accounts_are_station_imports() -> None:
    """Each table's account in the shipped file imports what `station_imports` says and
    nothing more, with `table_limits`; the floor's account exports what `floor_exports`
    says (the tests' brokers use those)."""
    text = SHIPPED.read_text()
    floor = account_block(text, "FLOOR")
    assert "jetstream: enabled" in floor
    exports = re.findall(r'\{service: "([^"]+)"\}', floor)
    assert exports == [e["service"] for e in floor_exports()]
    for n, table in ((1, "table-1"), (2, "table-2")):
        block = account_block(text, f"TABLE_{n}")
        imports = re.findall(r'\{service: \{account: (\w+), subject: "([^"]+)"\}\}', block)
        assert imports == [
            (i["service"]["account"], i["service"]["subject"])
            for i in station_imports("site-1", table)
        ]
        limits = dict(re.findall(r"(max_\w+): (\d+)", block))
        assert {k: int(v) for k, v in limits.items()} == table_limits()
        assert f"user: {table}, password: $TABLE_{n}_PASSWORD" in block
