"""The screens' catalogues (`station/web/i18n/<lang>.js`): one per language, the same keys
in each, every word filled in with the same placeholders; every key a screen (the
display, the dashboard, the floor view, `station report`) asks for is there, including
those built from the station's codes (every verdict code, event type, role, alert, what
the table can wait for), so a new code without words fails here; no key is there that
nothing asks for; and the casino's own words, not a word-by-word translation.

That no screen shows a word from outside the catalogue is tests/browser/test_languages.py's
(each screen drawn in Chromium under a pseudo-language)."""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

from station.commands.report import COLUMNS as REPORT_COLUMNS
from station.core.protection import ALERT_CODES
from station.core.protection.riffle import GATHERINGS
from station.core.words import DUE_WORDS, EXPLANATIONS, ROLE_WORDS
from station.floor.alerts import (
    EPOCH,
    FORGED_MESSAGE,
    FORGED_ROW,
    HELD_FULL,
    NEW_KEY,
    ROLLBACK,
    STALE_HEARTBEAT,
)
from station.floor.keys import ACCEPTED, CONFIG, FIRST_USE, ROTATION, SET
from station.floor.said import CODES as SAID_CODES
from station.floor.said import PROTECTION_CODES
from station.shared.catalogue import CATALOGUE_DIR, LANGUAGES, catalogue
from station.shared.config import ROLES
from tests.test_display_words import asked_for as display_asks

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "station" / "web"
#: Every file that draws words: the pages, their modules, and the report's HTML.
SCREENS = [
    *sorted(p for p in WEB.glob("*.js") if p.name != "i18n.js"),
    *sorted(WEB.glob("*.html")),
    ROOT / "station" / "commands" / "report.py",
]
#: The namespaces of the staff screens' keys (a quoted "dash.x" in a screen is a key).
NAMESPACES = (
    "protect",
    "paytable",
    "ui",
    "dash",
    "floor",
    "report",
    "error",
    "event",
    "due",
    "role",
    "suit",
    "rank",
    "card",
    "badge",
    "pace",
    "outcome",
    "nth",
    "colour",
    "alert",
    "advice",
    "kind",
    "said",
)
PLURALS = ("one", "other")
#: Where the floor says a table's key came from.
ORIGINS = (CONFIG, FIRST_USE, ACCEPTED, ROTATION, SET)
#: What a station tells the floor (`Alert.code`, the publisher's), and the conflicts the
#: floor makes from ignored heartbeats (`Refused.code`).
STATION_ALERTS = ("foreign", "discontinuity", "conflict", "conflict_publisher", "conflict_journal")
#: The station's own integrity alerts (`/api/state` `journal.alerts`: the dashboard's banner).
INTEGRITY = ("JOURNAL_DISCONTINUITY", "OUTBOX_FORGED", "WEBHOOKS_WITHHELD")


@cache
def notice_messages() -> set[str]:
    """Every fixed message the station journals a notice with, found in its sources: the
    third argument of `notice(source, actor, MESSAGE, ...)` (a string, or a module's
    constant), and a reader bridge's `.notice("...")`. Messages made of data (an f-string,
    a reader's own words) are shown as journaled and are not here."""
    found: set[str] = set()
    for path in sorted((ROOT / "station").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Name) and node.func.id == "notice" and len(node.args) >= 3:
                said = node.args[2]
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "notice" and node.args:
                said = node.args[0]
            else:
                continue
            if isinstance(said, ast.Constant) and isinstance(said.value, str):
                found.add(said.value)
            elif isinstance(said, ast.Name) and said.id.isupper():
                value = getattr(importlib.import_module(module), said.id)
                assert isinstance(value, str), (path, said.id)
                found.add(value)
    return found


def written() -> set[str]:
    """Every quoted word-like token in the screens: keys are quoted where they are used
    (t("dash.round"), data-i18n="ui.token", a table of keys)."""
    tokens: set[str] = set()
    for path in SCREENS:
        tokens |= set(re.findall(r"""["'`]([\w.]+)["'`]""", path.read_text(encoding="utf-8")))
    return tokens


