"""Exact odds of one round dealt from a given shoe: outcome probabilities and every bet's edge.

Pure computation (no I/O), shared by `station odds`, the live edge of `station replay
--odds`, and the service's `/api/odds` (the dashboard): `Analyzer(paytable).analyse(composition)`,
where a composition maps card codes to the copies left in the shoe.

Exact, not simulated. Every bet except the pairs depends on the round only through
(player total, banker total, player cards, banker cards): 400 classes. Cards are dealt
without replacement, so a sequence of m cards whose point values form the multiset K has
probability  prod_v falling(n_v, k_v) / falling(N, m)  whatever their order: it depends
on the multiset, not the sequence. So once per tableau we enumerate every round
(10^4 starts, then the third cards the tableau deals) and count, for each class, how many
orderings of each multiset of 4, 5 or 6 point values give it: three constant integer
matrices (class x multiset; 497 + 1722 + 4739 multisets occur). Analysing a shoe is then
one product of falling factorials per multiset and three matrix products, with the
paytable's net returns folded into the matrices: about 0.25 ms (`make bench`). Up to 8
decks every falling-factorial product is below 2^53, an exact integer in float64; what
rounding remains is double-precision summation (relative 1e-15, far inside the 1e-9 the
tests demand against an exact Fraction enumeration). The pair bets depend on ranks and
suits, not points: closed forms over the 13 rank counts and the 52 card counts.

Modelling decisions:
- A composition must hold at least 6 cards (the most one round can take), so every
  round can be completed; a smaller one is refused (`CompositionError`). A real shoe is
  cut long before that.
- "either_pair pays once": one payout whether one or both hands pair (outcome key `both`
  defaults to the `pair` odds); the same for perfect_pair. A perfect pair is two
  copies of the same card code (same rank and suit), possible in a multi-deck shoe.
- House edge = minus the expected net return per unit staked, pushes counted as
  staked (so banker 1.0579% at 8 decks); RTP = 1 - house edge.
- An unreadable card that was never identified is left in the composition: it is a
  uniformly random unseen card, and dealing after removing a random card is the same
  distribution as dealing from the whole (exchangeability), so the odds stay exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from station.core.cards import ALL_CARDS, POINTS, RANKS, parse_card
from station.core.paytables import LOSE, BetSpec, Paytable
from station.core.paytables import load as load_paytable
from station.core.rules import PUNTO_BANCO, Tableau

MIN_CARDS = 6  # the most cards one round can take
ADVANTAGE_BELOW = -1e-12  # an edge under this is player-favourable (not float noise)
OUTCOMES = ("banker", "player", "tie")
POINT_RULES = (
    "player",
    "banker",
    "tie",
    "natural",
    "bonus",
    "lucky_six",
    "lucky_seven",
    "super_lucky_seven",
)
PAIR_RULES = ("pair", "perfect_pair")

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

# Class index of a round: ((player cards - 2) * 2 + banker cards - 2) * 100 + pt * 10 + bt.
_CLASS_PC, _CLASS_BC, _CLASS_PT, _CLASS_BT = (
    a.ravel()
    for a in np.meshgrid(
        np.arange(2, 4), np.arange(2, 4), np.arange(10), np.arange(10), indexing="ij"
    )
)
CLASSES = 400


class CompositionError(ValueError):
    """A composition that cannot be analysed: not card -> copies, or fewer than 6 cards."""


# -- compositions -----------------------------------------------------------------------


def full_shoe(decks: int) -> dict[str, int]:
    """The composition of a fresh shoe of `decks` 52-card decks."""
    if decks < 1:
        raise CompositionError(f"a shoe holds at least 1 deck, got {decks}")
    return dict.fromkeys(ALL_CARDS, decks)


def parse_composition(obj: object) -> dict[str, int]:
    """A composition from JSON: `{"AS": 7, "TD": 8, ...}`, codes in any spelling that
    `parse_card` accepts; a missing code means 0 copies. Raises `CompositionError`."""
    if not isinstance(obj, dict):
        raise CompositionError(
            'a composition is a JSON object {"AS": 7, "TD": 8, ...} (card code -> copies left)'
        )
    counts = dict.fromkeys(ALL_CARDS, 0)
    seen: dict[str, object] = {}
    for key, copies in obj.items():
        card = parse_card(key)
        if card is None:
            raise CompositionError(f"{key!r} is not a card code (e.g. AS, TD, 9h)")
        if card in seen:
            raise CompositionError(f"{key!r} and {seen[card]!r} are the same card {card}")
        seen[card] = key
        if type(copies) is not int or copies < 0:
            raise CompositionError(f"copies of {card} must be a whole number >= 0, got {copies!r}")
        counts[card] = copies
    check_composition(counts)
    return counts


def check_composition(composition: Mapping[str, int]) -> int:
    """The number of cards in the composition; refuses one that cannot deal a round."""
    total = sum(composition.values())
    if total < MIN_CARDS:
        raise CompositionError(
            f"the shoe holds {total} card(s); one round may need "
            f"{MIN_CARDS}, so its odds are not defined"
        )
    return total


# -- the constant tables: every round a tableau can deal ----------------------------------


@dataclass(frozen=True)
class RoundTables:
    """For m = 4, 5, 6 cards: the multisets of point values (rows of counts per value 0..9)
    and, per class, the number of orderings of each multiset that deal a round of it."""

    multisets: tuple[Ints, Ints, Ints]
    orderings: tuple[Floats, Floats, Floats]  # (CLASSES, multisets) each
    # Per multiset, the m entries v * 7 + k_v of the falling-factorial table to multiply
    # (one per distinct value, padded with FACTOR_ONE): m lookups, not 10.
    factors: tuple[Ints, Ints, Ints]


FACTOR_ONE = 70  # the index of a constant 1.0 after the 10 x 7 falling-factorial table


def _factor_index(multisets: Ints, cards: int) -> Ints:
    """Each multiset's falling-factorial indices: value * 7 + copies for each point value it
    holds (at most `cards` of them, in value order), the constant 1.0 for the rest."""
    order = np.argsort(multisets == 0, axis=1, kind="stable")[:, :cards]
    copies = np.take_along_axis(multisets, order, axis=1)
    return np.where(copies > 0, order * 7 + copies, FACTOR_ONE).astype(np.int64)


_TABLES: dict[int, tuple[Tableau, RoundTables]] = {}


def round_tables(tableau: Tableau = PUNTO_BANCO) -> RoundTables:
    """The round tables of a tableau, built on first use (a few tenths of a second) and kept."""
    cached = _TABLES.get(id(tableau))
    if cached is None or cached[0] is not tableau:
        cached = _TABLES[id(tableau)] = (tableau, _build_round_tables(tableau))
    return cached[1]


def _build_round_tables(tableau: Tableau) -> RoundTables:
    """Enumerate all 10^6 sequences of six point values once (vectorised) and keep, for
    each round, only the cards it uses: a round of m cards is counted once, through the
    sequence whose unused trailing values are 0."""
    # Small integers (points, counts): int8 / int16 / int32 arrays of 10^6 are an eighth to
    # a half of int64's memory traffic, which is most of the build's time.
    seq = np.indices((10,) * 6, dtype=np.int8).reshape(6, -1)
    p1, b1, p2, b2, c5, c6 = seq
    pt2, bt2 = (p1 + p2) % 10, (b1 + b2) % 10
    natural_at = np.array([[tableau.is_natural(p, b) for b in range(10)] for p in range(10)])
    player_draws_at = np.array([tableau.player_draws(p) for p in range(10)])
    banker_draws_at = np.array(
        [[tableau.banker_draws(b, None if p3 == 10 else p3) for p3 in range(11)] for b in range(10)]
    )
    natural = natural_at[pt2, bt2]
    p_draw = ~natural & player_draws_at[pt2]
    b_draw_after_p = p_draw & banker_draws_at[bt2, c5]
    b_draw_alone = ~natural & ~p_draw & banker_draws_at[bt2, 10]
    pt = np.where(p_draw, (pt2 + c5) % 10, pt2)
    bt = np.where(b_draw_after_p, (bt2 + c6) % 10, np.where(b_draw_alone, (bt2 + c5) % 10, bt2))
    pc = 2 + p_draw
    bc = 2 + (b_draw_after_p | b_draw_alone)
    m = pc + bc
    keep = ((m >= 5) | (c5 == 0)) & ((m >= 6) | (c6 == 0))
    cls = ((pc - 2) * 2 + (bc - 2)).astype(np.int16) * 100 + pt * 10 + bt
    powers = 7 ** np.arange(10, dtype=np.int32)  # 7^9 * 6 < 2^31
    multisets: list[Ints] = []
    orderings: list[Floats] = []
    for cards in (4, 5, 6):
        rows = keep & (m == cards)
        code = np.zeros(int(rows.sum()), dtype=np.int32)
        for position in range(cards):
            code += powers[seq[position][rows]]
        unique, inverse = np.unique(code, return_inverse=True)
        cell = cls[rows].astype(np.int64) * unique.size + inverse.ravel()
        counts = np.bincount(cell, minlength=CLASSES * unique.size).astype(np.float64)
        counts = counts.reshape(CLASSES, unique.size)
        multisets.append(((unique[:, None] // powers[None, :]) % 7).astype(np.int64))
        orderings.append(counts)
    factors = [_factor_index(ks, cards) for ks, cards in zip(multisets, (4, 5, 6), strict=True)]
    return RoundTables(
        (multisets[0], multisets[1], multisets[2]),
        (orderings[0], orderings[1], orderings[2]),
        (factors[0], factors[1], factors[2]),
    )


def falling(n: int, k: int) -> int:
    """n (n-1) ... (n-k+1): ordered draws of k cards out of n."""
    out = 1
    for i in range(k):
        out *= n - i
    return out


def point_counts(composition: Mapping[str, int]) -> list[int]:
    counts = [0] * 10
    for card, copies in composition.items():
        counts[POINTS[card]] += copies
    return counts


def class_distribution(composition: Mapping[str, int], tableau: Tableau = PUNTO_BANCO) -> Floats:
    """P(round class) for one round dealt from the composition, shape (CLASSES,)."""
    total = check_composition(composition)
    tables = round_tables(tableau)
    weights = _multiset_weights(point_counts(composition), tables)
    out = np.zeros(CLASSES)
    for cards, orderings, weight in zip((4, 5, 6), tables.orderings, weights, strict=True):
        out += (orderings @ weight) / falling(total, cards)
    return out


def _multiset_weights(counts: list[int], tables: RoundTables) -> list[Floats]:
    """falling factorial products prod_v falling(n_v, k_v) for every multiset."""
    n = np.asarray(counts, dtype=np.float64)
    table = np.ones(FACTOR_ONE + 1)
    grid = table[:FACTOR_ONE].reshape(10, 7)  # grid[v, k] = falling(n_v, k)
    for k in range(1, 7):
        grid[:, k] = grid[:, k - 1] * np.maximum(n - (k - 1), 0.0)
    return [table[index].prod(axis=1) for index in tables.factors]


# -- pairs: closed forms over ranks and card codes --------------------------------------


def pair_probabilities(groups: list[int], total: int) -> tuple[float, float]:
    """(P(a given hand's first two cards fall in one group), P(both hands' do)), the
    groups being ranks (pairs) or card codes (perfect pairs). Hands are dealt from the
    same cards, so both is not the square of one."""
    two = [c * (c - 1) for c in groups]
    four = sum(c * (c - 1) * (c - 2) * (c - 3) for c in groups)
    one = sum(two) / falling(total, 2)  # exact integers, one correctly rounded division
    both = (four + sum(two) ** 2 - sum(t * t for t in two)) / falling(total, 4)
    return one, both


def _pair_edge(spec: BetSpec, one: float, both: float) -> float:
    """Minus the expected net return of a pair bet given its hand(s)' pair probabilities."""
    pays = spec.pays
    if spec.side in ("player", "banker"):
        ret = one * float(pays["pair"]) + (1 - one) * float(LOSE)
    else:
        exactly_one = 2 * one - 2 * both
        none = 1 - exactly_one - both
        ret = exactly_one * float(pays["pair"]) + both * float(pays["both"]) + none * float(LOSE)
    return 0.0 - ret


