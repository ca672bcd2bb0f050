"""The HTTP and WebSocket API against a real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from station.api.auth import HIGHER_ROLE, MISSING, NOT_VALID
from station.core.table import Table
from station.live.journal import Journal
from tests.readerkit import SwitchReader
from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server

ROUND = [
    {"type": "shoe"},
    {"type": "card", "card": "2H"},
    {"type": "card", "card": "KS"},
    {"type": "card", "card": "QD"},
    {"type": "close_bets"},
    {"type": "card", "card": "9S"},
    {"type": "card", "card": "2D"},
    {"type": "card", "card": "KH"},
    {"type": "card", "card": "5C"},
]


def test_post_answers_the_verdict(live: Running) -> None:
    answers = [live.post(e).json() for e in ROUND]
    assert [a["seq"] for a in answers] == list(range(3, 3 + len(ROUND)))  # 1: created, 2: restart
    assert [a["role"] for a in answers[1:4]] == ["burn_reveal", "burn", "burn"]
    assert answers[4]["round"] == 1
    last = answers[-1]
    assert last["ok"] and last["role"] == "B2" and last["result"]["winner"] == "player"
    assert set(last) == {"seq", "ok", "error", "role", "round", "result", "voided_round"}


def test_errors_are_answered_200_and_suspend(live: Running) -> None:
    live.post({"type": "shoe"}, "dealer")
    r = live.post({"type": "card", "card": None, "raw": "4e52"})
    assert r.status_code == 200
    assert r.json()["error"] == "UNREADABLE_CARD"
    assert live.post({"type": "shoe"}, "dealer").json()["error"] == "SHOE_ACTIVE"
    state = httpx.get(f"{live.url}/api/state", headers=live.headers("viewer")).json()
    assert state["suspended"] and state["suspension"]["code"] == "UNREADABLE_CARD"
    assert state["suspension"]["since_seq"] == 4
    resumed = live.post({"type": "resume", "card": "7H"}, "supervisor").json()
    assert resumed["ok"] and resumed["role"] == "burn_reveal"


@pytest.mark.parametrize(
    ("headers", "status", "words"),
    [
        ({}, 401, "a token is needed"),
        ({"Authorization": "Bearer nope"}, 401, "the token is not valid"),
        ({"Authorization": "Basic abc"}, 401, "the token is not valid"),
    ],
)
def test_401(live: Running, headers: dict[str, str], status: int, words: str) -> None:
    r = httpx.post(f"{live.url}/api/events", json={"type": "shoe"}, headers=headers)
    assert r.status_code == status
    assert words in r.json()["detail"]
    assert r.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    ("role", "event"),
    [
        ("viewer", {"type": "shoe"}),
        ("dealer", {"type": "resume"}),
        ("dealer", {"type": "void"}),
        ("dealer", {"type": "card", "card": "AS"}),
        ("supervisor", {"type": "cut"}),
        ("supervisor", {"type": "fault", "detail": "x"}),
        ("rig", {"type": "restart"}),
    ],
)
def test_403_wrong_role(live: Running, role: str, event: dict[str, Any]) -> None:
    r = live.post(event, role)
    assert r.status_code == 403, r.text


def test_rig_is_off_unless_configured(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    config, tokens = make_config(tmp_path)
    with serve(config, tokens) as running:
        r = running.post({"type": "card", "card": "AS"}, "rig")
        assert r.status_code == 403 and r.json()["detail"] == HIGHER_ROLE
        assert "allow_rig" in caplog.text and "test-rig (rig)" in caplog.text  # the why: logged
        assert running.post({"type": "shoe"}, "supervisor").status_code == 200


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"not json", "not valid JSON"),
        (b"[1, 2]", "one JSON object"),
        (b'{"type": "deal"}', "'type' must be one of"),
        (b'{"card": "AS"}', "'type' must be one of"),
        (b'{"type": "card"}', 'needs a "card" key'),
        (b'{"type": "shoe", "verdict": {}}', "reserved"),
        (b'{"type": "card", "card": NaN}', "not valid JSON"),
    ],
)
def test_422_malformed(live: Running, body: bytes, words: str) -> None:
    headers = {**live.headers("rig"), "Content-Type": "application/json"}
    r = httpx.post(f"{live.url}/api/events", content=body, headers=headers)
    assert r.status_code == 422
    assert words in r.json()["detail"]


def test_refusals_are_not_journaled(live: Running) -> None:
    live.post({"type": "shoe"}, "viewer")
    json_type = {**live.headers("rig"), "Content-Type": "application/json"}
    httpx.post(f"{live.url}/api/events", content=b"{", headers=json_type)
    httpx.post(f"{live.url}/api/events", json={"type": "shoe"})
    rows = httpx.get(f"{live.url}/api/journal", headers=live.headers("viewer")).json()["events"]
    assert [r["event"]["type"] for r in rows] == ["notice", "restart"]


def test_reads_need_a_token_unless_public(live: Running, tmp_path: Path) -> None:
    assert httpx.get(f"{live.url}/api/state").status_code == 401
    assert httpx.get(f"{live.url}/api/journal").status_code == 401
    assert httpx.get(f"{live.url}/api/state", headers=live.headers("viewer")).status_code == 200
    config, tokens = make_config(tmp_path / "public", public_read=True)
    with serve(config, tokens) as public:
        assert httpx.get(f"{public.url}/api/state").status_code == 200
        assert httpx.get(f"{public.url}/api/journal").status_code == 200
        schema = httpx.get(f"{public.url}/api/openapi.json").json()["paths"]
    private = httpx.get(f"{live.url}/api/openapi.json").json()["paths"]
    # the schema says so: a read's token is optional (an empty requirement) when public
    assert schema["/api/state"]["get"]["security"] == [{"bearer": []}, {}]
    assert private["/api/state"]["get"]["security"] == [{"bearer": []}]
    assert schema["/api/events"]["post"]["security"] == [{"bearer": []}]


def test_state_shows_the_table(live: Running) -> None:
    for e in ROUND[:7]:
        live.post(e)
    state = httpx.get(f"{live.url}/api/state", headers=live.headers("viewer")).json()
    assert state["in_play"] and state["cards_out"] == 5
    assert state["burned"] == ["2H", "KS", "QD"]
    assert state["round"] == {"number": 1, "player": ["9S"], "banker": ["2D"], "due": "P2"}
    assert state["due"] == "P2" and state["expecting"] == "player second card"
    assert state["suspension"] is None and state["last_result"] is None
    assert state["reader"]["driver"] == "none"
    assert state["seq"] == 9


def test_journal_paging(live: Running) -> None:
    for e in ROUND:
        live.post(e)
    url, h = f"{live.url}/api/journal", live.headers("viewer")
    page = httpx.get(url, params={"after": 0, "limit": 4}, headers=h).json()["events"]
    assert [r["seq"] for r in page] == [1, 2, 3, 4]
    rest = httpx.get(url, params={"after": 4, "limit": 1000}, headers=h).json()["events"]
    assert [r["seq"] for r in rest] == list(range(5, 12))
    row = rest[-1]
    assert set(row) == {"seq", "ts", "source", "actor", "event", "verdict"}
    assert (row["source"], row["actor"]) == ("api", "test-rig")
    assert row["verdict"]["seq"] == 11 and row["verdict"]["role"] == "B2"
    assert httpx.get(url, params={"limit": 0}, headers=h).status_code == 422
    assert httpx.get(url, params={"after": -1}, headers=h).status_code == 422


def test_websocket_streams_rows_then_state(live: Running) -> None:
    with connect(f"{live.ws_url}?token={live.tokens['viewer']}") as ws:
        hello = json.loads(ws.recv(5))
        assert hello["type"] == "hello" and hello["seq"] == 2
        for e in ROUND:
            live.post(e)
        messages = []
        while len([m for m in messages if m["type"] == "row"]) < len(ROUND):
            messages.append(json.loads(ws.recv(5)))
        rows = [m for m in messages if m["type"] == "row"]
        assert [r["seq"] for r in rows] == list(range(3, 3 + len(ROUND)))
        assert messages[0]["type"] == "row"
        assert rows[-1]["verdict"]["result"]["winner"] == "player"
        # after each row comes the state it leads to (one per committed batch)
        last_state = json.loads(ws.recv(5))
        assert last_state["type"] == "state" and last_state["state"]["seq"] == 11


def next_state(ws: Any) -> dict[str, Any]:
    """The next `state` message's state (rows before it skipped)."""
    while True:
        message = json.loads(ws.recv(5))
        if message["type"] == "state":
            state: dict[str, Any] = message["state"]
            return state