def built() -> set[str]:
    """The keys the screens build from the station's codes (t(`error.${code}`) and the like)."""
    people_events = ("shoe", "close_bets", "resume", "void", "end_shoe")
    return {
        *(f"error.{code}" for code in EXPLANATIONS),
        *(f"event.{e}.{w}" for e in people_events for w in ("label", "confirm", "done")),
        "event.decision.confirm",
        *(f"event.{e}.done" for e in ("card", "cut", "fault", "restart", "decision")),
        *(f"due.{d}" for d in DUE_WORDS if d is not None and d not in ROLE_WORDS),
        "due.suspended",
        *(f"role.{r}" for r in ROLES),
        *(f"alert.{c}" for c in ALERT_CODES),
        *(f"advice.{c}" for c in ALERT_CODES),
        *(f"suit.{s}" for s in "SHDC"),
        *(f"rank.{r}" for r in "AJQK"),
        *(f"nth.{n}" for n in "123"),
        *(f"outcome.{o}" for o in ("win", "lose", "tie")),
        *(f"colour.{c}" for c in ("red", "blue")),
        *(f"badge.{b}" for b in ("demo_bot", "reader", "station", "protection")),
        *(
            f"pace.{f}"
            for f in (
                "rounds",
                "rounds_per_hour",
                "seconds_per_round",
                "close_to_result_seconds",
                "suspensions_per_100_rounds",
                "resolve_seconds",
                "voided_rounds",
            )
        ),
        "language_name",
        "bet_banker_no_commission",
        *(f"protect.gathered.{g}" for g in GATHERINGS),
        "floor.broker.refused",  # floor.js: t(`floor.broker.${why}`), the service's two failures
        "floor.broker.unreachable",
        *(f"paytable.{p.stem}" for p in (ROOT / "station" / "core" / "paytables").glob("*.toml")),
        *(f"cause.{code}" for code in EXPLANATIONS),
        *(f"report.col.{k}" for k in REPORT_COLUMNS),
        *(f"floor.origin.{o}" for o in ORIGINS),
        *(
            f"kind.{k}"
            for k in (
                "gap",
                "chain",
                FORGED_ROW,
                FORGED_MESSAGE,
                NEW_KEY,
                EPOCH,
                "protection",
                ROLLBACK,
                STALE_HEARTBEAT,
                HELD_FULL,
                "malformed",
                "altered",
                "conflict",
                "late",
            )
        ),
        *(f"integrity.{code}" for code in INTEGRITY),
        # banner.js integritySentence: the alert's whole sentence (WEBHOOKS_WITHHELD: whether
        # the station went on in a new epoch or holds its webhooks)
        *(f"integrity.said.{code}" for code in INTEGRITY if code != "WEBHOOKS_WITHHELD"),
        *(f"integrity.said.WEBHOOKS_WITHHELD_{then}" for then in ("held", "renewed")),
        *(f"said.{code}" for code in (*SAID_CODES, *PROTECTION_CODES)),  # floor.js messageWords
        *(f"floor.station_said.{code}" for code in STATION_ALERTS),  # floor.js stationSaid
        *(f"notice.{message}" for message in notice_messages()),  # format.js noticeWords
    }


def asked() -> set[str]:
    english = catalogue("en")
    tokens = written()
    plural = {f"{t}_{p}" for t in tokens for p in PLURALS}  # count(n, "dash.n_rounds")
    return display_asks() | built() | (tokens & set(english)) | (plural & set(english))


