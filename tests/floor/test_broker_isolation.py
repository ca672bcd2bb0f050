"""Issue 32, attacks 5 and 7, on the shipped config/nats-server.conf run as shipped,
through the tables' real logins: one table's login cannot get anything stored under, or
heard at, another table's subjects (not by a plain publish, not by a JetStream request,
not by naming another table's subject as the reply subject: JetStream sends its
acknowledgement there), and it cannot fill the stream or the broker so that another
table's publishes fail, nor hold more than its share. Each attack is also made where it
lands (a broker of the shape the shipped file had before, one account and permissions
only; a stream without bounds), so the tests can fail."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import nats
import nats.errors
import nats.js.errors
import pytest
from nats.aio.msg import Msg
from nats.js.api import DiscardPolicy, StreamInfo

from devkit.broker import ADMIN_USER, Broker, free_port
from station.shared.messages import (
    ROW_BYTES,
    STREAM,
    TABLE_SUBSCRIPTIONS,
    alert_subject,
    heartbeat_subject,
    journal_subject,
    station_permissions,
    stream_config,
)
from tests.floor.floorkit import floor_config, serve_floor
from tests.floor.kit import (
    SITE,
    FloorBroker,
    Writer,
    admin,
    assert_exactly_once,
    new_journal,
    run_publisher,
    table_count,
    wait_for,
    wait_published,
)
from tests.floor.shippedkit import PASSWORDS, USERS, shipped_broker

pytestmark = [pytest.mark.floor, pytest.mark.server]

OWN = journal_subject(SITE, "table-1")
#: Table 2's subjects: where table 1's login tries to put something.
VICTIM = (
    journal_subject(SITE, "table-2"),
    heartbeat_subject(SITE, "table-2"),
    alert_subject(SITE, "table-2"),
)
#: The stream's bounds for the flood (the floor service's `[broker] table_rows` and
#: `stream_bytes`, scaled down), and the broker's room (its `max_file_store`).
TABLE_ROWS, STREAM_BYTES, BROKER_ROOM = 100, 32 << 20, "64MB"
#: The flood: messages of table 1's login, each just under the largest row the broker
#: takes, more in all than the broker has room for.
FLOOD, FLOOD_BYTES = 800, 100 * 1024


def one_account_broker(tmp: Path) -> FloorBroker:
    """A broker of the shape the shipped file had before issue 32: every login in one
    account, each table's user held to its own subjects by permissions only."""
    tmp.mkdir(parents=True, exist_ok=True)
    port = free_port()
    users: list[dict[str, object]] = [{"user": ADMIN_USER, "password": PASSWORDS["FLOOR_PASSWORD"]}]
    for u in USERS.values():
        permissions = station_permissions(u.site, u.table)
        users.append({"user": u.user, "password": u.password, "permissions": permissions})
    jetstream = {"store_dir": str(tmp / "store"), "sync_interval": "always"}
    config = {
        "listen": f"127.0.0.1:{port}",
        "jetstream": jetstream,
        "authorization": {"users": users},
    }
    path = tmp / "one-account.conf"
    path.write_text(json.dumps(config))
    broker = Broker(path, port, log=tmp / "nats.log")
    broker.start()
    return FloorBroker(broker, PASSWORDS["FLOOR_PASSWORD"], dict(USERS))


async def table_1(floor: FloorBroker, errors: list[str] | None = None) -> nats.NATS:
    """Table 1's login, as its station connects (its own inbox prefix)."""

    async def error_cb(exc: Exception) -> None:
        if errors is not None:
            errors.append(str(exc))

    return await nats.connect(
        floor.url,
        user="table-1",
        password=USERS["table-1"].password,
        inbox_prefix="_INBOX.site-1.table-1",
        error_cb=error_cb,
        allow_reconnect=False,
    )


# Attack 5: a reply into another table's subject.


