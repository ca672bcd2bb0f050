"""What a hostile probe found at the station's doors (issue 25, items 5 to 8), against a
real `station run`: no request answers 500 or leaves a traceback (long paths, odd names,
any query); HEAD is answered wherever GET is; the log cannot be forged (a client's line
break is written escaped, and the row's own fields cannot come in a body); and with
`public_read` on, only the station's own names are answered (DNS rebinding), a WebSocket
refused as the manual says."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import orjson
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from station.api.events import RESERVED
from tests.hostile import (
    CORPUS,
    LINE,
    ODD_QUERIES,
    assert_quiet,
    head_is_get,
    refused_without_500,
    send,
)
from tests.service.kit import Running, make_config, serve
from tests.service.stationkit import running, write_config

pytestmark = pytest.mark.server

FORGED = "WARNING station.table: t-test row 9: RESUMED by pit-boss-alice"


def test_no_request_is_a_500_and_the_log_stays_quiet(tmp_path: Path) -> None:
    config, tokens = write_config(tmp_path)
    with running(config, tokens) as station:
        statuses = refused_without_500(station.url)
        assert statuses.count(404) >= 10
        for target in ODD_QUERIES:  # answered, the parameters ignored
            assert send(station.url, "GET", target) == 200, target[:80]
        # A seq past SQLite's integers, and other odd queries: a 422 naming it.
        viewer = station.headers("viewer")
        for query in ("after=9223372036854775808", "after=-1", "limit=10001", "after=1e3"):
            answer = httpx.get(f"{station.url}/api/journal?{query}", headers=viewer)
            assert answer.status_code == 422, (query, answer.text)
        assert httpx.get(f"{station.url}/api/health").status_code == 200
    assert_quiet(station.log_text(), requests=len(CORPUS) + len(ODD_QUERIES) + 4)


def test_head_is_answered_wherever_get_is(live: Running) -> None:
    for path in ("/", "/api/health", "/api/ready", "/web/app.js", "/api/explanations"):
        head_is_get(live.url, path)
    head_is_get(live.url, "/api/state", live.headers("viewer"))
    head_is_get(live.url, "/api/state")  # 401 either way
    assert httpx.head(f"{live.url}/api/events").status_code == 405  # POST only: as GET


def test_a_clients_line_break_cannot_forge_a_log_line(tmp_path: Path) -> None:
    """A dealer's event key, a URL's %0A: written escaped, inside the one line."""
    config, tokens = write_config(tmp_path)
    with running(config, tokens, log_level="info") as station:
        event = {"type": "close_bets", f"x\n{FORGED}": 1}  # no shoe: refused, and logged
        answer = httpx.post(
            f"{station.url}/api/events", json=event, headers=station.headers("dealer")
        )
        assert answer.status_code == 200 and answer.json()["error"] == "NO_ACTIVE_SHOE"
        assert send(station.url, "GET", "/web/x%0A" + FORGED.replace(" ", "%20")) == 404
    lines = station.log_text().splitlines()
    assert all(LINE.match(line) for line in lines), [x for x in lines if not LINE.match(x)]
    forged = [x for x in lines if FORGED in x]  # the URL's is quoted by uvicorn itself
    assert len(forged) == 1 and "\\n" + FORGED in forged[0], forged


def test_the_rows_own_fields_cannot_come_in_a_body(live: Running) -> None:
    """`actor`, `source`, `seq`, `ts` and every other field the journal gives a row (and
    `journal`, which the export adds): 422, nothing journaled."""
    assert {"actor", "source", "seq", "ts", "kind", "hash", "prev_hash", "journal"} <= set(RESERVED)
    before = httpx.get(f"{live.url}/api/journal", headers=live.headers("viewer")).json()
    for key in RESERVED:
        answer = live.post({"type": "shoe", key: "pit-boss-alice"}, "dealer")
        assert answer.status_code == 422, key
        assert f"the key {key!r} is reserved" in answer.json()["detail"]
    after = httpx.get(f"{live.url}/api/journal", headers=live.headers("viewer")).json()
    assert after == before


# -- the Host header, with public_read on (DNS rebinding) ---------------------------------


def test_with_public_read_only_the_stations_own_names_are_answered(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, public_read=True, allowed_hosts=("table-1.pit.example",))
    with serve(config, tokens) as live:
        port = live.url.rpartition(":")[2]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "[::1]:8000", "10.0.5.11"):
            answer = httpx.get(f"{live.url}/api/state", headers={"Host": host})
            assert answer.status_code == 200, host
        for host in ("table-1.pit.example", "TABLE-1.pit.example:443"):
            assert httpx.get(f"{live.url}/api/state", headers={"Host": host}).status_code == 200
        for host in ("evil.example", f"evil.example:{port}", "table-1.pit.example.evil", ""):
            answer = httpx.get(f"{live.url}/api/state", headers={"Host": host})
            assert answer.status_code == 400, host
            assert "[api] allowed_hosts" in answer.json()["detail"]
        assert send(live.url, "HEAD", "/", {"Host": "evil.example"}) == 400
        sock = socket.create_connection(("127.0.0.1", int(port)))
        evil = f"ws://evil.example:{port}/api/live"  # the name a rebound page uses
        with connect(evil, sock=sock) as ws, pytest.raises(ConnectionClosed) as refused:
            ws.recv(5)
        assert refused.value.rcvd is not None and refused.value.rcvd.code == 1008
        assert "allowed_hosts" in refused.value.rcvd.reason
        with connect(live.ws_url) as ws:  # its own address: served, no token needed
            assert orjson.loads(ws.recv(5))["type"] == "hello"


def test_without_public_read_any_host_may_ask_with_a_token(live: Running) -> None:
    """A page of another site has no token: the name it uses is not checked."""
    headers = {**live.headers("viewer"), "Host": "table-1.local:8000"}
    assert httpx.get(f"{live.url}/api/state", headers=headers).status_code == 200


def test_a_station_still_starting_closes_the_websocket_with_1013(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path)
    config.journal.path.mkdir()  # a folder: the journal cannot be opened, never ready
    with serve(config, tokens, wait_ready=False) as live:
        url = f"{live.ws_url}?token={live.tokens['viewer']}"
        with connect(url) as ws, pytest.raises(ConnectionClosed) as refused:
            ws.recv(5)
    assert refused.value.rcvd is not None and refused.value.rcvd.code == 1013