def test_every_state_message_carries_the_readers_status(tmp_path: Path) -> None:
    """The dashboard's reader field is live: the hello, the state after each commit and
    the state after a reader's notice (no table event) all carry `reader`, read then."""
    config, tokens = make_config(tmp_path, allow_rig=True)
    reader = SwitchReader()
    with (
        serve(config, tokens, reader) as live,
        connect(f"{live.ws_url}?token={live.tokens['viewer']}") as ws,
    ):
        hello = json.loads(ws.recv(5))
        assert hello["state"]["reader"] == reader.status()
        assert hello["state"]["reader"]["connected"] is True
        for e in ROUND[:6]:
            live.post(e)
        assert next_state(ws)["reader"]["connected"] is True
        reader.drop()
        live.post({"type": "fault", "detail": "the shoe went quiet"})
        state = next_state(ws)
        while state["suspension"] is None:  # a batch before the fault
            state = next_state(ws)
        assert state["suspension"]["code"] == "SCANNER_FAULT"
        assert state["reader"] == {
            "driver": "switch",
            "connected": False,
            "detail": "lost: the cable was pulled",
        }
        api = httpx.get(f"{live.url}/api/state", headers=live.headers("viewer")).json()
        assert api["reader"]["connected"] is False
        reader.reconnect()  # a notice, not a table event: its state says so too
        row = json.loads(ws.recv(5))
        assert row["type"] == "row" and row["event"]["type"] == "notice"
        state = next_state(ws)
        assert state["reader"]["connected"] is True and state["suspension"] is not None


