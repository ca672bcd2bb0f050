"""Query values and paths that once answered 500: every one is now a 4xx."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
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
