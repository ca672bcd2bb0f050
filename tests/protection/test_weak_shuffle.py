"""WEAK_SHUFFLE (issue 28): the calibration data the threshold comes from, the decision at
half the shoe and at its end, the alert's words, and power on seeded shoes of every
gathering order (with margins: seeded, so they cannot flake)."""

from __future__ import annotations

import itertools
import math
import random
import re

import orjson
import pytest

from benchmarks.shuffle_kit import shoe_pair
from station.core.protection import WEAK_SHUFFLE, MemoryHistory, Protector, riffle_null
from station.core.protection.shuffle import (
    DEFAULT_THRESHOLD,
    WEIGHTS,
    DealtShoe,
    half_look,
    located,
    look_probability,
    shuffle_score,
    survival,
)
from tests.conftest import run_station


def test_the_calibration_is_shipped_for_every_deck_count() -> None:
    assert set(riffle_null.SHOES) == set(range(1, 9))
    assert riffle_null.SHOES[8] >= 100_000 and riffle_null.SHOES[6] >= 100_000
    for decks in range(1, 9):
        # The cut card 16 from the bottom, then the round it lets finish.
        assert 0.5 * 52 * decks <= riffle_null.END_CARDS[decks] <= 52 * decks - 10
        for look in ("half", "end"):
            points = riffle_null.QUANTILES[decks][look]
            scores_ = [s for s, _ in points]
            shares = [p for _, p in points]
            assert scores_ == sorted(scores_) and shares == sorted(shares, reverse=True)
            start, at_start, scale = riffle_null.TAIL[decks][look]
            assert (start, at_start) == points[-1] and 0.1 < scale < 2.0
            # Enough fair shoes beyond the tail's start to fit it (at least 50).
            assert at_start * riffle_null.SHOES[decks] >= 50


def test_the_tail_probability_falls_and_meets_its_points() -> None:
    for decks, look in itertools.product((1, 6, 8), ("half", "end")):
        values = [survival(decks, look, s / 10) for s in range(0, 200)]
        assert all(a >= b for a, b in itertools.pairwise(values))
        assert values[0] == 1.0 and values[-1] < 1e-9
        for score, share in riffle_null.QUANTILES[decks][look]:
            assert survival(decks, look, score) == pytest.approx(share)
    assert survival(12, "end", 5.0) == survival(8, "end", 5.0)  # the nearest calibrated


def test_each_look_spends_its_share_of_the_threshold() -> None:
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)
    score = 5.0
    assert look_probability(8, "half", score, 208) == pytest.approx(
        survival(8, "half", score) / WEIGHTS["half"]
    )
    full = riffle_null.END_CARDS[8]
    assert look_probability(8, "end", score, full) == pytest.approx(
        survival(8, "end", score) / WEIGHTS["end"]
    )
    short = look_probability(8, "end", score, 250)  # a short shoe: the larger table
    assert short == pytest.approx(
        max(survival(8, "end", score), survival(8, "half", score)) / WEIGHTS["end"]
    )
    assert look_probability(8, "end", 0.0, full) == 1.0


def test_dealt_shoe_keeps_rounds_and_hands() -> None:
    shoe = DealtShoe()
    for card, round_, role in [
        (3, None, "burn_reveal"),
        (4, None, "burn"),
        (5, 1, "P1"),
        (6, 1, "B1"),
        (7, None, None),  # refused after round 1: goes with round 1
        (8, 2, "T2.1"),
    ]:
        shoe.add(card, round_, role)
    discards = shoe.discards()
    assert discards.rounds.tolist() == [0, 0, 1, 1, 1, 2]
    assert discards.hands.tolist() == [-1, -1, 0, 9, -1, 1]
    assert len(shoe) == 6


@pytest.mark.parametrize("gathering", ["dealt", "reversed", "banker-first", "player-first"])
def test_four_riffles_are_caught_in_every_gathering_order(gathering: str) -> None:
    """Seeded 8-deck shoes, four riffles of the previous shoe's discards: caught at the
    end with a wide margin (the probability a thousand times under the threshold), named
    'about 4 riffles of the previous shoe' with the gathering order, and seen at half the
    shoe already (the score there is about half the end's)."""
    rng = random.Random(f"four riffles {gathering}")
    words = {
        "dealt": "in dealt order",
        "reversed": "each round reversed",
        "banker-first": "with the banker's cards first",
        "player-first": "with the banker's cards last",
    }
    for _ in range(2):
        previous, shoe = shoe_pair(8, "riffle:4", gathering, rng)
        score = shuffle_score(previous, shoe, 8, "end")
        assert score is not None and score.probability < DEFAULT_THRESHOLD / 1000
        assert score.riffles == 4 and score.gathering == words[gathering] and not score.turned
        message = located(score, previous, shoe, 8).message()
        assert message.startswith("this shoe is about 4 riffles of the previous shoe")
        assert f"gathered {words[gathering]}" in message and f"of {len(shoe)} seen" in message
        half = shuffle_score(previous, shoe, 8, "half")
        assert half is not None and half.probability < 1e-3


