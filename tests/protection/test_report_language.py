"""`station report --language`: the HTML page in French or Chinese has every word from
the screens' catalogue (no English left), numbers and days as the language writes them;
the JSON stays language-free."""

from __future__ import annotations

import html as htmllib
import json
import re
from pathlib import Path

import pytest

from station.commands.report import number
from station.shared.catalogue import LANGUAGES, catalogue
from tests.conftest import run_station
from tests.protection.test_report import write_journal

#: Words that are data, not the page's: the table's and dealers' names, the journal's
#: path, the program's name, the zone's, a unit (the dealers are the shift's tokens).
DATA = re.compile(
    r"\b(ana|bo|sup|reader)\b|t-hand|station report|journal\.db|/[\w./-]+|UTC|CET|[A-Z]{2,5}|\bs\b"
)


def report(tmp_path: Path, *args: str) -> str:
    journal = tmp_path / "journal.db"
    if not journal.exists():
        write_journal(journal)
    out = tmp_path / f"report-{'-'.join(args) or 'default'}"
    done = run_station("report", "--journal", str(journal), *args, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out.read_text(encoding="utf-8")


def shown_text(page: str) -> str:
    """What a reader sees: the page's text, outside its tags and style."""
    body = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    body = re.sub(r"<title>.*?</title>", " ", body, flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", " ", body))


@pytest.mark.parametrize("language", [x for x in LANGUAGES if x != "en"])
def test_no_english_word_is_left(tmp_path: Path, language: str) -> None:
    page = report(tmp_path, "--language", language)
    assert f"<html lang='{language}'>" in page
    words = catalogue(language)
    assert words["report.title"] in page and words["report.dealers"] in page
    english = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", shown_text(report(tmp_path)))}
    own = {w.lower() for v in words.values() for w in re.findall(r"[A-Za-z]{3,}", v)}
    left = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", DATA.sub(" ", shown_text(page)))} & (
        english - own
    )
    assert left == set(), f"English words in the {language} report: {sorted(left)}"


def test_numbers_and_days_the_french_way(tmp_path: Path) -> None:
    page = report(tmp_path, "--language", "fr")
    assert re.search(r"\d,\d", page), "a decimal comma"
    assert not re.search(r">\d+\.\d+<", page), "no decimal point in a figure"
    assert re.search(r"\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2}", page), "the day as dd/mm/yyyy"
    assert number(1234.5, "fr") == "1\u202f234,5" and number(1234.5, "en") == "1,234.5"


def test_traditional_chinese_says_shoe_and_table_as_macau_does(tmp_path: Path) -> None:
    page = report(tmp_path, "--language", "zh-Hant")
    assert "牌靴" in page and "號枱" in page and "荷官" in page
    assert re.search(r"\d{4}年\d{2}月\d{2}日", page)


def test_the_json_stays_language_free(tmp_path: Path) -> None:
    """--language changes the page only: the JSON for other systems is the same."""
    english = json.loads(report(tmp_path, "--format", "json"))
    french = json.loads(report(tmp_path, "--format", "json", "--language", "fr"))
    english.pop("generated"), french.pop("generated")
    assert french == english


def test_an_unknown_language_is_refused_with_the_choices(tmp_path: Path) -> None:
    write_journal(tmp_path / "journal.db")
    done = run_station("report", "--journal", str(tmp_path / "journal.db"), "--language", "de")
    assert done.returncode != 0
    assert b"zh-Hant" in done.stderr
