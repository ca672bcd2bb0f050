"""`station report`'s HTML page as a manager reads it: times in the station's zone to the
second, one style; tables that scroll in their box on a phone; charts whose words fit."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from station.commands.report import bar_chart, text_width
from tests.conftest import run_station
from tests.protection.test_report import write_journal


@pytest.fixture
def paris(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The station's machine in Paris (UTC+01:00 in December)."""
    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def page(tmp_path: Path) -> str:
    write_journal(tmp_path / "journal.db")
    out = tmp_path / "report.html"
    assert (
        run_station("report", "--journal", str(tmp_path / "journal.db"), "-o", str(out)).returncode
        == 0
    )
    return out.read_text()


def test_times_are_local_to_the_second_in_one_style(tmp_path: Path, paris: None) -> None:
    html = page(tmp_path)
    assert "times are CET (UTC+01:00)" in html
    assert "2026-12-01 11:00:00 to 11:01:50" in html  # the journal's 10:00:00Z to 10:01:50Z
    assert "<td>2026-12-01 11:00:00</td>" in html  # the shoe's start
    assert not re.search(r"\d\.\d{4,}|\+00:00|\d{2}:\d{2}:\d{2}Z|T\d{2}:", html)


def test_the_page_fits_a_phone(tmp_path: Path) -> None:
    html = page(tmp_path)
    assert "<meta name='viewport' content='width=device-width, initial-scale=1'>" in html
    tables = html.count("<table>")
    assert tables and html.count("<div class='wide'><table>") == tables  # scrolled in a box
    charts = re.findall(r"<svg [^>]*>", html)  # drawn to scale, not at a fixed width
    assert charts and all("viewBox=" in svg and " width=" not in svg for svg in charts)


def test_a_chart_is_as_wide_as_its_words() -> None:
    """The longest name and the largest figure fit inside the drawing (no `463.2 rounds/|`)."""
    svg = bar_chart("Suspensions per 100 rounds, by cause", [("unreadable card", 463.25), ("x", 1)])
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg)[1])  # type: ignore[index]
    ends = [
        float(x) + text_width(words)
        for x, words in re.findall(r'<text x="([\d.]+)" y="\d+" font-size="12">([^<]+)<', svg)
    ]
    assert ends and max(ends) <= width
    assert "463.25</text>" in svg
