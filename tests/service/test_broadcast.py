"""`WS /api/live` under slow and many clients: a client that stops reading is closed with
1013 within the send timeout and costs bounded memory; the others, and the writer, never
wait for it; 100 clients all get every row once and in order; `?after=` loses nothing."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as connect_async
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

import station.api.live as live_api
import station.live.fanout as fanout
from station.live.fanout import TOO_FAR_BEHIND, Broadcast, Subscriber
from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server

#: A fault with 14 texts of 4,000 characters (a text is at most 4,096, a body 64 KiB)
#: weighs ~56 KB, so a hundred rows fill the sockets' buffers of a client that does not
#: read.
BIG = {f"detail_{i}": "x" * 4000 for i in range(14)}


def _batch(seq: int, size: int = 100) -> Broadcast:
    return Broadcast.of(seq, [b"r" * size, b"s" * size])


def test_a_queue_is_bounded_in_messages() -> None:
    sub = Subscriber(after=0, max_messages=10, max_bytes=1 << 30)
    for seq in range(1, 6):
        sub.put(_batch(seq))
    assert sub.messages == 10 and sub.closed is None
    sub.put(_batch(6))  # one message too many: dropped, not grown
    assert sub.closed == (1013, TOO_FAR_BEHIND)
    assert sub.pending == [] and sub.size == 0 and sub.messages == 0
    for seq in range(7, 10_000):  # nothing more is kept once it is closed
        sub.put(_batch(seq))
    assert sub.pending == [] and sub.size == 0


def test_a_queue_is_bounded_in_bytes() -> None:
    sub = Subscriber(after=0, max_messages=1_000_000, max_bytes=1000)
    for seq in range(1, 6):
        sub.put(_batch(seq))  # 200 bytes each
    assert sub.size == 1000 and sub.closed is None
    sub.put(_batch(6, size=1))
    assert sub.closed is not None and sub.closed[0] == 1013 and sub.size == 0


def test_a_queue_skips_what_its_backfill_has_and_a_stop_delivers_the_rest() -> None:
    async def run() -> list[list[Broadcast]]:
        sub = Subscriber(after=5)
        sub.put(_batch(5, size=1))  # committed before it subscribed: its backfill has it
        sub.put(_batch(6, size=1))
        sub.close(1001, "stopping", drop=False)
        return [await sub.take(), await sub.take()]

    assert asyncio.run(run()) == [[_batch(6, size=1)], []]


def test_a_state_alone_reaches_a_listener_at_its_seq_but_not_one_ahead_of_it() -> None:
    """A state with no row (the journal cannot be written) is of the snapshot at its seq:
    a listener that subscribed at that seq has not seen it (its hello came before), one
    that subscribed later has a newer state already."""

    async def run() -> list[Broadcast]:
        alone = Broadcast.of(5, [b'{"type":"state"}'], rows=False)
        at, ahead = Subscriber(after=5), Subscriber(after=6)
        for sub in (at, ahead):
            sub.put(alone)
            sub.close(1001, "stopping", drop=False)
        return [*(await at.take()), *(await ahead.take())]

    assert asyncio.run(run()) == [Broadcast.of(5, [b'{"type":"state"}'], rows=False)]


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536, 70000])
def test_a_broadcast_is_framed_as_websockets_reads_it(size: int) -> None:
    """The shared frames parse, with websockets' own reader, as the text messages."""
    from websockets.frames import Frame, Opcode
    from websockets.streams import StreamReader

    payload = bytes(48 + i % 10 for i in range(size))
    batch = Broadcast.of(1, [payload, b'{"type":"state"}'])
    stream = StreamReader()
    stream.feed_data(batch.frames)
    stream.feed_eof()
    texts = []
    for _ in batch.messages:
        parser = Frame.parse(stream.read_exact, mask=False, max_size=None)
        try:
            next(parser)
        except StopIteration as done:
            frame = done.value
            assert frame.opcode is Opcode.TEXT and frame.fin
            texts.append(bytes(frame.data).decode())
    assert tuple(texts) == batch.messages
    assert batch.size == size + len(b'{"type":"state"}')


def _stuck_client(url: str) -> ClientConnection:
    """A client that reads nothing after its hello (use it in `with`): a tiny receive
    buffer, no compression (the rows' text would shrink to nothing), and websockets' own
    reading thread stops once 2 messages wait (`max_queue`), so the TCP window fills."""
    host, port = url.removeprefix("ws://").split("/")[0].split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    return connect(url, sock=sock, max_queue=2, max_size=None, compression=None)


