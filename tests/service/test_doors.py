"""The API's doors against a hostile client: where a token may come from, the events'
content type, the WebSocket's Origin, the body limit, the wrong-token throttle, what a
refusal says, and what a body may not override in the journal's exports."""

from __future__ import annotations

import asyncio
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from station.api.auth import HIGHER_ROLE, MISSING, NOT_VALID, THROTTLED, Throttle
from station.api.events import MAX_BODY, RESERVED
from station.core.events import EVENT_TYPES
from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server


@pytest.fixture
def station(tmp_path: Path) -> Iterator[Running]:
    config, tokens = make_config(tmp_path, allowed_origins=("https://pit.example:8443",))
    with serve(config, tokens) as running:
        yield running


def rows(live: Running) -> list[dict[str, Any]]:
    answer = httpx.get(f"{live.url}/api/journal", headers=live.headers("viewer"))
    events: list[dict[str, Any]] = answer.json()["events"]
    return events


# -- where a token may come from ----------------------------------------------------------


def test_a_token_in_an_http_url_is_not_taken(station: Running) -> None:
    viewer, dealer = station.tokens["viewer"], station.tokens["dealer"]
    r = httpx.get(f"{station.url}/api/state?token={viewer}")
    assert r.status_code == 401 and r.json()["detail"] == MISSING
    r = httpx.post(f"{station.url}/api/events?token={dealer}", json={"type": "shoe"})
    assert r.status_code == 401
    r = httpx.post(
        f"{station.url}/api/events?token={dealer}",
        content=b'{"type": "shoe"}',
        headers={"Content-Type": "text/plain"},  # what a cross-site form could send
    )
    assert r.status_code == 401
    assert [row["event"]["type"] for row in rows(station)] == ["notice", "restart"]


def test_the_websocket_still_takes_a_query_token(station: Running) -> None:
    with connect(f"{station.ws_url}?token={station.tokens['viewer']}") as ws:
        assert orjson.loads(ws.recv(5))["type"] == "hello"


# -- the events' content type -------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin-1"],
)
def test_events_must_be_declared_json(station: Running, content_type: str | None) -> None:
    headers = station.headers("dealer")
    if content_type is not None:
        headers["Content-Type"] = content_type
    r = httpx.post(f"{station.url}/api/events", content=b'{"type": "shoe"}', headers=headers)
    assert r.status_code == 415, r.text
    assert "Content-Type: application/json" in r.json()["detail"]
    assert [row["event"]["type"] for row in rows(station)] == ["notice", "restart"]


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"]
)
def test_json_with_or_without_charset_is_taken(station: Running, content_type: str) -> None:
    headers = {**station.headers("dealer"), "Content-Type": content_type}
    r = httpx.post(f"{station.url}/api/events", content=b'{"type": "shoe"}', headers=headers)
    assert r.status_code == 200 and r.json()["ok"], r.text


# -- the WebSocket's Origin ---------------------------------------------------------------


def test_the_websocket_takes_its_own_origin_and_the_allowed_ones(station: Running) -> None:
    host = station.url.removeprefix("http://")
    for origin in (
        None,
        f"http://{host}",
        f"ws://{host}",
        f"HTTPS://{host}/",
        "https://pit.example:8443",
    ):
        headers = {"Origin": origin} if origin else {}
        with connect(
            f"{station.ws_url}?token={station.tokens['viewer']}",
            origin=None,
            additional_headers=headers,
        ) as ws:
            assert orjson.loads(ws.recv(5))["type"] == "hello", origin


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "null",
        "http://127.0.0.1.evil.example",
        "http://127.0.0.1:1",
        "file://",
        "http://[::1",
        "https://pit.example",  # allowed with its port only
    ],
)
def test_the_websocket_refuses_other_origins(
    station: Running, origin: str, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        connect(
            f"{station.ws_url}?token={station.tokens['viewer']}",
            additional_headers={"Origin": origin},
        ) as ws,
        pytest.raises(ConnectionClosed) as refused,
    ):
        ws.recv(5)  # accepted, then closed as the manual says: 1008 and why
    assert refused.value.rcvd is not None and refused.value.rcvd.code == 1008
    assert refused.value.rcvd.reason == "this page's origin may not open the station's feed"
    assert "allowed_origins" in caplog.text and repr(origin) in caplog.text


# -- the body limit -----------------------------------------------------------------------


