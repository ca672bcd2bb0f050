"""The display's words in the screens' catalogues (`station/web/i18n/<lang>.js`) are
complete: every language has every word, no word is empty or left in English where it
should not be, and every word the page asks for is there (the keys written in the page,
and those it builds from a status, a game, a bet, a road or a side). That no word is there
that no screen asks for is tests/test_catalogue.py's."""

from __future__ import annotations

import re

import pytest

from station.core.display import STATUSES
from station.core.games import GAME_NAMES
from station.live.display_config import BETS, LANGUAGES
from tests.displaykit import WEB, words

PAGE = [WEB / "display.js", WEB / "display.html"]
ROADS = (
    "bead_plate",
    "big_road",
    "big_eye_boy",
    "small_road",
    "cockroach_pig",
    "tableau1",
    "tableau2",
    "bank",
)


def asked_for() -> set[str]:
    """The keys the page asks for: written out (t("key"), data-word="key"), and built from
    the game's vocabulary (t(`status_${...}`) and the like)."""
    written: set[str] = set()
    for path in PAGE:
        text = path.read_text()
        written |= set(re.findall(r'\bt\("(\w+)"', text))
        written |= set(re.findall(r'data-word(?:-aria)?="(\w+)"', text))
    built = {
        *(f"status_{s}" for s in STATUSES),
        *(f"game_{g}" for g in GAME_NAMES),
        *(f"bet_{b}" for b in BETS),
        *(f"road_{r}" for r in ROADS),
        *(f"letter_{x}" for x in ("banker", "player", "tie", "win", "lose", "even")),
        *(f"ask_{side}" for side in ("banker", "player")),
        *(f"announce_{x}" for x in ("banker", "player", "tie")),
        *(f"announce_tableau_{o}" for o in ("win", "lose", "tie")),
        *(f"announce_bank_{o}" for o in ("win", "lose", "even")),
        "connecting",  # the connection's line: t(status)
        "refused",
        "tableau1",
        "tableau2",
        "bank",
        "banker",
        "player",
    }
    return written | built


def test_every_language_of_the_config_has_a_table() -> None:
    assert list(words()) == list(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_has_every_word(language: str) -> None:
    table = words()
    english = table["en"]
    assert set(table[language]) == set(english), (
        f"missing: {sorted(set(english) - set(table[language]))}; "
        f"extra: {sorted(set(table[language]) - set(english))}"
    )
    for key, word in table[language].items():
        assert word.strip(), f"{language} {key} is empty"
        placeholders = set(re.findall(r"\{(\w+)\}", word))
        assert placeholders == set(re.findall(r"\{(\w+)\}", english[key])), (language, key)


def test_every_word_asked_for_is_there() -> None:
    table = words()["en"]
    assert asked_for() - set(table) == set(), "words the page asks for that are missing"


@pytest.mark.parametrize(
    ("language", "banker", "player", "tie"),
    [("zh-Hans", "庄", "闲", "和"), ("zh-Hant", "莊", "閒", "和")],
)
def test_chinese_names_the_sides_as_players_expect(
    language: str, banker: str, player: str, tie: str
) -> None:
    table = words()[language]
    assert (table["letter_banker"], table["letter_player"], table["letter_tie"]) == (
        banker,
        player,
        tie,
    )
    assert table["bet_banker"] == banker and table["bet_player"] == player


def test_the_chinese_scripts_differ_where_the_characters_do() -> None:
    """Traditional is not simplified copied: a word with a simplified character differs."""
    table = words()
    display = asked_for()
    same = [k for k in display if table["zh-Hans"][k] == table["zh-Hant"][k]]
    # Words of characters written alike in both scripts (例牌, 和, 大路, 洗牌中, ...).
    alike = {
        "announce_natural",
        "announce_tableau_tie",
        "announce_tie",
        "bet_tie",
        "count_natural",
        "letter_even",
        "letter_tie",
        "road_big_eye_boy",
        "road_big_road",
        "road_cockroach_pig",
        "road_small_road",
        "shoe",
        "status_new_shoe",
        "status_no_more_bets",
        "status_shuffling",
    }
    assert set(same) <= alike, sorted(set(same) - alike)