# -- point rules over the 400 classes ---------------------------------------------------


def rule_events(spec: BetSpec, tableau: Tableau = PUNTO_BANCO) -> dict[str, npt.NDArray[np.bool_]]:
    """For a bet on a point rule, the classes in which each outcome key happens."""
    pt, bt, pc, bc = _CLASS_PT, _CLASS_BT, _CLASS_PC, _CLASS_BC
    naturals = np.array(sorted(tableau.naturals))
    p_nat, b_nat = (pc == 2) & np.isin(pt, naturals), (bc == 2) & np.isin(bt, naturals)
    p_win, b_win, tie = pt > bt, bt > pt, pt == bt
    rule, side = spec.rule, spec.side
    if rule == "player":
        return {"win": p_win, "tie": tie}
    if rule == "banker":
        return {"win": b_win & (bt != 6), "win_with_6": b_win & (bt == 6), "tie": tie}
    if rule == "tie":
        return {"tie": tie}
    if rule == "natural":
        return {"natural": p_nat if side == "player" else b_nat}
    if rule == "bonus":
        win, nat = (p_win, p_nat) if side == "player" else (b_win, b_nat)
        events = {"natural_win": win & nat, "natural_tie": tie & p_nat & b_nat}
        margin = np.abs(pt - bt)
        for m in range(1, 10):
            events[f"win_by_{m}"] = win & ~nat & (margin == m)
        return events
    if rule == "lucky_six":
        six = b_win & (bt == 6)
        return {"two_cards": six & (bc == 2), "three_cards": six & (bc == 3)}
    if rule == "lucky_seven":
        seven = p_win & (pt == 7)
        return {"two_cards": seven & (pc == 2), "three_cards": seven & (pc == 3)}
    if rule == "super_lucky_seven":
        seven_six = p_win & (pt == 7) & (bt == 6)
        return {
            name: seven_six & (pc + bc == n)
            for n, name in ((4, "four_cards"), (5, "five_cards"), (6, "six_cards"))
        }
    raise ValueError(f"{spec.name}: rule {rule!r} is not a point rule")