async def steer_replies(floor: FloorBroker) -> tuple[list[str], list[str]]:
    """Everything table 1's login may send, each with a reply subject of table 2's: a row
    at its own subject (JetStream acknowledges it at the reply subject), a request for the
    stream's settings, a direct get of its own last row; then the JetStream requests that
    name table 2's subject. Returns what the floor's account heard at table 2's subjects
    meanwhile and the broker's permission errors."""
    errors: list[str] = []
    heard: list[str] = []
    sentinel = asyncio.Event()
    async with admin(floor) as floor_nc:

        async def hear(msg: Msg) -> None:
            if msg.subject == heartbeat_subject(SITE, "table-1"):
                sentinel.set()
            elif msg.subject in VICTIM:
                heard.append(f"{msg.subject}: {msg.data[:80]!r}")

        await floor_nc.subscribe(f"floor.{SITE}.>", cb=hear)
        await floor_nc.flush()
        nc = await table_1(floor, errors)
        try:
            await _steer(nc)
            # Settled: the API has answered all once it answers again, and the stream
            # has stored all once it acknowledges a row sent after; the floor has heard
            # all once it hears a message sent after that.
            js = nc.jetstream(timeout=2)
            await js.get_last_msg(STREAM, OWN, direct=True)
            await js.stream_info(STREAM)
            await js.publish(OWN, b'{"last": true}')
            await nc.publish(heartbeat_subject(SITE, "table-1"), b"{}")
            await asyncio.wait_for(sentinel.wait(), 5)
        finally:
            await nc.close()
    return heard, errors


async def _steer(nc: nats.NATS) -> None:
    sends = [
        (OWN, b'{"junk": "an acknowledgement for table 2"}'),
        (f"$JS.API.STREAM.INFO.{STREAM}", b""),
        (f"$JS.API.DIRECT.GET.{STREAM}.{OWN}", b""),
    ]
    for subject, body in sends:
        for reply in VICTIM:
            await nc.publish(subject, body, reply=reply)
    victim = VICTIM[0]
    for api, request in (
        (f"DIRECT.GET.{STREAM}.{victim}", {}),
        (f"DIRECT.GET.{STREAM}", {"last_by_subj": victim}),
        (f"STREAM.MSG.GET.{STREAM}", {"last_by_subj": victim}),
        (f"CONSUMER.CREATE.{STREAM}", {"config": {"filter_subject": victim}}),
        (f"STREAM.PURGE.{STREAM}", {"filter": victim}),
    ):
        data = json.dumps(request).encode() if request else b""
        with pytest.raises(nats.errors.TimeoutError):
            await nc.request(f"$JS.API.{api}", data, timeout=0.3)
    with pytest.raises(nats.errors.TimeoutError):  # a plain publish as table 2
        await nc.jetstream(timeout=0.3).publish(victim, b"{}")


@pytest.fixture
def shipped(tmp_path: Path) -> Iterator[FloorBroker]:
    floor = shipped_broker(tmp_path)
    try:
        yield floor
    finally:
        floor.broker.stop()


def attack_5(floor: FloorBroker) -> tuple[int, list[str], list[str]]:
    """Attack 5 made on `floor`: how many messages the stream holds of table 2 after it,
    what the floor heard at table 2's subjects, and the broker's permission errors."""
    heard, errors = asyncio.run(steer_replies(floor))
    return asyncio.run(table_count(floor, "table-2")), heard, errors


def test_a_reply_subject_of_another_table_stores_nothing_there(shipped: FloorBroker) -> None:
    stored, heard, errors = attack_5(shipped)
    assert stored == 0, "table 1's login got a message stored under table 2's subject"
    assert heard == [], f"the floor heard at table 2's subjects: {heard[:3]}"
    # table 1's own sends went through (the attack was made, and acknowledged to table 1
    # only in its own account), and every request naming table 2 was refused by name
    assert asyncio.run(table_count(shipped, "table-1")) == len(VICTIM) + 1
    for refused in ("direct.get.floor.floor.site-1.table-2", "stream.msg.get", "consumer.create"):
        assert any(refused in e.lower() for e in errors), (refused, errors)
    assert any('publish to "floor.site-1.table-2.journal"' in e for e in errors), errors


def test_the_same_attack_lands_on_a_one_account_broker(tmp_path: Path) -> None:
    """The broker's shape before: permissions check the subject published to, never the
    reply subject, so JetStream's acknowledgement, the stream's settings and table 1's
    last row were all stored as table 2's rows."""
    floor = one_account_broker(tmp_path)
    try:
        asyncio.run(_make_stream(floor))
        stored, heard, _ = attack_5(floor)
    finally:
        floor.broker.stop()
    assert stored == 3, stored  # a reply of each kind into table 2's journal subject
    assert len(heard) == 9, heard  # 3 sends x table 2's 3 subjects


