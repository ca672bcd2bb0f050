"""Query values and paths that once answered 500: every one is now a 4xx."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import orjson
import pytest

from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    config, tokens = make_config(tmp_path_factory.mktemp("hostile"))
    with serve(config, tokens) as running:
        yield running


@pytest.mark.parametrize(
    "query",
    [
        "after=9223372036854775808",
        "after=-1",
        "after=1e3",
        "after=x",
        "limit=0",
        "limit=1001",
        "after=99999999999999999999999999999",
    ],
)
def test_bad_journal_queries_are_422(live: Running, query: str) -> None:
    r = httpx.get(f"{live.url}/api/journal?{query}", headers=live.headers("viewer"))
    assert r.status_code == 422, r.text


def test_the_largest_seq_is_answered(live: Running) -> None:
    r = httpx.get(
        f"{live.url}/api/journal?after=9223372036854775807", headers=live.headers("viewer")
    )
    assert r.status_code == 200 and r.json() == {"events": []}


@pytest.mark.parametrize("path", ["/web/%00", "/web/app.js%00.html", "/web/..%2f..%2fetc/passwd"])
def test_odd_dashboard_paths_are_404(live: Running, path: str) -> None:
    r = httpx.get(f"{live.url}{path}")
    assert r.status_code == 404, r.text


#: Values no integer or paytable parameter takes.
BAD_VALUES = [
    "-1",
    "-9223372036854775809",
    "9223372036854775808",
    "1" * 400,
    "NaN",
    "nan",
    "Infinity",
    "-inf",
    "1e3",
    "0x10",
    "1.5",
    "",
    " ",
    "%00",
    "%F0%9F%82%A1",  # a playing card, in UTF-8
    "%C3%A9",
    "%FF%FE",  # not UTF-8 at all
    "x" * 10_000,
]
#: Every query parameter of every route, with one value it takes.
PARAMETERS = [
    ("/api/journal", "after", "0"),
    ("/api/journal", "limit", "5"),
    ("/api/export", "after", "0"),
    ("/api/odds", "paytable", "traditional"),
]


@pytest.mark.parametrize(("path", "name", "good"), PARAMETERS)
@pytest.mark.parametrize("value", BAD_VALUES)
def test_every_bad_query_value_is_422(
    live: Running, path: str, name: str, good: str, value: str
) -> None:
    r = httpx.get(f"{live.url}{path}?{name}={value}", headers=live.headers("viewer"))
    assert r.status_code == 422, (path, name, value, r.status_code, r.text[:200])
    assert r.json()["detail"][0]["loc"] == ["query", name]


@pytest.mark.parametrize(("path", "name", "good"), PARAMETERS)
def test_a_repeated_parameter_is_refused(live: Running, path: str, name: str, good: str) -> None:
    """Repeated, even with good values: a 422 that names it (not FastAPI's rule, the last
    counts, which schemathesis rightly called accepting a malformed request); once is
    answered."""
    headers = live.headers("viewer")
    for query in (f"{name}=x&{name}={good}", f"{name}={good}&{name}={good}"):
        r = httpx.get(f"{live.url}{path}?{query}", headers=headers)
        assert r.status_code == 422, (query, r.text[:200])
        assert r.json()["detail"][0]["loc"] == ["query", name]
        assert "more than once" in r.json()["detail"][0]["msg"]
    assert httpx.get(f"{live.url}{path}?{name}={good}", headers=headers).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/api/state",
        "/api/journal",
        "/api/history",
        "/api/export",
        "/api/odds",
        "/api/whoami",
        "/api/explanations",
        "/api/health",
        "/api/ready",
    ],
)
@pytest.mark.parametrize(
    "query", ["unknown=1", "token=x", "%00=%00", "a=" + "%F0%9F%82%A1" * 500, "&&&=&", "%ZZ=1"]
)
def test_odd_query_strings_never_answer_500(live: Running, path: str, query: str) -> None:
    r = httpx.get(f"{live.url}{path}?{query}", headers=live.headers("viewer"))
    assert r.status_code < 500, (path, query, r.status_code, r.text[:200])


@pytest.mark.parametrize(
    "value", ["-1", "x", "NaN", "1e3", "", "9" * 400, "%F0%9F%82%A1", "9223372036854775808"]
)
def test_odd_websocket_afters_are_refused_or_answered(live: Running, value: str) -> None:
    """The socket's `after`: not a whole number is close code 1008; any whole number,
    however large or negative, is answered (nothing to catch up on)."""
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.sync.client import connect

    url = f"{live.ws_url}?after={value}&token={live.tokens['viewer']}"
    try:
        with connect(url) as ws:
            assert orjson.loads(ws.recv(5))["type"] == "hello"
            assert value.lstrip("-").isdigit(), value
    except (InvalidStatus, ConnectionClosed):
        assert not value.lstrip("-").isdigit(), value


@pytest.mark.parametrize(
    "header",
    [
        {"Authorization": "Bearer " + "x" * 8000},
        {"Authorization": "Bearer \u00e9t\u00e9".encode()},
        {"Authorization": "Bearer"},
        {"Authorization": "Token abc"},
        {"Content-Type": "application/json; charset"},
        {"Content-Type": ";;;"},
        {"Origin": "null"},
    ],
)
def test_odd_headers_never_answer_500(live: Running, header: dict[str, str | bytes]) -> None:
    """Sent from an address of their own: the wrong tokens throttle it, not the others'."""
    headers: dict[str, str | bytes] = {**live.headers("dealer"), **header}
    transport = httpx.HTTPTransport(local_address="127.0.0.3")
    with httpx.Client(transport=transport, headers=headers) as client:
        post = client.post(f"{live.url}/api/events", content=b'{"type": "close_bets"}')
        read = client.get(f"{live.url}/api/state")
    assert post.status_code < 500 and read.status_code < 500, (post.text, read.text)


def test_schemathesis_s_repeated_hours_is_refused(live: Running) -> None:
    """What schemathesis found on /api/pace: garbage, then a number with a tab."""
    query = "hours=%C2%9FE%C3%99s&hours=1%09"
    r = httpx.get(f"{live.url}/api/pace?{query}", headers=live.headers("viewer"))
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "hours"]