def net_returns(spec: BetSpec, tableau: Tableau = PUNTO_BANCO) -> Floats:
    """Net return per unit staked of a point-rule bet in each class (a loss where no key)."""
    net = np.full(CLASSES, float(LOSE))
    for key, where in rule_events(spec, tableau).items():
        net[where] = float(spec.pays[key])
    return net


# -- the analysis ------------------------------------------------------------------------


@dataclass(frozen=True)
class Analysis:
    """One round's odds from one shoe: P(banker/player/tie) and each bet's house edge."""

    cards: int
    outcomes: dict[str, float]
    house_edge: dict[str, float]

    def rtp(self, bet: str) -> float:
        return 1.0 - self.house_edge[bet]

    def to_json(self) -> dict[str, Any]:
        """The `station odds --json` object: fractions of 1, not percent."""
        return {
            "outcomes": dict(self.outcomes),
            "bets": {
                name: {"house_edge": edge, "rtp": 1.0 - edge}
                for name, edge in self.house_edge.items()
            },
        }


class OddsNotOffered(ValueError):
    """The odds are computed for punto banco only: a cercle game's rounds turn on the
    hands' options (draw or stand at 5, the banker's choices), which no shoe decides."""


def odds_offered(game: str) -> str | None:
    """None when odds are offered for `game`; else why not, in words for the dashboard."""
    if game == "punto_banco":
        return None
    return (
        f"odds are offered for punto banco only; this table plays {game.replace('_', ' ')}, "
        "whose rounds turn on the players' draw-or-stand options"
    )


