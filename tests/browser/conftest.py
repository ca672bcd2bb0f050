"""Chromium (Debian's, driven by Playwright) against a real station on 127.0.0.1.

The browser is launched once per test module (a second or two; module scope, so that
Playwright's event loop is gone before other tests call `asyncio.run`); each test gets a fresh
station (its own journal) and a fresh browser context (its own sessionStorage).
Playwright's own browser download does not work here, so the tests need
`/usr/bin/chromium` (`make install` installs it); without it they fail and say so,
unless STATION_SKIP_BROWSER=1 asks to skip them on a machine that cannot have it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.service.kit import Running

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 10_000


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("STATION_SKIP_BROWSER") == "1":
            pytest.skip("no Chromium and STATION_SKIP_BROWSER=1")
        pytest.fail(f"{CHROMIUM} is missing: run `make install` (apt-get install chromium)")
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    yield browser
    browser.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    yield context
    context.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    assert errors == [], f"errors in the page: {errors}"


@pytest.fixture
def station(live: Running) -> Running:
    """The browser tests' name for the root conftest's `live` station (no reader, the test
    is the rig, reads need a token)."""
    return live
