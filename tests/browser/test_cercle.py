"""The dashboard at a cercle table (issue 10), in Chromium against a live station: a
baccarat banque round whose options the dealer takes from the page (Card, No card), a
suspended banque table resumed from the page with the decision (the held card placed),
and a chemin de fer round. Punto banco's page is test_dashboard.py's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from station.core.words import EXPLANATIONS
from station.live.config import TableConfig
from tests.browser.pit import cards_in, confirm, journal_rows, login, of_type, send, texts
from tests.service.kit import Running, make_config, serve

# Banque round 1: tableau 1 2H 3S = 5 (its option), tableau 2 KD 7D = 7 (stands), banker
# 3C 2C = 5. Tableau 1 draws 4H (9); the banker at 5 against a third card 4 (O) and a
# tableau standing (M) must draw: 2D, 7. Tableau 1 wins 9 to 7, tableau 2 ties 7 to 7.
BANQUE_DEAL = ["2H", "KD", "3C", "3S", "7D", "2C"]
# Round 2: tableau 1 4C 5H = 9 (a natural: it wins), tableau 2 2S 3D = 5 (its option),
# banker KC 6S = 6. Tableau 2 stands: the banker at 6 against a tableau standing stands,
# and the round is over on the decision: tableau 2 loses 5 to 6.
BANQUE_NATURAL = ["4C", "2S", "KC", "5H", "3D", "6S"]
ROUND_1_OUTCOME = "Tableau 1 wins 9 to 7 · tableau 2 ties 7 to 7"
T1_OPTION = "Tableau 1: option on 5, draw or stand?"  # the catalogue's words, by the codes


@contextmanager
def cercle_table(tmp_path: Path, game: str) -> Iterator[Running]:
    """A live station playing `game` (its defaults: no burn, cut policy stop)."""
    config, tokens = make_config(tmp_path, allow_rig=True)
    config = config.model_copy(update={"table": TableConfig(id="t-test", game=game)})
    with serve(config, tokens) as running:
        yield running


def deal(live: Running, cards: list[str]) -> None:
    for card in cards:
        verdict = send(live, {"type": "card", "card": card})
        assert verdict["ok"], (card, verdict)


def decision_button(page: Page, draw: bool) -> Locator:
    return page.locator(f"#decision button.act[data-event=decision][data-draw={str(draw).lower()}]")


def test_a_banque_round_with_the_options_taken_from_the_page(page: Page, tmp_path: Path) -> None:
    with cercle_table(tmp_path, "baccarat_banque") as live:
        login(page, live, "dealer")
        expect(page.locator("#game-name")).to_have_text("· Baccarat Banque")
        expect(page.locator("#p-burn")).to_have_text("none at this table")
        # tableau 1 (the banker's right) on the left, the banker, tableau 2
        expect(page.locator("#hands .hand")).to_have_count(3)
        layout = [h.get_attribute("data-hand") for h in page.locator("#hands .hand").all()]
        assert layout == ["tableau1", "banker", "tableau2"]
        assert texts(page.locator("#hands .hand-title")) == ["Tableau 1", "Banker", "Tableau 2"]
        odds = page.locator("#odds-status")
        expect(odds).to_have_text("Odds are not offered for Baccarat Banque.")
        expect(page.locator("#odds-note")).to_contain_text("punto banco only")
        expect(page.locator("#odds-body tr")).to_have_count(0)

        assert send(live, {"type": "shoe"})["ok"]
        assert send(live, {"type": "close_bets"})["round"] == 1
        expect(page.locator("#decision")).to_be_hidden()
        deal(live, BANQUE_DEAL[:5])
        expect(page.locator("#expecting")).to_have_text("banker second card")
        expect(page.locator("#decision")).to_be_hidden()  # no option waits yet
        deal(live, BANQUE_DEAL[5:])
        words = T1_OPTION
        expect(page.locator("#expecting")).to_have_text(words)
        expect(page.locator("#option-words")).to_have_text(words)
        expect(page.locator("#decision")).to_be_visible()
        expect(page.locator("#tableau1-hand")).to_have_class("hand tableau1 option")
        assert cards_in(page, "tableau1") == ["2H", "3S"]
        assert cards_in(page, "tableau2") == ["KD", "7D"]
        assert cards_in(page, "banker") == ["3C", "2C"]
        expect(page.locator("#tableau1-total")).to_have_text("5")
        expect(page.locator("#banker-total")).to_have_text("5")

        confirm(page, decision_button(page, True), words=f"{words} Record tableau 1: card?")
        expect(page.locator("#decision")).to_be_hidden()
        said = page.locator("#last-action")
        expect(said).to_contain_text("decision (tableau 1: card) by test-dealer")
        expect(page.locator("#expecting")).to_have_text("tableau 1 third card")
        decisions = of_type(journal_rows(live), "decision")
        assert [(r["event"], r["actor"], r["verdict"]["ok"]) for r in decisions] == [
            ({"type": "decision", "hand": "tableau1", "draw": True}, "test-dealer", True)
        ]
        deal(live, ["4H", "2D"])
        expect(page.locator("#outcome")).to_have_text(ROUND_1_OUTCOME)
        expect(page.locator("#tableau1-hand")).to_have_class("hand tableau1 won")
        expect(page.locator("#tableau1-mark")).to_have_text("WINS")
        expect(page.locator("#tableau2-mark")).to_have_text("TIE")
        assert cards_in(page, "tableau1") == ["2H", "3S", "4H"]
        assert cards_in(page, "banker") == ["3C", "2C", "2D"]
        expect(page.locator("#road-tableau1 g.bead.win")).to_have_count(1)
        expect(page.locator("#road-tableau2 g.bead.tie")).to_have_count(1)
        expect(page.locator("#road-big")).to_be_hidden()  # punto banco's roads are not drawn
        expect(page.locator("#road-t1-counts")).to_have_text("W 1 · L 0 · T 0")
        expect(page.locator("#history-head th")).to_have_text(
            [
                *("Round", "Tableau 1", "Tableau 2", "Banker", "Totals"),
                *("Tableau 1", "Tableau 2", "Naturals"),
            ]
        )
        expect(page.locator("#history-body tr td.outcome")).to_have_text(["wins", "ties"])

        # Round 2: tableau 1's natural settles it; tableau 2 stands on its option.
        assert send(live, {"type": "close_bets"})["round"] == 2
        deal(live, BANQUE_NATURAL)
        words = "Tableau 2: option on 5, draw or stand?"
        expect(page.locator("#option-words")).to_have_text(words)
        confirm(page, decision_button(page, False), words=f"{words} Record tableau 2: no card?")
        expect(page.locator("#outcome")).to_have_text(
            "Tableau 1 wins 9 to 6 · tableau 2 loses 5 to 6 · natural: tableau 1"
        )
        expect(page.locator("#tableau1-mark")).to_have_text("WINS · natural")
        expect(page.locator("#tableau2-hand")).to_have_class("hand tableau2 lost")
        expect(page.locator("#decision")).to_be_hidden()
        expect(page.locator("#road-tableau2 g.bead.lose")).to_have_count(1)
        expect(page.locator("#history-body tr")).to_have_count(2)
        expect(page.locator("#recent li")).to_have_text(["WT", "WL"])


def test_a_suspended_banque_table_resumed_with_the_decision(page: Page, tmp_path: Path) -> None:
    with cercle_table(tmp_path, "baccarat_banque") as live:
        assert send(live, {"type": "shoe"})["ok"]
        assert send(live, {"type": "close_bets"})["round"] == 1
        deal(live, BANQUE_DEAL)
        held = send(live, {"type": "card", "card": "4S"})  # no decision yet: held
        assert held["error"] == "DECISION_MISSING"
        login(page, live, "supervisor")
        expect(page.locator("#banner")).to_be_visible()
        expect(page.locator("#banner-reason")).to_have_text(EXPLANATIONS["DECISION_MISSING"])
        expect(page.locator("#decision")).to_be_hidden()  # the dealer's pair waits for the resume
        expect(page.locator("#resume-decision")).to_be_visible()
        expect(page.locator("#resume-option")).to_have_text(T1_OPTION)
        expect(page.locator("#resume-held")).to_contain_text("Held card: 4♠")
        resume = page.locator("#resume-with-decision")
        expect(resume).to_be_disabled()  # no decision chosen yet

        # A card read by eye may not go with the decision while a card is held: the
        # station refuses the whole resume, and the page says so as for any refusal.
        page.select_option("#pick-rank", "9")
        page.select_option("#pick-suit", "C")
        page.select_option("#resume-draw", "true")
        confirm(page, resume, words="Resume with the decision tableau 1: card")
        expect(page.locator("#last-action")).to_contain_text(
            f"BAD_INPUT: {EXPLANATIONS['BAD_INPUT']}"
        )
        expect(page.locator("#banner")).to_be_visible()
        expect(page.locator("#resume-held")).to_contain_text("4♠")

        page.select_option("#pick-rank", "")
        page.select_option("#pick-suit", "")
        confirm(page, resume, words="The held card 4♠ is then placed.")
        expect(page.locator("#banner")).to_be_hidden()
        expect(page.locator("#last-action")).to_contain_text(
            "resume (tableau 1: card) by test-supervisor"
        )
        expect(page.locator("#tableau1-cards .card[data-card='4S']")).to_be_visible()
        expect(page.locator("#expecting")).to_have_text("banker third card")
        expect(page.locator("#resume-draw")).to_have_value("")
        resumes = of_type(journal_rows(live), "resume")
        assert [r["event"].get("decision") for r in resumes] == [
            {"hand": "tableau1", "draw": True},
            {"hand": "tableau1", "draw": True},
        ]
        assert [r["verdict"]["error"] for r in resumes] == ["BAD_INPUT", None]
        assert resumes[0]["event"]["card"] == "9C" and "card" not in resumes[1]["event"]
        deal(live, ["2D"])
        expect(page.locator("#outcome")).to_have_text(ROUND_1_OUTCOME)


def test_a_chemin_de_fer_round(page: Page, tmp_path: Path) -> None:
    with cercle_table(tmp_path, "chemin_de_fer") as live:
        login(page, live, "dealer")
        expect(page.locator("#game-name")).to_have_text("· Chemin de Fer")
        assert texts(page.locator("#hands .hand-title")) == ["Ponte", "Banker"]
        expect(page.locator("#odds-status")).to_have_text("Odds are not offered for Chemin de Fer.")
        assert send(live, {"type": "shoe"})["ok"]
        assert send(live, {"type": "close_bets"})["round"] == 1
        # ponte 2H 3S = 5 (its option), banker KD 7C = 7
        deal(live, ["2H", "KD", "3S", "7C"])
        words = "Ponte: option on 5, draw or stand?"
        expect(page.locator("#expecting")).to_have_text(words)
        expect(page.locator("#player-hand")).to_have_class("hand player option")
        confirm(page, decision_button(page, False), words=f"{words} Record ponte: no card?")
        expect(page.locator("#outcome")).to_have_text("Banker wins 7 to 5")
        expect(page.locator("#banker-hand")).to_have_class("hand banker won")
        assert cards_in(page, "player") == ["2H", "3S"]
        expect(page.locator("#road-bead g.bead.banker")).to_have_count(1)
        expect(page.locator("#road-big g.big.banker")).to_have_count(1)
        expect(page.locator("#roads-banque")).to_be_hidden()
        expect(page.locator("#history-head th")).to_have_text(
            ["Round", "Ponte", "Banker", "Totals", "Winner", "Flags"]
        )
        expect(page.locator("#history-body tr td.winner")).to_have_text("banker")
        decisions = of_type(journal_rows(live), "decision")
        assert [r["event"] for r in decisions] == [
            {"type": "decision", "hand": "player", "draw": False}
        ]
        # Round 2: the ponte's natural ends it, no option is offered.
        assert send(live, {"type": "close_bets"})["round"] == 2
        deal(live, ["9S", "2D", "KH", "5C"])
        expect(page.locator("#outcome")).to_have_text("Ponte wins 9 to 7 · ponte natural")
        expect(page.locator("#player-hand")).to_have_class("hand player won")
        expect(page.locator("#decision")).to_be_hidden()
        expect(page.locator("#recent li")).to_have_text(["B", "P"])