def seed_bets(paytable: Paytable) -> dict[str, BetSpec]:
    """The bets `station odds` reports: the paytable's, plus `banker_no_commission` (the
    shipped no-commission banker bet) for comparison, unless the paytable names one.
    `OddsNotOffered` for a paytable of a cercle game."""
    why = odds_offered(paytable.game)
    if why is not None:
        raise OddsNotOffered(f"paytable {paytable.name}: {why}")
    bets = dict(paytable.bets)
    bets.setdefault("banker_no_commission", load_paytable("no_commission").bets["banker"])
    return bets


class Analyzer:
    """A paytable compiled for fast analysis: its point bets' net returns are folded into
    the round tables once, so each analysis is three small matrix products."""

    def __init__(
        self,
        bets: Paytable | Mapping[str, BetSpec],
        tableau: Tableau = PUNTO_BANCO,
    ) -> None:
        if isinstance(bets, Paytable):
            why = odds_offered(bets.game)
            if why is not None:
                raise OddsNotOffered(f"paytable {bets.name}: {why}")
            bets = bets.bets
        self.bets: dict[str, BetSpec] = dict(bets)
        self.tableau = tableau
        self.tables = round_tables(tableau)
        self._point = [n for n, s in self.bets.items() if s.rule in POINT_RULES]
        self._pair = [n for n, s in self.bets.items() if s.rule in PAIR_RULES]
        unknown = set(self.bets) - set(self._point) - set(self._pair)
        if unknown:
            raise ValueError(f"no odds for the rule(s) of {', '.join(sorted(unknown))}")
        winner = [_CLASS_BT > _CLASS_PT, _CLASS_PT > _CLASS_BT, _CLASS_PT == _CLASS_BT]
        self._rows = np.vstack(
            [np.asarray(w, dtype=np.float64) for w in winner]
            + [net_returns(self.bets[n], tableau) for n in self._point]
        )
        self._folded = tuple(self._rows @ o for o in self.tables.orderings)

    def analyse(self, composition: Mapping[str, int]) -> Analysis:
        """Exact odds of the next round dealt from `composition` (card code -> copies)."""
        total = check_composition(composition)
        weights = _multiset_weights(point_counts(composition), self.tables)
        rows = np.zeros(self._rows.shape[0])
        for cards, folded, weight in zip((4, 5, 6), self._folded, weights, strict=True):
            rows += (folded @ weight) / falling(total, cards)
        return self._analysis(total, rows, composition)

    def analyse_distribution(
        self, distribution: Floats, composition: Mapping[str, int]
    ) -> Analysis:
        """The analysis from a class distribution computed some other way (a reference)."""
        total = check_composition(composition)
        return self._analysis(total, self._rows @ distribution, composition)

    def _analysis(self, total: int, rows: Floats, composition: Mapping[str, int]) -> Analysis:
        outcomes = dict(zip(OUTCOMES, (float(x) for x in rows[:3]), strict=True))
        edge = {name: 0.0 - float(x) for name, x in zip(self._point, rows[3:], strict=True)}
        if self._pair:
            ranks = [0] * len(RANKS)
            for card, copies in composition.items():
                ranks[RANKS.index(card[0])] += copies
            codes = [composition.get(card, 0) for card in ALL_CARDS]
            probs = {
                "pair": pair_probabilities(ranks, total),
                "perfect_pair": pair_probabilities(codes, total),
            }
            for name in self._pair:
                spec = self.bets[name]
                edge[name] = _pair_edge(spec, *probs[spec.rule])
        return Analysis(total, outcomes, {name: edge[name] for name in self.bets})

    def live_edge(self, composition: Mapping[str, int], next_round: int) -> dict[str, Any]:
        """The odds of round `next_round` of the shoe for surveillance: every bet's house
        edge, and `advantage`, the bets offered in that round whose edge is negative."""
        analysis = self.analyse(composition)
        closed = [n for n, s in self.bets.items() if not s.open_in(next_round)]
        advantage = [
            n for n, e in analysis.house_edge.items() if e < ADVANTAGE_BELOW and n not in closed
        ]
        return {
            "next_round": next_round,
            "cards_left": analysis.cards,
            "outcomes": analysis.outcomes,
            "house_edge": analysis.house_edge,
            "advantage": advantage,
            "closed": closed,
        }