async def _make_stream(floor: FloorBroker, **bounds: int) -> None:
    async with admin(floor) as nc:
        await nc.jetstream().add_stream(stream_config(**bounds))


# Attack 7: one login fills the stream.


async def flood(floor: FloorBroker, count: int = FLOOD, size: int = FLOOD_BYTES) -> None:
    """Table 1's login publishes `count` messages of `size` bytes at its own subject as
    fast as the broker takes them (no waiting for acknowledgements)."""
    nc = await table_1(floor)
    try:
        junk = b"x" * size
        for _ in range(count):
            await nc.publish(OWN, junk)
        await nc.flush(timeout=60)
        # settled once a row sent after the flood is acknowledged (or refused)
        with_ack = nc.jetstream(timeout=30)
        with contextlib.suppress(nats.js.errors.APIError):
            await with_ack.publish(OWN, b"{}")
    finally:
        await nc.close()


async def stream_info(floor: FloorBroker) -> StreamInfo:
    async with admin(floor) as nc:
        return await nc.jetstream().stream_info(STREAM)


async def table_2_publishes(floor: FloorBroker) -> str:
    """One row published by table 2's login: "ok", or the broker's refusal."""
    nc = await nats.connect(
        floor.url,
        user="table-2",
        password=USERS["table-2"].password,
        inbox_prefix="_INBOX.site-1.table-2",
        allow_reconnect=False,
    )
    try:
        await nc.jetstream(timeout=5).publish(journal_subject(SITE, "table-2"), b"{}")
    except nats.js.errors.APIError as exc:
        return str(exc)
    finally:
        await nc.close()
    return "ok"


@pytest.fixture
def small(tmp_path: Path) -> Iterator[FloorBroker]:
    """The shipped broker with room for only 64 MB, its stream made with the floor
    service's bounds scaled down (a table's 100 rows, 32 MiB in all)."""
    floor = shipped_broker(tmp_path, max_file_store=BROKER_ROOM, stream=False)
    try:
        asyncio.run(_make_stream(floor, max_msgs_per_subject=TABLE_ROWS, max_bytes=STREAM_BYTES))
        yield floor
    finally:
        floor.broker.stop()


def test_one_login_flooding_its_subject_starves_no_other_table(
    small: FloorBroker, tmp_path: Path
) -> None:
    journal = new_journal(tmp_path / "table-2.db", "table-2")
    publisher = run_publisher(small, "table-2", journal.path)
    with publisher, Writer(journal, publisher.publisher, 60, interval=0.02):
        flooding = threading.Thread(target=lambda: asyncio.run(flood(small)))
        flooding.start()
        flooding.join(120)
        assert not flooding.is_alive()
        wait_published(small, "table-2", 61)
    # table 2's station published every row while table 1 flooded, each once, in order
    assert_exactly_once(small, "table-2", journal.path)
    assert asyncio.run(table_2_publishes(small)) == "ok"
    # table 1's share is bounded: its newest rows only, never more than the bound
    info = asyncio.run(stream_info(small))
    assert asyncio.run(table_count(small, "table-1")) == TABLE_ROWS
    assert info.state.bytes <= TABLE_ROWS * (FLOOD_BYTES + 1024) + 64 * 1024
    assert info.state.messages == TABLE_ROWS + 62


def test_an_unbounded_stream_is_filled_by_one_login(tmp_path: Path) -> None:
    """Issue 32's attack 7 as filed: the stream without bounds, the broker's room filled
    by one login, and then another table's publish fails."""
    floor = shipped_broker(tmp_path, max_file_store=BROKER_ROOM, stream=False)
    try:
        asyncio.run(_make_stream(floor, max_msgs_per_subject=-1, max_bytes=-1))
        asyncio.run(flood(floor))
        refused = asyncio.run(table_2_publishes(floor))
    finally:
        floor.broker.stop()
    assert "insufficient resources" in refused.lower(), refused


def test_a_row_bigger_than_the_bound_is_refused_by_the_broker(shipped: FloorBroker) -> None:
    """A client that ignores the broker's advertised max_payload (a raw socket) sending a
    1 MiB message: the broker refuses it and closes the connection; nothing stored."""
    answer = raw_publish(shipped, OWN, 1 << 20)
    assert "maximum payload violation" in answer.lower(), answer
    assert asyncio.run(table_count(shipped, "table-1")) == 0
    # a row of the largest size a row can be goes through
    assert "+OK" in raw_publish(shipped, OWN, ROW_BYTES - 1024, verbose=True)
    wait_for(lambda: asyncio.run(table_count(shipped, "table-1")) == 1, what="the row stored")


