"""Exact odds: the published 8-deck figures, and agreement with an exact rational
enumeration (settled bet by bet through `station.core.settlement`) on assorted shoes."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import orjson
import pytest

from station.core import paytables
from station.core.cards import ALL_CARDS, POINTS, RANKS
from station.core.odds import (
    Analyzer,
    CompositionError,
    class_distribution,
    falling,
    full_shoe,
    parse_composition,
    seed_bets,
)
from station.core.paytables import Paytable
from station.core.results import RoundResult, round_result
from station.core.settlement import settle
from tests.conftest import CliResult, run_station

TRADITIONAL = paytables.load("traditional")
SEED = seed_bets(TRADITIONAL)
ANALYZER = Analyzer(SEED)


@pytest.fixture(scope="module")
def eight_decks() -> Any:
    return ANALYZER.analyse(full_shoe(8))


# -- the published figures ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "p"), [("banker", 0.458597), ("player", 0.446247), ("tie", 0.095156)]
)
def test_eight_deck_outcomes(eight_decks: Any, outcome: str, p: float) -> None:
    assert eight_decks.outcomes[outcome] == pytest.approx(p, abs=5e-7)


@pytest.mark.parametrize(
    ("bet", "edge_percent", "places"),
    [
        ("banker", 1.0579, 4),
        ("banker_no_commission", 1.4581, 4),
        ("player", 1.2351, 4),
        ("tie", 14.3596, 4),
        ("player_pair", 10.3614, 4),
        ("banker_pair", 10.3614, 4),
        ("player_bonus", 2.65, 2),
        ("banker_bonus", 9.37, 2),
        ("lucky_six", 16.68, 2),
    ],
)
def test_eight_deck_house_edges(
    eight_decks: Any, bet: str, edge_percent: float, places: int
) -> None:
    assert eight_decks.house_edge[bet] * 100 == pytest.approx(edge_percent, abs=0.5 * 10**-places)


def test_the_best_bet_returns_98_94_percent(eight_decks: Any) -> None:
    best = max(eight_decks.house_edge, key=eight_decks.rtp)
    assert best == "banker" and eight_decks.rtp(best) == pytest.approx(0.9894, abs=5e-5)


def test_outcomes_sum_to_one_and_json_shape(eight_decks: Any) -> None:
    assert sum(eight_decks.outcomes.values()) == pytest.approx(1, abs=1e-15)
    doc = eight_decks.to_json()
    assert set(doc) == {"outcomes", "bets"} and set(doc["bets"]) == set(SEED)
    assert doc["bets"]["tie"]["rtp"] == pytest.approx(1 - doc["bets"]["tie"]["house_edge"])


# -- an exact rational reference --------------------------------------------------------------

# The tableau as the spec prints it (not station.core.rules): banker total -> P3 points it draws on.
SPEC_BANKER_DRAWS = {
    0: set(range(10)),
    1: set(range(10)),
    2: set(range(10)),
    3: set(range(10)) - {8},
    4: set(range(2, 8)),
    5: set(range(4, 8)),
    6: {6, 7},
    7: set(),
}
CARD_OF_POINTS = ["TC", "AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C"]


def reference(
    composition: dict[str, int], paytable: Paytable, by_rank: bool = False
) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """P(banker/player/tie) and each bet's house edge as Fractions, by enumerating every
    round card by card (the first four by card code, or by rank when `by_rank`: then
    perfect pairs are not told apart and the perfect_pair bets must be left out) and
    settling a unit stake on each distinct kind of round."""
    groups: dict[str, int] = {}
    for card, copies in composition.items():
        if copies:
            key = card[0] + "S" if by_rank else card
            groups[key] = groups.get(key, 0) + copies
    total = sum(groups.values())
    # Stage 1: first four cards (P1 B1 P2 B2) by group, aggregated by what matters later.
    starts: dict[tuple[Any, ...], int] = {}
    left = dict(groups)
    for p1 in groups:
        w1 = left[p1]
        left[p1] -= 1
        for b1 in groups:
            w2 = w1 * left[b1]
            if not w2:
                continue
            left[b1] -= 1
            for p2 in groups:
                w3 = w2 * left[p2]
                if not w3:
                    continue
                left[p2] -= 1
                for b2 in groups:
                    w4 = w3 * left[b2]
                    if not w4:
                        continue
                    key = (
                        p1[0] == p2[0],
                        b1[0] == b2[0],
                        p1 == p2,
                        b1 == b2,
                        POINTS[p1],
                        POINTS[b1],
                        POINTS[p2],
                        POINTS[b2],
                    )
                    starts[key] = starts.get(key, 0) + w4
                left[p2] += 1
            left[b1] += 1
        left[p1] += 1
    values = [0] * 10
    for code, copies in groups.items():
        values[POINTS[code]] += copies
    # Stage 2: third cards by points; weights per kind of round and number of cards.
    kinds: dict[tuple[Any, ...], list[int]] = {}
    examples: dict[tuple[Any, ...], RoundResult] = {}

    def add(start: tuple[Any, ...], player: list[int], banker: list[int], weight: int) -> None:
        pairs = start[:4]
        pt, bt = sum(player) % 10, sum(banker) % 10
        key = (*pairs, pt, bt, len(player), len(banker))
        kinds.setdefault(key, [0, 0, 0])[len(player) + len(banker) - 4] += weight
        if key not in examples:
            examples[key] = _example(pairs, player, banker)

    for start, w4 in starts.items():
        p_pts, b_pts = [start[4], start[6]], [start[5], start[7]]
        rest = list(values)
        for v in start[4:]:
            rest[v] -= 1
        pt2, bt2 = sum(p_pts) % 10, sum(b_pts) % 10
        if pt2 >= 8 or bt2 >= 8:
            add(start, p_pts, b_pts, w4)
        elif pt2 >= 6:
            if bt2 <= 5:
                for v in range(10):
                    if rest[v]:
                        add(start, p_pts, [*b_pts, v], w4 * rest[v])
            else:
                add(start, p_pts, b_pts, w4)
        else:
            for v in range(10):
                if not rest[v]:
                    continue
                w5 = w4 * rest[v]
                if v in SPEC_BANKER_DRAWS[bt2]:
                    rest[v] -= 1
                    for u in range(10):
                        if rest[u]:
                            add(start, [*p_pts, v], [*b_pts, u], w5 * rest[u])
                    rest[v] += 1
                else:
                    add(start, [*p_pts, v], b_pts, w5)
    outcomes = dict.fromkeys(("banker", "player", "tie"), Fraction(0))
    edges = dict.fromkeys(paytable.bets, Fraction(0))
    for key, weights in kinds.items():
        p = sum(Fraction(w, falling(total, m + 4)) for m, w in enumerate(weights) if w)
        result = examples[key]
        outcomes[result["winner"]] += p
        for s in settle(paytable, 1, result, [{"bet": b, "stake": 1} for b in paytable.bets]):
            edges[s.bet] -= p * Fraction(s.net)
    return outcomes, edges


def _example(pairs: tuple[Any, ...], player: list[int], banker: list[int]) -> RoundResult:
    """A round with these points whose first two cards realise these pair flags."""
    pp, bp, ppp, bpp = pairs

    def hand(points: list[int], pair: bool, perfect: bool, suit: str) -> list[str]:
        cards = [CARD_OF_POINTS[v][0] + suit for v in points]
        if perfect:
            assert points[0] == points[1]
        elif pair:
            cards[1] = cards[1][0] + "D"  # same rank, another suit
        elif points[0] == points[1]:
            assert points[0] == 0, "equal points of different ranks are worth 0"
            cards[1] = "J" + suit
        return cards

    return round_result(1, hand(player, pp, ppp, "S"), hand(banker, bp, bpp, "H"))


def _compositions() -> Iterator[tuple[str, dict[str, int]]]:
    rng = random.Random(20241129)
    yield "six cards, most draws impossible", {"AS": 1, "AH": 1, "5D": 1, "TC": 2, "9S": 1}
    yield "seven cards, two ranks", {"6S": 4, "6H": 1, "7D": 2}
    yield "lopsided sixes and sevens", {"6S": 9, "6H": 7, "7D": 8, "KC": 12, "9C": 2, "6D": 1}
    yield "one suit, random depletion", {r + "H": rng.randint(0, 6) for r in RANKS}
    codes = rng.sample(ALL_CARDS, 12)
    yield "twelve random codes", {c: rng.randint(1, 8) for c in codes}
    yield "tens and naturals only", {"TS": 3, "KD": 2, "8H": 2, "9C": 1, "8S": 1}


@pytest.mark.parametrize(("name", "composition"), list(_compositions()))
def test_agrees_with_the_exact_reference(name: str, composition: dict[str, int]) -> None:
    table = Paytable("seed", "", SEED, "test")
    outcomes, edges = reference(composition, table)
    got = ANALYZER.analyse(composition)
    for outcome, p in outcomes.items():
        assert got.outcomes[outcome] == pytest.approx(float(p), abs=1e-9, rel=0)
    for bet, edge in edges.items():
        assert got.house_edge[bet] == pytest.approx(float(edge), abs=1e-9, rel=0), bet


def test_agrees_with_the_exact_reference_on_a_depleted_eight_deck_shoe() -> None:
    """Every card code present, so the reference goes by rank (perfect pairs left out)."""
    rng = random.Random(7)
    shoe = full_shoe(8)
    for card in rng.sample([c for c in ALL_CARDS for _ in range(8)], 250):
        shoe[card] -= 1
    shoe.update({"6S": 8, "6H": 8, "6D": 8})  # lopsided towards sixes
    bets = {n: s for n, s in SEED.items() if s.rule != "perfect_pair"}
    outcomes, edges = reference(shoe, Paytable("seed", "", bets, "test"), by_rank=True)
    got = ANALYZER.analyse(shoe)
    for outcome, p in outcomes.items():
        assert got.outcomes[outcome] == pytest.approx(float(p), abs=1e-9, rel=0)
    for bet, edge in edges.items():
        assert got.house_edge[bet] == pytest.approx(float(edge), abs=1e-9, rel=0), bet


def test_the_reference_itself_knows_the_tableau() -> None:
    """Guard the reference: one natural-free shoe whose every round is forced."""
    # Only tens: both hands 0, player draws a ten, banker draws a ten: a six-card 0-0 tie.
    outcomes, edges = reference({"TS": 3, "KH": 3}, Paytable("seed", "", SEED, "test"))
    assert outcomes == {"banker": 0, "player": 0, "tie": 1}
    assert edges["tie"] == -8 and edges["player"] == 0 and edges["player_bonus"] == 1


# -- compositions, refusals, live edge ----------------------------------------------------


def test_class_distribution_sums_to_one_even_when_draws_are_impossible() -> None:
    dist = class_distribution({"9S": 3, "9H": 3})  # only naturals: 9-9 ties
    assert dist.sum() == pytest.approx(1) and dist.max() == pytest.approx(1)


def test_fewer_than_six_cards_is_refused() -> None:
    with pytest.raises(CompositionError, match="holds 5 card"):
        ANALYZER.analyse({"AS": 5})


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([1], "JSON object"),
        ({"ZZ": 1}, "not a card code"),
        ({"AS": -1}, ">= 0"),
        ({"AS": 1.5}, ">= 0"),
        ({"AS": True}, ">= 0"),
        ({"TH": 3, "10h": 3}, "same card TH"),
        ({"AS": 2}, "holds 2 card"),
    ],
)
def test_bad_compositions_say_what_is_wrong(obj: object, message: str) -> None:
    with pytest.raises(CompositionError, match=message):
        parse_composition(obj)


def test_compositions_accept_any_spelling_and_missing_codes_are_zero() -> None:
    comp = parse_composition({"10h": 3, " as ": 4})
    assert comp["TH"] == 3 and comp["AS"] == 4 and comp["KD"] == 0 and len(comp) == 52


def test_live_edge_flags_favourable_bets_open_in_the_next_round() -> None:
    # Two ranks only: pairs are likely, so the pair bets turn player-favourable.
    shoe = {"6S": 20, "6H": 20, "TD": 20}
    early = ANALYZER.live_edge(shoe, next_round=10)
    assert early["next_round"] == 10 and early["cards_left"] == 60
    assert {"player_pair", "banker_pair", "either_pair"} <= set(early["advantage"])
    assert all(early["house_edge"][b] < 0 for b in early["advantage"])
    assert "banker" not in early["advantage"]
    late = ANALYZER.live_edge(shoe, next_round=61)  # pairs close after round 60
    assert "player_pair" in late["closed"] and "player_pair" not in late["advantage"]
    assert late["house_edge"]["player_pair"] == early["house_edge"]["player_pair"]
    assert ANALYZER.live_edge(full_shoe(8), 1)["advantage"] == []


def test_payouts_change_the_edges_exactly(tmp_path: Path) -> None:
    path = tmp_path / "tie9.toml"
    path.write_text('extends = "traditional"\n[bets.tie]\nrule = "tie"\npays = { tie = "9:1" }\n')
    nine = Analyzer(paytables.load(str(path))).analyse(full_shoe(8))
    assert nine.house_edge["tie"] * 100 == pytest.approx(4.8440, abs=5e-5)


# -- the commands --------------------------------------------------------------------------


def station(*args: str, stdin: bytes = b"") -> CliResult:
    return run_station(*args, stdin=stdin)


def test_station_odds_json_for_a_full_shoe() -> None:
    run = station("odds", "--decks", "8", "--json")
    assert run.returncode == 0, run.stderr
    (line,) = run.stdout.splitlines()
    doc = orjson.loads(line)
    assert doc["outcomes"]["banker"] == pytest.approx(0.458597, abs=5e-7)
    assert doc["bets"]["banker_no_commission"]["house_edge"] == pytest.approx(0.014581, abs=5e-7)
    assert set(doc["bets"]) == set(SEED)


def test_station_odds_answers_each_composition_line(tmp_path: Path) -> None:
    path = tmp_path / "left.jsonl"
    path.write_text('{"AS": 7, "TD": 8}\n\n{"QS": 1}\nnot json\n{"9H": 4, "9D": 4}\n')
    run = station("odds", "--remaining", str(path), "--json")
    rows = [orjson.loads(x) for x in run.stdout.splitlines()]
    assert run.returncode == 1
    assert [sorted(r) for r in rows] == [
        ["bets", "outcomes"],
        ["error", "line"],
        ["error", "line"],
        ["bets", "outcomes"],
    ]
    assert rows[1]["line"] == 3 and "holds 1 card" in rows[1]["error"]
    assert rows[3]["outcomes"]["tie"] == 1.0
    assert b"line 4: not a JSON object" in run.stderr
    expected = ANALYZER.analyse({"AS": 7, "TD": 8}).to_json()
    assert rows[0]["bets"]["banker"]["house_edge"] == expected["bets"]["banker"]["house_edge"]


def test_station_odds_readable_table_and_stdin() -> None:
    run = station("odds", "--remaining", "-", stdin=b'{"6S": 20, "6H": 20, "TD": 20}\n')
    assert run.returncode == 0, run.stderr
    text = run.stdout.decode()
    assert "banker" in text and "player_pair" in text and "player-favourable" in text
    plain = station("odds", "--paytable", "no_commission").stdout.decode()
    assert "1.4581%" in plain and "98.5419%" in plain and "paytable no_commission" in plain


def test_station_odds_usage_errors(tmp_path: Path) -> None:
    assert station("odds", "--paytable", "nope").returncode == 2
    assert station("odds", "--remaining", str(tmp_path / "missing.jsonl")).returncode == 2
    assert station("odds", "--decks", "8", "--remaining", "-").returncode == 2


#: A cell of a text table: words one space apart (columns are two or more apart).
CELL = re.compile(r"\S+(?: \S+)*")


def test_station_odds_columns_stay_apart_whatever_the_names_and_values(tmp_path: Path) -> None:
    """A long bet name, a wide round count and a huge edge each widen their column: the
    columns stay two spaces apart and line up with the header."""
    long_name = "progressive_jackpot_for_a_natural_nine_on_both_hands"
    path = tmp_path / "long.toml"
    path.write_text(
        f'extends = "traditional"\n[bets.{long_name}]\nrule = "tie"\n'
        'pays = { tie = "100000:1" }\nrounds = 1000000\n'
    )
    run = station("odds", "--paytable", str(path))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.decode().splitlines()
    header = lines.index(next(x for x in lines if x.startswith("bet ")))
    table = lines[header:]
    ends = [m.end() for m in CELL.finditer(table[0])][1:4]
    for line in table[1:]:
        cells = [m.group() for m in CELL.finditer(line)]
        assert len(cells) >= 5, line
        name, rounds, edge, rtp = cells[:4]
        assert name in SEED or name == long_name
        assert re.fullmatch(r"all|1-\d+", rounds) and edge.endswith("%") and rtp.endswith("%")
        # the right-aligned columns end under their header
        assert [m.end() for m in CELL.finditer(line)][1:4] == ends, line
    row = [m.group() for m in CELL.finditer(next(x for x in table if x.startswith(long_name)))]
    assert row[1] == "1-1000000" and row[2].startswith("-951")  # tie pays 100000:1
    outcomes = lines[lines.index("") + 1 : header - 1]
    assert [len(x) for x in outcomes] == [len(outcomes[0])] * len(outcomes)  # aligned


def _round_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "shoe"},
        {"type": "card", "card": "AS"},
        {"type": "card", "card": "2S"},
    ]
    rounds = [(["4S", "5H"], ["3D", "4C"]), (["TS", "4H", "9C"], ["KD", "6S"])]
    for player, banker in rounds:
        events.append({"type": "close_bets"})
        order = [player[0], banker[0], player[1], banker[1], *player[2:], *banker[2:]]
        events += [{"type": "card", "card": c} for c in order]
    events += [
        {"type": "close_bets"},
        {"type": "card", "card": "7H"},
        {"type": "void"},
        {"type": "end_shoe"},
    ]
    return events


def test_replay_odds_adds_the_live_edge_after_each_round(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(e) for e in _round_events()) + b"\n")
    run = station("replay", "--odds", str(path))
    assert run.returncode == 0, run.stderr
    rows = [orjson.loads(x) for x in run.stdout.splitlines()]
    with_odds = [r for r in rows if "odds" in r]
    assert [r["seq"] for r in with_odds] == [8, 14, 17]  # two results and the void
    first = with_odds[0]["odds"]
    seen = ["AS", "2S", "4S", "3D", "5H", "4C"]
    shoe = full_shoe(8)
    for c in seen:
        shoe[c] -= 1
    expected = ANALYZER.live_edge(shoe, 2)
    assert first["next_round"] == 2 and first["cards_left"] == 410
    assert first["house_edge"] == pytest.approx(expected["house_edge"], abs=1e-15)
    assert first["advantage"] == [] and first["closed"] == []
    assert with_odds[2]["voided_round"] == 3 and with_odds[2]["odds"]["next_round"] == 4
    assert with_odds[2]["odds"]["cards_left"] == 416 - 12
    plain = station("replay", str(path))
    assert all("odds" not in orjson.loads(x) for x in plain.stdout.splitlines())


def test_replay_odds_is_null_when_the_shoe_is_over(tmp_path: Path) -> None:
    events = [*_round_events()[:8], {"type": "end_shoe"}]
    events.insert(3, {"type": "cut"})  # the cut card during the burn: round 1 is the last
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(e) for e in events) + b"\n")
    rows = [orjson.loads(x) for x in station("replay", "--odds", str(path)).stdout.splitlines()]
    (row,) = [r for r in rows if "odds" in r]
    assert row["result"]["round"] == 1 and row["odds"] is None


def test_replay_odds_with_a_bad_paytable_is_a_usage_error() -> None:
    run = station("replay", "--odds", "--paytable", "nope", "-")
    assert run.returncode == 2 and b"no paytable 'nope'" in run.stderr


def test_settlement_stakes_are_decimal() -> None:
    result = round_result(1, ["4S", "5H"], ["3D", "4C"])
    (s,) = settle(TRADITIONAL, 1, result, [{"bet": "player_natural", "stake": "2"}])
    assert s.net == Decimal(7)


def test_station_odds_takes_the_decks_from_the_config(tmp_path: Path) -> None:
    config = tmp_path / "station.toml"
    config.write_text("[table]\ndecks = 1\n")
    from_config = station("odds", "--config", str(config), "--json")
    explicit = station("odds", "--decks", "1", "--json")
    assert from_config.returncode == 0 and from_config.stdout == explicit.stdout
    assert from_config.stdout != station("odds", "--json").stdout  # 8 decks otherwise
    bad = station("odds", "--config", str(tmp_path / "missing.toml"))
    assert bad.returncode == 2 and b"missing.toml" in bad.stderr