class Reader(threading.Thread):
    """A client reading everything, in a thread: the row seqs it got, in order."""

    def __init__(self, ws: ClientConnection) -> None:
        super().__init__(daemon=True)
        self.ws = ws
        self.hello = json.loads(self.ws.recv())
        self.seqs: list[int] = []
        self.closed: int | None = None

    def run(self) -> None:
        try:
            for text in self.ws:
                message = json.loads(text)
                if message["type"] == "row":
                    self.seqs.append(message["seq"])
        except ConnectionClosed as exc:
            self.closed = exc.rcvd.code if exc.rcvd else None

    def wait_for(self, seq: int, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not (self.seqs and self.seqs[-1] >= seq):
            assert time.monotonic() < deadline, f"row {seq} never came ({self.seqs[-3:]})"
            time.sleep(0.01)


def _faults(live: Running, count: int) -> Iterator[int]:
    """Post `count` heavy rows; yields each one's seq."""
    with httpx.Client(headers=live.headers("rig"), timeout=30) as client:
        for _ in range(count):
            r = client.post(
                f"{live.url}/api/events", json={"type": "fault", "detail": "a heavy row", **BIG}
            )
            assert r.status_code == 200, r.text
            yield r.json()["seq"]


def _drain(ws: ClientConnection) -> tuple[list[int], int | None]:
    """Read what a stuck client was sent: its row seqs, then the close code it got."""
    seqs = []
    try:
        while True:
            message = json.loads(ws.recv(timeout=10))
            if message["type"] == "row":
                seqs.append(message["seq"])
    except ConnectionClosed as exc:
        return seqs, exc.rcvd.code if exc.rcvd else None


def test_a_client_that_never_reads_is_closed_1013_and_the_others_get_everything(
    live: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_api, "SEND_TIMEOUT", 1.0)
    url = live.ws_url + f"?token={live.tokens['viewer']}"
    with connect(url, max_size=None) as ws, _stuck_client(url) as stuck:
        reader = Reader(ws)
        reader.start()
        assert json.loads(stuck.recv())["type"] == "hello"
        _stuck_then_reconnect(live, reader, stuck)


def _stuck_then_reconnect(live: Running, reader: Reader, stuck: ClientConnection) -> None:
    station = live.station
    first = reader.hello["seq"] + 1
    assert len(station.subscribers) == 2
    started = time.monotonic()
    seqs: list[int] = []
    for seq in _faults(live, 300):  # up to ~18 MB: far more than the stuck one's sockets hold
        seqs.append(seq)
        assert all(s.size <= fanout.SUBSCRIBER_BACKLOG_BYTES for s in station.subscribers)
        if len(station.subscribers) == 1:
            break
    deadline = time.monotonic() + 5
    while len(station.subscribers) > 1:  # the stuck one is dropped within the timeout
        assert time.monotonic() < deadline, "the stuck client was never dropped"
        time.sleep(0.05)
    dropped_after = time.monotonic() - started
    seqs.extend(_faults(live, 3))  # the writer and the other client go on unhindered
    reader.wait_for(seqs[-1])
    assert reader.seqs == list(range(first, seqs[-1] + 1))
    assert dropped_after < 10

    got, code = _drain(stuck)  # it reads at last: a gapless prefix, then 1013
    assert code == 1013
    assert got == list(range(first, first + len(got)))
    assert len(got) < len(reader.seqs)

    # Reconnecting with ?after= the last row it got loses nothing.
    after = got[-1] if got else first - 1
    url = live.ws_url + f"?token={live.tokens['viewer']}&after={after}"
    with connect(url, max_size=None) as again:
        assert json.loads(again.recv())["type"] == "hello"
        rest = [json.loads(again.recv(timeout=10))["seq"] for _ in range(seqs[-1] - after)]
    assert got + rest == list(range(first, seqs[-1] + 1))


def test_a_client_that_never_reads_again_is_dropped(
    live: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the send timeout and then the close timeout, a client that still does not
    read loses its connection (its buffers, in the kernel too, are freed): no close
    frame, and what it got is still a gapless prefix."""
    monkeypatch.setattr(live_api, "SEND_TIMEOUT", 0.5)
    monkeypatch.setattr(live_api, "CLOSE_TIMEOUT", 0.5)
    station = live.station
    with _stuck_client(live.ws_url + f"?token={live.tokens['viewer']}") as stuck:
        hello = json.loads(stuck.recv())
        for _ in _faults(live, 300):
            if not station.subscribers:
                break
        time.sleep(1.5)  # the close timeout passes: the connection is dropped
        got, code = _drain(stuck)
        assert code is None  # no close frame: the connection was reset
        assert got == list(range(hello["seq"] + 1, hello["seq"] + 1 + len(got)))


def test_a_full_queue_closes_1013_and_memory_stays_bounded(
    live: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a long send timeout, the byte bound is what drops a client that does not
    read: its queue never holds more than the bound."""
    monkeypatch.setattr(live_api, "SEND_TIMEOUT", 60.0)
    monkeypatch.setattr(fanout, "SUBSCRIBER_BACKLOG_BYTES", 1_000_000)
    station = live.station
    with _stuck_client(live.ws_url + f"?token={live.tokens['viewer']}") as stuck:
        assert json.loads(stuck.recv())["type"] == "hello"
        (sub,) = station.subscribers
        largest = 0
        for _ in _faults(live, 300):
            largest = max(largest, sub.size)
            if sub.closed is not None:
                break
        assert sub.closed == (1013, TOO_FAR_BEHIND)
        assert largest <= 1_000_000 and sub.size == 0 and not sub.pending
        deadline = time.monotonic() + 5
        while station.subscribers:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        _, code = _drain(stuck)
        assert code == 1013


def test_100_clients_get_every_row_once_and_in_order(live: Running) -> None:
    clients, events = 100, 40
    url = live.ws_url + f"?token={live.tokens['viewer']}"

    async def listen(ws: Any) -> list[int]:
        seqs: list[int] = []
        while len(seqs) < events:  # one row per event posted
            message = json.loads(await ws.recv())
            if message["type"] == "row":
                seqs.append(message["seq"])
        return seqs

    async def run() -> tuple[int, int, list[list[int]]]:
        sockets = [await connect_async(url, max_size=None) for _ in range(clients)]
        hellos = [json.loads(await ws.recv())["seq"] for ws in sockets]
        tasks = [asyncio.create_task(listen(ws)) for ws in sockets]
        async with httpx.AsyncClient(headers=live.headers("supervisor")) as client:
            seq = 0
            for _ in range(events):
                r = await client.post(f"{live.url}/api/events", json={"type": "shoe"})
                seq = r.json()["seq"]
        results = await asyncio.wait_for(asyncio.gather(*tasks), 60)
        for ws in sockets:
            await ws.close()
        assert len(set(hellos)) == 1
        return hellos[0], seq, list(results)

    hello, last, results = asyncio.run(run())
    assert last == hello + events
    for seqs in results:
        assert seqs == list(range(hello + 1, last + 1))


def test_under_a_plain_asgi_server_clients_get_every_row(tmp_path: Path) -> None:
    """Without the `station.frames` extension (uvicorn's defaults, per-message deflate on)
    the handler sends each message through ASGI: same messages, same order."""
    config, tokens = make_config(tmp_path, allow_rig=True)
    with serve(config, tokens, server_options={}) as running:
        url = running.ws_url + f"?token={running.tokens['viewer']}"
        with connect(url) as ws:
            hello = json.loads(ws.recv())
            seqs = [running.post({"type": "shoe"}).json()["seq"] for _ in range(5)]
            got = []
            while len(got) < 10:
                got.append(json.loads(ws.recv(timeout=10)))
    assert [m["seq"] for m in got if m["type"] == "row"] == seqs
    assert seqs == list(range(hello["seq"] + 1, hello["seq"] + 6))
    assert [m["type"] for m in got] == ["row", "state"] * 5


def test_a_failing_listener_is_closed_1011_and_the_others_get_the_row(live: Running) -> None:
    """A bug in delivering to one client closes that client (1011: reconnect), not the
    fan-out: the others still get every row."""
    url = live.ws_url + f"?token={live.tokens['viewer']}"
    station = live.station
    with connect(url) as broken, connect(url) as other:
        hello = json.loads(broken.recv())
        json.loads(other.recv())
        deadline = time.monotonic() + 5
        while not all(s._wake is not None and s.deliver for s in station.subscribers):
            assert time.monotonic() < deadline, "the handlers never went idle"
            time.sleep(0.01)
        first = next(iter(station.subscribers))  # `broken`'s: subscription order

        def fail(batch: Broadcast) -> bool:
            raise RuntimeError("a bug in delivering")

        first.deliver = fail
        seq = live.post({"type": "shoe"}).json()["seq"]
        assert seq == hello["seq"] + 1
        assert json.loads(other.recv(timeout=10))["seq"] == seq
        with pytest.raises(ConnectionClosed) as closed:
            broken.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
        assert first not in station.subscribers
