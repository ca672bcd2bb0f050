"""`/api/docs` works with no internet: Swagger UI from the station's own files, under the
dashboard's Content-Security-Policy."""

from __future__ import annotations

from playwright.sync_api import Page, Route

from tests.service.kit import Running


def test_api_docs_render_offline_under_the_csp(page: Page, station: Running) -> None:
    outside: list[str] = []
    refused: list[str] = []

    def only_the_station(route: Route) -> None:
        if route.request.url.startswith(station.url):
            route.continue_()
        else:  # a CDN, or anything else on the internet: a casino network has none
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_station)
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    page.goto(f"{station.url}/api/docs")
    page.wait_for_selector("#swagger-ui .opblock-summary-path")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/events" in paths and "/api/state" in paths and "/api/ready" in paths
    assert outside == []
    assert [r for r in refused if "script" in r] == []  # no script runs but the station's