def test_one_catalogue_per_language() -> None:
    assert sorted(p.stem for p in CATALOGUE_DIR.glob("*.js")) == sorted(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_has_every_key(language: str) -> None:
    english, table = catalogue("en"), catalogue(language)
    assert set(table) == set(english), (
        f"missing: {sorted(set(english) - set(table))}; extra: {sorted(set(table) - set(english))}"
    )
    for key, word in table.items():
        assert word.strip(), f"{language} {key} is empty"
        assert set(re.findall(r"\{(\w+)\}", word)) == set(re.findall(r"\{(\w+)\}", english[key])), (
            language,
            key,
        )


def test_every_key_a_screen_asks_for_is_there() -> None:
    english = set(catalogue("en"))
    keys = {t for t in written() if t.split(".")[0] in NAMESPACES and "." in t}
    missing = (
        (keys | built() | display_asks())
        - english
        - {f"{k}" for k in keys if any(f"{k}_{p}" in english for p in PLURALS)}
    )
    assert missing == set(), "keys a screen asks for that no catalogue has"


def test_no_key_is_there_that_nothing_asks_for() -> None:
    assert set(catalogue("en")) - asked() == set()


def test_a_new_verdict_code_needs_its_words() -> None:
    """Every code the station can give has its words in every language: a code added to
    the station without them fails here, not on a French supervisor's screen."""
    for language in LANGUAGES:
        table = catalogue(language)
        assert {c for c in EXPLANATIONS if f"error.{c}" not in table} == set(), language


@pytest.mark.parametrize(
    ("key", "fr", "zh_hant"),
    [
        ("banker", "Banque", "莊"),
        ("player", "Joueur", "閒"),
        ("bet_tie", "Égalité", "和"),
        ("ponte", "Ponte", "閒家"),
        ("tableau1", "Tableau 1", "第一門"),
        ("dash.p_shoe", "Sabot", "牌靴"),
        ("dash.p_burn", "Brûlage", "燒牌"),
        ("count_natural", "Naturels", "例牌"),
        ("dash.suspended_title", "TABLE SUSPENDUE", "枱面暫停"),
        ("event.close_bets.label", "Rien ne va plus", "停止下注"),
        ("event.resume.label", "Reprendre", "恢復"),
        ("dash.card", "Carte", "補牌"),
        ("ask", "Si le prochain est", "問路"),
    ],
)
def test_the_casinos_own_words(key: str, fr: str, zh_hant: str) -> None:
    assert catalogue("fr")[key] == fr
    assert catalogue("zh-Hant")[key] == zh_hant


def test_a_shoe_is_a_shoe_in_every_staff_word() -> None:
    """Traditional Chinese counts shoes in 靴 (第 1 靴) and French in sabots, everywhere."""
    hant, fr = catalogue("zh-Hant"), catalogue("fr")
    assert "{n} 靴" in hant["shoe"] and "靴" in hant["dash.history_about"]
    assert all("sabot" in fr[k].lower() for k in ("shoe", "dash.history_about", "event.shoe.label"))
    assert "suspendue" in fr["dash.suspended_title"].lower()


def test_every_integrity_alert_the_station_raises_has_words() -> None:
    """The codes `Station.alert` is called with, in the live station's sources."""
    raised: set[str] = set()
    for source in (ROOT / "station" / "live").rglob("*.py"):
        raised |= set(re.findall(r'alert\(\s*"([A-Z_]+)"', source.read_text()))
    assert raised == set(INTEGRITY)


def test_every_floor_alert_code_has_words_that_take_its_figures() -> None:
    """The floor view says an alert from its code and figures (`station.floor.said`): each
    code's words in every language, with a placeholder for each figure the floor sends and
    none it does not (a figure renamed on one side fails here, not as an empty gap in a
    French supervisor's sentence)."""
    for language in LANGUAGES:
        table = catalogue(language)
        for code, figures in SAID_CODES.items():
            assert set(re.findall(r"\{(\w+)\}", table[f"said.{code}"])) == set(figures), (
                language,
                code,
            )


def test_every_notice_the_station_journals_has_words() -> None:
    """A journal notice is its fixed message (the journal's language-free record); the
    dashboard's journal says each one from the catalogue (`notice.<message>`): a notice
    added to the station without its words in every language fails here."""
    messages = notice_messages()
    assert {"journal restored", "journal discontinuity", "webhook events refused"} <= messages
    for language in LANGUAGES:
        table = catalogue(language)
        assert {m for m in messages if f"notice.{m}" not in table} == set(), language