def raw_publish(floor: FloorBroker, subject: str, size: int, *, verbose: bool = False) -> str:
    """What the broker answers table 1's login publishing `size` bytes at `subject` over
    a plain socket."""
    pub = f"PUB {subject} {size}\r\n".encode() + b"x" * size + b"\r\n"
    return raw_session(floor, pub, verbose=verbose)


def raw_session(floor: FloorBroker, protocol: bytes, *, verbose: bool = False) -> str:
    """What the broker answers table 1's login sending `protocol` (NATS protocol lines)
    over a plain socket, a client that ignores every limit the broker advertises: up to
    its PONG or its first error."""
    user = USERS["table-1"]
    login = {"user": user.user, "pass": user.password, "verbose": verbose, "pedantic": False}
    with socket.create_connection(("127.0.0.1", floor.broker.port), timeout=10) as s:
        s.recv(4096)  # INFO
        s.sendall(f"CONNECT {json.dumps(login)}\r\n".encode() + protocol + b"PING\r\n")
        answer = b""
        while b"PONG" not in answer and b"-ERR" not in answer:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.decode(errors="replace")


def test_one_login_holds_at_most_four_connections(shipped: FloorBroker) -> None:
    async def attack() -> str:
        held = [await table_1(shipped) for _ in range(4)]
        try:
            try:
                extra = await table_1(shipped)
            except Exception as exc:  # the broker's refusal, as the client raises it
                return str(exc)
            await extra.close()
            return "connected"
        finally:
            assert await table_2_publishes(shipped) == "ok"
            for nc in held:
                await nc.close()

    refused = asyncio.run(attack())
    assert "maximum account active connections" in refused.lower(), refused


def test_one_login_holds_at_most_64_subscriptions(shipped: FloorBroker) -> None:
    subs = b"".join(
        f"SUB _INBOX.site-1.table-1.sub-{n} {n}\r\n".encode()
        for n in range(TABLE_SUBSCRIPTIONS + 1)
    )
    answer = raw_session(shipped, subs)
    assert "maximum subscriptions exceeded" in answer.lower(), answer
    # the station's own work goes on: its next connection publishes a row
    assert "+OK" in raw_publish(shipped, OWN, 100, verbose=True)
    wait_for(lambda: asyncio.run(table_count(shipped, "table-1")) == 1, what="the row stored")


# The floor service makes the stream with these bounds, and says so of one without.


def test_the_floor_service_makes_the_stream_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    floor = shipped_broker(tmp_path / "broker", stream=False)
    try:
        config, tokens = floor_config(
            tmp_path, floor, monkeypatch, broker={"table_rows": 5000, "stream_bytes": 1 << 30}
        )
        with serve_floor(config, tokens) as running:
            # the service makes the stream once it has reached the broker
            wait_for(lambda: running.service.board.broker == "connected", what="connected")
            info = asyncio.run(stream_info(floor))
    finally:
        floor.broker.stop()
    assert info.config.max_msgs_per_subject == 5000
    assert info.config.max_bytes == 1 << 30
    assert info.config.max_msg_size == ROW_BYTES
    assert info.config.discard == DiscardPolicy.OLD


def test_the_floor_service_warns_of_a_stream_without_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    floor = shipped_broker(tmp_path / "broker", stream=False)
    try:
        asyncio.run(_make_stream(floor, max_msgs_per_subject=-1, max_bytes=-1, max_msg_size=-1))
        config, tokens = floor_config(tmp_path, floor, monkeypatch)
        with caplog.at_level(logging.WARNING, "station.floor"), serve_floor(config, tokens) as on:
            wait_for(lambda: on.service.board.broker == "connected", what="connected")
    finally:
        floor.broker.stop()
    words = [r.getMessage() for r in caplog.records if "can fill it" in r.getMessage()]
    assert words, [r.getMessage() for r in caplog.records]
    assert "no max-msgs-per-subject nor max-bytes nor max-msg-size" in words[0]
    assert "nats stream edit FLOOR --max-msgs-per-subject 100000" in words[0]
