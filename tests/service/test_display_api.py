"""The table display's data against a live station (issue 26): `GET /api/display` and `WS
/api/display/live` to a `display` token (or any higher, or none with `[display] public`),
a payload inside the allow-list at once and after each change only, a sign of life when
the table is quiet; a display token reads nothing else; `[display]` in the config."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

import station.api.display
from station.cli import main
from station.live.config import ConfigError, load
from station.shared.tokens import read_token_file, write_token_file
from tests.display_payload import check_message, check_payload
from tests.displaykit import deal, display_config, display_data, shoe_events
from tests.service.kit import Running, serve

pytestmark = pytest.mark.server


def feed(live: Running, token: str | None = None, **headers: str) -> ClientConnection:
    query = f"?token={token}" if token else ""
    url = live.url.replace("http://", "ws://") + f"/api/display/live{query}"
    return connect(url, additional_headers=headers, open_timeout=5)


def message(ws: ClientConnection, timeout: float = 5) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(ws.recv(timeout=timeout))
    check_message(data)
    return data


def test_a_display_token_reads_the_display(tmp_path: Path) -> None:
    config, tokens = display_config(tmp_path)
    with serve(config, tokens) as live:
        data = display_data(live, "display")
        check_payload(data)
        assert data["table"] == "Table 7" and data["game"] == "punto_banco"
        assert data["status"] == "shuffling" and data["shoe"] == 0 and data["last"] is None
        assert [limit["bet"] for limit in data["limits"]] == [
            "banker",
            "player",
            "tie",
            "banker_pair",
            "player_pair",
        ]
        assert data["currency"] == "EUR" and data["language"] == "en"
        for role in ("viewer", "dealer", "supervisor"):  # every role above may read it
            assert display_data(live, role) == data
        assert httpx.get(f"{live.url}/api/display").status_code == 401
        wrong = {"Authorization": "Bearer not-a-token"}
        assert httpx.get(f"{live.url}/api/display", headers=wrong).status_code == 401
        page = httpx.get(f"{live.url}/display")  # the page itself is a file, like "/"
        assert page.status_code == 200 and 'src="/web/display.js"' in page.text


def test_the_table_name_is_the_tables_id_unless_named(tmp_path: Path) -> None:
    config, tokens = display_config(tmp_path, name="")
    with serve(config, tokens) as live:
        assert display_data(live)["table"] == "t-test"


def test_a_public_display_needs_no_token(tmp_path: Path) -> None:
    config, tokens = display_config(tmp_path, public=True)
    with serve(config, tokens) as live:
        check_payload(display_data(live, None))
        with feed(live) as ws:
            assert message(ws)["type"] == "display"
        # the rest of the station is as private as before
        assert httpx.get(f"{live.url}/api/state").status_code == 401
        assert httpx.get(f"{live.url}/api/history").status_code == 401


def read_routes(live: Running) -> list[str]:
    """Every GET of the station's API (its OpenAPI document) but the display's own."""
    paths = httpx.get(f"{live.url}/api/openapi.json").json()["paths"]
    return sorted(p for p, ops in paths.items() if "get" in ops and p != "/api/display")


def test_a_display_token_reads_nothing_else(tmp_path: Path) -> None:
    """Every route answers a display token as it answers no token at all (a refusal, or
    what anyone may read), but for /api/whoami naming the token itself."""
    config, tokens = display_config(tmp_path)
    with serve(config, tokens) as live:
        deal(live, shoe_events("punto_banco", 3), 3)
        display = live.headers("display")
        routes = read_routes(live)
        assert {"/api/state", "/api/history", "/api/odds", "/api/journal", "/metrics"} <= set(
            routes
        )
        for path in routes:
            anonymous = httpx.get(f"{live.url}{path}")
            answer = httpx.get(f"{live.url}{path}", headers=display)
            if anonymous.status_code in (401, 403):
                assert answer.status_code == 403, (path, answer.text)
                assert "higher role" in answer.json()["detail"]
            elif path == "/api/whoami":
                assert answer.json() == {
                    **anonymous.json(),
                    "name": "test-display",
                    "role": "display",
                    "acts_as": "display",
                }
            else:  # health, readiness, the explanations, the API's own document
                assert answer.status_code == anonymous.status_code == 200, path
                assert answer.headers["content-type"] == anonymous.headers["content-type"]
        for event in ({"type": "close_bets"}, {"type": "void"}, {"type": "card", "card": "AS"}):
            refused = httpx.post(f"{live.url}/api/events", json=event, headers=display)
            assert refused.status_code == 403, event
        with (
            pytest.raises(ConnectionClosed) as closed,
            connect(f"{live.ws_url}?token={tokens['display']}", open_timeout=5) as ws,
        ):
            ws.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


def test_the_socket_sends_the_payload_then_each_change_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(station.api.display, "KEEPALIVE", 0.4)
    config, tokens = display_config(tmp_path)
    with serve(config, tokens) as live, feed(live, tokens["display"]) as ws:
        assert message(ws)["display"]["status"] == "shuffling"
        assert message(ws) == {"type": "alive"}  # a quiet table: a sign of life
        live.post({"type": "shoe"}, "dealer")
        assert message(ws)["display"]["status"] == "new_shoe"
        live.post({"type": "resume"}, "supervisor")  # refused (not suspended): no change
        assert message(ws) == {"type": "alive"}
        events = shoe_events("punto_banco", 4)
        next(events)  # the shoe, sent above
        assert deal(live, events, 5) == 5
        payloads = []
        while (m := message(ws))["type"] == "display":
            payloads.append(m["display"])
        # one payload a change, never the same one twice in a row
        assert all(a != b for a, b in itertools.pairwise(payloads))
        statuses = [p["status"] for p in payloads]
        assert {"betting_open", "no_more_bets", "dealing"} <= set(statuses)
        assert payloads[-1] == display_data(live)
        assert payloads[-1]["last"]["round"] == payloads[-1]["counts"]["rounds"] == 5


def test_a_revoked_display_token_loses_its_screen(tmp_path: Path) -> None:
    config, tokens = display_config(tmp_path)
    kept = config.api.tokens
    # the display's token from the token file, so that it can be revoked
    file_entries = [e for e in kept if e.role == "display"]
    config = config.model_copy(
        update={
            "api": config.api.model_copy(
                update={"tokens": tuple(e for e in kept if e.role != "display")}
            )
        }
    )
    write_token_file(config.api.token_file, file_entries)
    with serve(config, tokens) as live, feed(live, tokens["display"]) as ws:
        assert message(ws)["type"] == "display"
        write_token_file(config.api.token_file, [])
        revoked = time.monotonic()
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                ws.recv(timeout=3)
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "the token was revoked")
        assert time.monotonic() - revoked < 1.5


def test_a_page_of_another_site_cannot_open_the_feed(tmp_path: Path) -> None:
    config, tokens = display_config(tmp_path)
    with serve(config, tokens) as live:
        with (
            pytest.raises(ConnectionClosed) as closed,
            feed(live, tokens["display"], Origin="https://evil.example") as ws,
        ):
            ws.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        own = live.url
        with feed(live, tokens["display"], Origin=own) as ws:
            assert message(ws)["type"] == "display"
        with pytest.raises(ConnectionClosed) as closed, feed(live) as ws:  # no token
            ws.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


def test_token_add_makes_display_tokens(tmp_path: Path) -> None:
    config = tmp_path / "station.toml"
    config.write_text('[api]\ntoken_file = "tokens.toml"\n')
    argv = ["token", "add", "--role", "display", "--name", "screen-7", "--config", str(config)]
    assert main(argv) == 0
    (entry,) = read_token_file(load(config).api.token_file)
    assert (entry.name, entry.role) == ("screen-7", "display")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "station.toml"
    path.write_text(text)
    return path


def test_the_display_section_loads(tmp_path: Path) -> None:
    config = load(
        write(
            tmp_path,
            "[display]\npublic = true\nname = 'Salon privé 3'\nlanguage = 'zh-Hant'\n"
            "locale = 'zh-HK'\ncurrency = 'HKD'\nannounce = 6.0\n"
            "limits = [{bet = 'banker', min = 100, max = 50000}, "
            "{bet = 'dragon_7', label = 'Dragon 7', min = 10, max = 1000}]\n",
        )
    )
    display = config.display
    assert display.public and display.language == "zh-Hant" and display.currency == "HKD"
    assert [(lim.bet, lim.label, lim.min, lim.max) for lim in display.limits] == [
        ("banker", "", 100, 50_000),
        ("dragon_7", "Dragon 7", 10, 1_000),
    ]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("language = 'de'", "[display] language: must be one of en, fr, zh-Hant, zh-Hans"),
        ("currency = 'euro'", "[display] currency: must be an ISO 4217 code"),
        ("locale = 'french please'", "[display] locale: must be a BCP 47 tag"),
        ("announce = 60.0", "[display] announce"),
        ("limits = [{bet = 'tie', min = 500, max = 100}]", "max: must be at least min (500)"),
        ("limits = [{bet = 'dragon_7', min = 1, max = 100}]", "'dragon_7' has no words"),
        ("limits = [{bet = 'tie', min = -1, max = 100}]", "min"),
        ("limits = [" + ", ".join(["{bet = 'tie', min = 1, max = 2}"] * 7) + "]", "at most 6"),
        ("colour = 'red'", "[display] colour: unknown key"),
    ],
)
def test_display_errors_name_the_key(tmp_path: Path, text: str, words: str) -> None:
    path = write(tmp_path, f"[display]\n{text}\n")
    with pytest.raises(ConfigError) as err:
        load(path)
    assert words in str(err.value)