def raw_request(url: str, head: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(head.encode())
    return sock


def read_status(sock: socket.socket) -> int:
    answer = b""
    while b"\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk
    return int(answer.split()[1])


def rss_bytes() -> int:
    """This process's resident memory (the server runs in a thread of it)."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status)[1]) * 1024  # type: ignore[index]


def test_a_declared_200_mb_body_is_refused_before_it_is_sent(station: Running) -> None:
    token = station.tokens["dealer"]
    sock = raw_request(
        station.url,
        "POST /api/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {200 * 2**20}\r\n\r\n",
    )
    with sock:
        started = time.monotonic()
        assert read_status(sock) == 413  # without a byte of the body sent
        assert time.monotonic() - started < 2


@pytest.mark.parametrize(("role", "refusal"), [("dealer", 413), ("wrong", 401)])
def test_a_streamed_200_mb_body_is_cut_off_at_the_limit(
    station: Running, role: str, refusal: int
) -> None:
    """Chunked, so no length is declared: the server counts, answers 413 once the count
    passes 64 KiB (or 401 at once for a wrong token), and closes; the sender is stopped
    long before 200 MB, and the server's memory stays flat."""
    token = station.tokens.get(role, "not-a-token")
    sock = raw_request(
        station.url,
        "POST /api/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {token}\r\nTransfer-Encoding: chunked\r\n\r\n",
    )
    chunk = b"x" * 65536
    frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    before, sent, started = rss_bytes(), 0, time.monotonic()
    with sock:
        try:
            while sent < 200 * 2**20:
                sock.sendall(frame)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass
        grown = rss_bytes() - before
        assert sent < 32 * 2**20, f"the server read {sent} bytes before refusing"
        assert grown < 32 * 2**20, f"memory grew by {grown} bytes"
        assert time.monotonic() - started < 15
        try:
            status = read_status(sock)
        except ConnectionResetError:  # the answer was lost to the reset of a closed socket
            status = refusal
        assert status == refusal
    assert [row["event"]["type"] for row in rows(station)] == ["notice", "restart"]


def test_a_body_just_over_the_limit_is_413_and_at_the_limit_is_read(station: Running) -> None:
    headers = {**station.headers("dealer"), "Content-Type": "application/json"}
    # Strings of at most 4096 characters (the event's own bound), padded to the byte.
    start, chunk = b'{"type": "shoe", "pad": [', b'"' + b"x" * 4000 + b'", '
    body = start + chunk * ((MAX_BODY - len(start)) // len(chunk))
    at_limit = body + b'"' + b"x" * (MAX_BODY - len(body) - 4) + b'"]}'
    assert len(at_limit) == MAX_BODY
    r = httpx.post(f"{station.url}/api/events", content=at_limit, headers=headers)
    assert r.status_code == 200, r.text
    r = httpx.post(f"{station.url}/api/events", content=at_limit + b" ", headers=headers)
    assert r.status_code == 413 and str(MAX_BODY) in r.json()["detail"]
    assert r.headers["connection"] == "close"


def test_any_route_refuses_a_declared_oversized_body(station: Running) -> None:
    sock = raw_request(
        station.url, "GET /api/health HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
    )
    with sock:
        assert read_status(sock) == 413


# -- the wrong-token throttle -------------------------------------------------------------


def from_address(address: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address))


def test_wrong_tokens_throttle_their_address_only(
    station: Running, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="station.api")
    state = f"{station.url}/api/state"
    right = station.headers("viewer")
    with from_address("127.0.0.1") as attacker, from_address("127.0.0.2") as neighbour:
        statuses = [
            attacker.get(state, headers={"Authorization": f"Bearer guess-{n}"}).status_code
            for n in range(40)
        ]
        assert statuses[:10] == [401] * 10 and statuses[10:] == [429] * 30
        refused = attacker.get(state, headers={"Authorization": "Bearer guess-41"})
        assert refused.status_code == 429 and refused.json()["detail"] == THROTTLED
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert neighbour.get(state, headers=right).status_code == 200
        assert attacker.get(f"{station.url}/api/health").status_code == 200  # no token: open
    lines = [r for r in caplog.records if "127.0.0.1" in r.getMessage()]
    assert len(lines) == 1, [r.getMessage() for r in lines]  # not one line per attempt
    assert station.tokens["viewer"] not in caplog.text


def test_wrong_tokens_never_lock_out_a_valid_one(station: Running) -> None:
    """Issue 32, attack 10: any process that reaches the port (here from the supervisor's
    own address) sends ten wrong tokens, and goes on sending them; the supervisor's valid
    token still gets its pit controls at once, while the guesses stay throttled."""
    events = f"{station.url}/api/events"
    supervisor = station.headers("supervisor")
    with from_address("127.0.0.1") as local:
        guesses = [
            local.post(events, json={"type": "void"}, headers={"Authorization": f"Bearer g{n}"})
            for n in range(12)
        ]
        assert [g.status_code for g in guesses] == [401] * 10 + [429] * 2
        for _ in range(3):  # a valid token between guesses, each time
            answer = local.post(events, json={"type": "void"}, headers=supervisor)
            assert answer.status_code == 200, answer.text
            again = local.post(events, json={"type": "void"}, headers={"Authorization": "Bearer g"})
            assert again.status_code == 429 and again.json()["detail"] == THROTTLED
        viewer = local.get(f"{station.url}/api/state", headers=station.headers("viewer"))
        assert viewer.status_code == 200
        # A valid token of too low a role is still refused for its role, not let in.
        low = local.post(events, json={"type": "void"}, headers=station.headers("viewer"))
        assert low.status_code == 403 and low.json()["detail"] == HIGHER_ROLE
    voids = [row for row in rows(station) if row["event"]["type"] == "void"]
    assert len(voids) == 3  # each valid request was acted on, no guess was


def test_a_throttled_address_gets_429_at_the_websocket_handshake_for_a_wrong_token(
    station: Running,
) -> None:
    for n in range(10):
        r = httpx.get(f"{station.url}/api/state", headers={"Authorization": f"Bearer no-{n}"})
        assert r.status_code == 401
    with (
        pytest.raises(InvalidStatus) as refused,
        connect(f"{station.ws_url}?token=no-11"),
    ):
        pass
    assert refused.value.response.status_code == 429
    assert int(refused.value.response.headers["Retry-After"]) >= 1
    # The valid token from the same address opens the WebSocket (attack 10).
    with connect(f"{station.ws_url}?token={station.tokens['supervisor']}") as ws:
        assert orjson.loads(ws.recv(5))["type"] == "hello"


def test_the_throttle_writes_one_summary_line_per_window(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [1000.0]
    throttle = Throttle(limit=3, window=60.0, clock=lambda: now[0])
    caplog.set_level("INFO", logger="station.api")
    for _ in range(3):
        assert throttle.retry_after("10.0.0.9") is None
        throttle.unknown_token("10.0.0.9", "refused GET /api/state from 10.0.0.9")
    assert throttle.retry_after("10.0.0.9") == 60
    now[0] += 59.5
    assert throttle.retry_after("10.0.0.9") == 1
    assert throttle.retry_after("10.0.0.8") is None  # another address
    now[0] += 0.5
    assert throttle.retry_after("10.0.0.9") is None  # the window is over
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert "refused GET /api/state" in messages[0]
    assert "3 tokens that are not valid" in messages[1] and "2 requests answered 429" in messages[1]


# -- what a refusal says ------------------------------------------------------------------


def test_refusals_name_neither_the_token_nor_its_role(
    station: Running, caplog: pytest.LogCaptureFixture
) -> None:
    r = station.post({"type": "void"}, "dealer")
    assert r.status_code == 403 and r.json() == {"detail": HIGHER_ROLE}
    r = station.post({"type": "shoe"}, "viewer")
    assert r.status_code == 403 and r.json() == {"detail": HIGHER_ROLE}
    r = httpx.get(f"{station.url}/api/state", headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401 and r.json() == {"detail": NOT_VALID}
    assert "test-dealer (dealer)" in caplog.text and "supervisor role" in caplog.text


# -- what a body cannot override ----------------------------------------------------------


def test_a_body_cannot_pass_for_the_station_in_the_journal_or_its_export(
    station: Running,
) -> None:
    forged = {
        "actor": "supervisor",
        "source": "reader",
        "seq": 1,
        "ts": "2020-01-01T00:00:00Z",
        "kind": "notice",
        "hash": "0" * 64,
    }
    before = rows(station)
    for key, value in forged.items():  # a row's own fields: the station's, never a body's
        r = station.post({"type": "shoe", key: value}, "dealer")
        assert r.status_code == 422 and "reserved" in r.json()["detail"], key
    assert rows(station) == before  # none journaled
    sent = {"type": "shoe", "raw": "ff00", "note": {"by": "supervisor"}}
    seq = station.post(sent, "dealer").json()["seq"]
    row = rows(station)[-1]
    assert row["seq"] == seq and row["source"] == "api" and row["actor"] == "test-dealer"
    assert row["event"] == sent  # the body is journaled as sent, inside `event`
    export = httpx.get(f"{station.url}/api/export", headers=station.headers("viewer"))
    assert export.headers["content-type"] == "application/x-ndjson"
    line = orjson.loads(export.content.splitlines()[-1])
    assert line["journal"] == {
        "seq": seq,
        "ts": row["ts"],
        "source": "api",
        "actor": "test-dealer",
    }
    assert line["verdict"]["ok"] is True
    assert {k: line[k] for k in sent} == sent  # the event's own keys, as sent
    for key in ("journal", "verdict"):  # the keys the export adds cannot come in a body
        r = station.post({"type": "close_bets", key: {"seq": 99}}, "dealer")
        assert r.status_code == 422 and "reserved" in r.json()["detail"]


def test_the_schema_says_the_reserved_keys_are_refused(station: Running) -> None:
    """A schema-driven client (schemathesis once sent `ts` as an extra key and got the
    422 the schema did not announce) reads that a row's own keys cannot come in a body."""
    document = httpx.get(f"{station.url}/api/openapi.json").json()
    schemas = document["components"]["schemas"]
    body = document["paths"]["/api/events"]["post"]["requestBody"]["content"]
    events = [ref["$ref"].rsplit("/", 1)[1] for ref in body["application/json"]["schema"]["oneOf"]]
    assert len(events) == len(EVENT_TYPES)
    for name in events:
        assert schemas[name]["propertyNames"] == {"not": {"enum": list(RESERVED)}}, name
        assert not set(schemas[name]["properties"]) & set(RESERVED)  # no field of its own


def test_the_summary_is_written_when_the_window_ends_without_another_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    throttle = Throttle(limit=2, window=0.05)

    async def attack_then_wait() -> None:
        for _ in range(3):
            throttle.unknown_token("10.0.0.7", "refused GET /api/state from 10.0.0.7")
        assert throttle.retry_after("10.0.0.7") == 1
        await asyncio.sleep(0.2)  # the address never comes back

    caplog.set_level("INFO", logger="station.api")
    asyncio.run(attack_then_wait())
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2 and "10.0.0.7: 3 tokens that are not valid" in messages[1]
    assert throttle.retry_after("10.0.0.7") is None


# -- the throttle behind a reverse proxy ----------------------------------------------------


def wrong_tokens(client: httpx.Client, url: str, forwarded_for: str, count: int) -> list[int]:
    """The statuses of `count` requests with unknown tokens, each saying (in
    X-Forwarded-For) that it comes from `forwarded_for`."""
    return [
        client.get(
            f"{url}/api/state",
            headers={"Authorization": f"Bearer guess-{n}", "X-Forwarded-For": forwarded_for},
        ).status_code
        for n in range(count)
    ]


def test_clients_behind_a_trusted_proxy_are_throttled_separately(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="station.api")
    config, tokens = make_config(tmp_path, trusted_proxies=("127.0.0.1",))
    with serve(config, tokens) as live, from_address("127.0.0.1") as proxy:
        assert wrong_tokens(proxy, live.url, "203.0.113.7", 11) == [401] * 10 + [429]
        assert wrong_tokens(proxy, live.url, "203.0.113.8", 1) == [401]  # another client
        # a chain of proxies: the client is the last address not trusted
        assert wrong_tokens(proxy, live.url, "198.51.100.1, 203.0.113.9", 1) == [401]
        assert wrong_tokens(proxy, live.url, "198.51.100.1, 203.0.113.7", 1) == [429]
    assert "from 203.0.113.7" in caplog.text and "from 127.0.0.1" not in caplog.text


def test_x_forwarded_for_from_an_address_not_trusted_is_ignored(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, trusted_proxies=("127.0.0.1",))
    with serve(config, tokens) as live, from_address("127.0.0.2") as client:
        assert wrong_tokens(client, live.url, "203.0.113.7", 10) == [401] * 10
        assert wrong_tokens(client, live.url, "203.0.113.8", 1) == [429]  # same address


def test_x_forwarded_for_is_ignored_when_no_proxy_is_trusted(tmp_path: Path) -> None:
    """The default, even from 127.0.0.1 (which uvicorn would believe by default)."""
    config, tokens = make_config(tmp_path)
    with serve(config, tokens) as live, from_address("127.0.0.1") as client:
        assert wrong_tokens(client, live.url, "203.0.113.7", 10) == [401] * 10
        assert wrong_tokens(client, live.url, "203.0.113.8", 1) == [429]