@pytest.mark.parametrize("decks", [8, 6])
def test_five_riffles_in_dealt_order_are_mostly_caught_by_the_end(decks: int) -> None:
    rng = random.Random(f"five riffles {decks}")
    caught = 0
    for _ in range(6):
        previous, shoe = shoe_pair(decks, "riffle:5", "dealt", rng)
        score = shuffle_score(previous, shoe, decks, "end")
        assert score is not None
        caught += score.probability < DEFAULT_THRESHOLD
    assert caught >= 3  # about 9 in 10 are (make bench); the target is half


def test_fair_shoes_are_far_from_the_threshold() -> None:
    rng = random.Random("fair")
    for decks in (8, 6):
        for _ in range(3):
            previous, shoe = shoe_pair(decks, "uniform", "dealt", rng)
            for look in ("half", "end"):
                score = shuffle_score(previous, shoe, decks, look)
                assert score is not None and score.probability > DEFAULT_THRESHOLD * 100


def test_too_little_of_either_shoe_says_nothing() -> None:
    rng = random.Random(3)
    previous, shoe = shoe_pair(2, "riffle:1", "dealt", rng)
    assert shuffle_score(previous, shoe[:51], 2, "end") is None  # under half of 104
    assert shuffle_score(previous, shoe[:51], 2, "half") is None
    short = DealtShoe()
    for card in previous.cards[:51]:
        short.add(card, 1, "P1")
    assert shuffle_score(short, shoe, 2, "end") is None


def test_the_alert_says_where_and_how_much() -> None:
    """A stack shuffle in piles, as a Protector sees the shoes: one WEAK_SHUFFLE for the
    new shoe, raised when half of it is out, with its figures and words."""
    from drivers.sim.shuffles import simulate_shuffled
    from station.core.table import Table

    events = list(simulate_shuffled(7, "stack", "banker-first", decks=6, shoes=2))
    table = Table(decks=6)
    protector = Protector(MemoryHistory(), 6, table="T3")
    alerts = []
    for seq, event in enumerate(events, 1):
        alerts += protector.row(event, table.apply(dict(event)), seq, f"ts{seq}")
    alerts += protector.finish(None)
    (weak,) = [a for a in alerts if a.code == WEAK_SHUFFLE]
    figures = weak.as_dict()
    assert figures["look"] == "half" and figures["cards"] == half_look(6)
    assert figures["probability"] < DEFAULT_THRESHOLD and figures["threshold"] == DEFAULT_THRESHOLD
    assert figures["gathering"] == "with the banker's cards first"
    first, last = figures["part"]
    assert 1 <= first < last <= half_look(6)
    assert f"in its cards {first}-{last} of {half_look(6)} seen" in weak.message
    assert re.search(r"about \d riffles? of the previous shoe", weak.message)
    assert "tell surveillance" in figures["advice"]
    assert weak.seq is not None and weak.shoe is not None
    assert math.isfinite(figures["score"]) and figures["score"] > 5


def test_station_protect_at_eight_decks_names_four_riffles() -> None:
    """`station simulate --shuffle riffle:4 --gather reversed | station protect --decks 8`:
    one WEAK_SHUFFLE a shoe after the first, in the words a surveillance officer uses."""
    dealt = run_station(
        "simulate", "--seed", "5", "--shoes", "3", "--shuffle", "riffle:4", "--gather", "reversed"
    )
    assert dealt.returncode == 0, dealt.stderr
    found = run_station("protect", "--decks", "8", stdin=dealt.stdout)
    assert found.returncode == 1, found.stderr  # alerts found: exit 1
    alerts = [orjson.loads(line) for line in found.stdout.splitlines()]
    assert [a["code"] for a in alerts] == ["WEAK_SHUFFLE", "WEAK_SHUFFLE"]
    for alert in alerts:
        assert "about 4 riffles of the previous shoe" in alert["message"]
        assert "gathered each round reversed" in alert["message"]
        assert alert["riffles"] == 4 and alert["probability"] < 1e-5