def test_websocket_backfills_after(live: Running) -> None:
    for e in ROUND[:3]:
        live.post(e)
    with connect(live.ws_url, additional_headers=live.headers("viewer")) as ws:
        pass
    with connect(f"{live.ws_url}?after=1&token={live.tokens['viewer']}") as ws:
        assert json.loads(ws.recv(5))["type"] == "hello"
        assert [json.loads(ws.recv(5))["seq"] for _ in range(4)] == [2, 3, 4, 5]


def test_websocket_needs_a_token(live: Running) -> None:
    """Refused as the manual says: accepted, then closed with 1008 and the reason (which
    a page's script can read; an HTTP status of the handshake it cannot)."""
    for url, reason in ((live.ws_url, MISSING), (f"{live.ws_url}?token=bad", NOT_VALID)):
        with connect(url) as ws, pytest.raises(ConnectionClosed) as closed:
            ws.recv(2)
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, reason)


def test_503_until_ready(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path)
    (tmp_path / "journal.db").mkdir()  # the journal cannot be opened: never ready
    with serve(config, tokens, wait_ready=False) as running:
        import time

        deadline = time.monotonic() + 5
        while running.station.fatal is None and time.monotonic() < deadline:
            time.sleep(0.01)
        r = running.post({"type": "shoe"}, "dealer")
        assert r.status_code == 503
        assert "cannot open the journal" in r.json()["detail"]
        assert httpx.get(f"{running.url}/api/state").status_code == 503


def test_restart_replays_the_journal_and_suspends(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, allow_rig=True)
    with serve(config, tokens) as first:
        for e in ROUND[:7]:
            first.post(e)
        before = httpx.get(f"{first.url}/api/state", headers=first.headers("viewer")).json()
    with serve(config, tokens) as second:
        after = httpx.get(f"{second.url}/api/state", headers=second.headers("viewer")).json()
        assert after["suspension"]["code"] == "STATION_RESTART"
        assert after["seq"] == before["seq"] + 1
        for key in ("cards_out", "burned", "round", "rounds_opened", "in_play"):
            assert after[key] == before[key]
        # the restart row is committed before the station says it is ready
        rows = httpx.get(
            f"{second.url}/api/journal",
            params={"after": before["seq"]},
            headers=second.headers("viewer"),
        ).json()["events"]
        assert [r["event"]["type"] for r in rows] == ["restart"]
        assert rows[0]["verdict"]["error"] == "STATION_RESTART"
        assert second.post({"type": "resume"}, "supervisor").json()["ok"]
        assert second.post({"type": "card", "card": "KH"}).json()["role"] == "P2"
    table = Table()
    with Journal(config.journal.path) as journal:
        journal.replay_into(table)
        assert journal.verify().ok
    assert table.round is not None and table.round.player == ["9S", "KH"]
