"""How a dealer turns the discards into the next shoe: the ways a round's cards reach the
discard rack, and the shuffles casinos use (issue 28: the weak-shuffle check is
measured against these).

Gathering (`GATHERINGS`): the burn cards go to the rack first, then each round's cards
as the dealer picks them up: in dealt order, each round reversed, the banker's cards
first (each hand's cards in dealt order), the player's (the pontes') first, or each
round scrambled (an order the station cannot guess). The cards never dealt (behind the
cut card) go on top, in their order.

Shuffles (`parse_model`, steps joined by "+"): `uniform` (fair), `none` (the discards
as they are: a repeated shoe), `riffle:N` (N Gilbert-Shannon-Reeds riffles, 1-16),
`strip:N` (N packets pulled off onto a new pile, 8 by default), `box:N` (a box cut in N
blocks, 3 by default), `stack:N` (N passes of the stack shuffle of a shoe in piles: the
discards split into two stacks, a grab of about half a deck taken off each, the two
riffled together and put on a new pile, until both stacks are used; 1 pass by
default). E.g. `stack:2+strip+riffle:1+box`.

`deal` deals a shoe by the rules through the core table (punto banco), as fast as a
benchmark needs; `simulate_shuffled` is `station simulate --shuffle`: the simulated
dealer deals each shoe, and the next one is its discards gathered and shuffled.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drivers.sim.dealer import Dealer
from drivers.sim.deals import Burn, CutPolicy, deal_of
from drivers.sim.shoe import (
    DEFAULT_CUT_DEPTH,
    CutDepth,
    VirtualShoe,
    box_cut,
    resolve_cut_depth,
    riffle,
    strip_cut,
)
from station.core.table import Table

#: How a round's cards reach the discard rack (see the module docstring).
GATHERINGS = ("dealt", "reversed", "banker-first", "player-first", "scrambled")
#: The steps of a shuffle model.
STEPS = ("uniform", "none", "riffle", "strip", "box", "stack")
#: Each step's count when none is given, and the most it may ask for.
DEFAULT_COUNT = {"uniform": 1, "none": 1, "riffle": 1, "strip": 8, "box": 3, "stack": 1}
MOST = {"uniform": 1, "none": 1, "riffle": 16, "strip": 64, "box": 64, "stack": 8}
#: Cards in a grab of the stack shuffle, on average (half a deck).
GRAB = 26


@dataclass(frozen=True, slots=True)
class DealtCard:
    """A card that came out of the shoe as the station saw it: its round (0: the burn,
    or no round) and its role (`P1`, `B3`, `T2.1`, ...; None for a burn or a refused
    card)."""

    card: str
    round: int
    role: str | None


def parse_model(text: str) -> list[tuple[str, int]]:
    """`"riffle:3+strip+box"` -> [("riffle", 3), ("strip", 8), ("box", 3)]; ValueError
    saying what is accepted otherwise."""
    steps: list[tuple[str, int]] = []
    for part in text.split("+"):
        name, colon, count = part.strip().partition(":")
        if name not in STEPS:
            raise ValueError(
                f"{part.strip()!r} is not a shuffle step; use {', '.join(STEPS)} joined by +, "
                "with a count after a colon (e.g. riffle:3+strip+box)"
            )
        try:
            times = int(count) if colon else DEFAULT_COUNT[name]
        except ValueError:
            raise ValueError(
                f"{part.strip()!r}: the count after the colon must be a number"
            ) from None
        if not 1 <= times <= MOST[name]:
            raise ValueError(f"{part.strip()!r}: the count must be between 1 and {MOST[name]}")
        steps.append((name, times))
    return steps


def stack_shuffle(cards: list[str], rng: random.Random, passes: int = 1) -> list[str]:
    """The stack shuffle of a shoe in piles, `passes` times: two stacks, a grab of about
    GRAB cards off each riffled together onto a new pile, until both are used."""
    out = list(cards)
    for _ in range(passes):
        half = rng.getrandbits(len(out)).bit_count() if out else 0
        left, right = out[:half], out[half:]
        piles: list[list[str]] = []
        while left or right:
            a = rng.randint(GRAB * 3 // 4, GRAB * 5 // 4)
            b = rng.randint(GRAB * 3 // 4, GRAB * 5 // 4)
            piles.append(riffle(left[:a] + right[:b], rng))
            left, right = left[a:], right[b:]
        out = [card for pile in reversed(piles) for card in pile]  # each grab on top
    return out


def shuffle(cards: Sequence[str], model: str, rng: random.Random) -> list[str]:
    """`cards` (the discards, top first) shuffled by `model` (`parse_model`)."""
    out = list(cards)
    for name, times in parse_model(model):
        if name == "uniform":
            rng.shuffle(out)
        elif name == "riffle":
            for _ in range(times):
                out = riffle(out, rng)
        elif name == "strip":
            out = strip_cut(out, rng, times)
        elif name == "box":
            out = box_cut(out, rng, times)
        elif name == "stack":
            out = stack_shuffle(out, rng, times)
    return out


def _hand_rank(role: str | None, banker_first: bool) -> int:
    """Where a card's hand goes when a round is gathered hand by hand."""
    if role is None:
        return -1
    banker = role.startswith("B")
    if banker:
        return 0 if banker_first else 9
    return 1 + (int(role[1]) if role.startswith("T") else 0)


def gather(
    dealt: Sequence[DealtCard], rest: Sequence[str], how: str, rng: random.Random
) -> list[str]:
    """The discards, top first: `dealt` (in the order the cards came out) gathered round
    by round the `how` way (GATHERINGS), then `rest`, the cards never dealt."""
    if how not in GATHERINGS:
        raise ValueError(f"{how!r} is not a gathering order; use {', '.join(GATHERINGS)}")
    out: list[str] = []
    i = 0
    while i < len(dealt):
        j = i
        while j < len(dealt) and dealt[j].round == dealt[i].round:
            j += 1
        group = list(dealt[i:j])
        if dealt[i].round > 0:  # the burn stays in dealt order
            if how == "reversed":
                group.reverse()
            elif how in ("banker-first", "player-first"):
                first = how == "banker-first"
                group.sort(key=lambda c: _hand_rank(c.role, first))  # stable: dealt order
            elif how == "scrambled":
                rng.shuffle(group)
        out.extend(c.card for c in group)
        i = j
    out.extend(rest)
    return out


def deal(
    order: Sequence[str], decks: int, cut_depth: CutDepth
) -> tuple[list[DealtCard], list[str]]:
    """Deal a punto banco shoe holding `order` (top first) by the rules, the cut card
    `cut_depth` from the bottom: the cards that came out as the station saw them, and
    those left in the shoe."""
    cut_at = len(order) - resolve_cut_depth(cut_depth, len(order))
    table = Table(decks=decks, gated=False)
    table.apply({"type": "shoe"})
    dealt: list[DealtCard] = []
    for i, card in enumerate(order):
        if i == cut_at:
            table.apply({"type": "cut"})
        verdict = table.apply({"type": "card", "card": card})
        dealt.append(DealtCard(card, verdict.get("round") or 0, verdict.get("role")))
        if not table.in_play:
            break
    return dealt, list(order[len(dealt) :])


def seen_cards(events: Sequence[Mapping[str, Any]], table: Table) -> list[DealtCard]:
    """The cards out of the shoe in one shoe's `events`, each with the round and role the
    station's `table` gave it (an unread card: those of the supervisor's `resume` naming
    it; a foreign card is not one of the shoe's)."""
    out: list[DealtCard] = []
    for event in events:
        verdict = table.apply(dict(event))
        kind = event.get("type")
        if event.get("fault") == "foreign":
            continue
        code = event.get("card")
        if kind == "card" and code is None:
            continue  # unread: the supervisor's resume names it
        if kind in ("card", "resume") and code is not None:
            out.append(DealtCard(str(code), verdict.get("round") or 0, verdict.get("role")))
    return out


def simulate_shuffled(
    seed: int,
    model: str,
    gathering: str = "dealt",
    *,
    decks: int | None = None,
    shoes: int = 1,
    cut_depth: CutDepth = DEFAULT_CUT_DEPTH,
    faults: Mapping[str, float] | None = None,
    gated: bool = True,
    cut_policy: CutPolicy | None = None,
    rounds: int | None = None,
    game: str = "punto_banco",
    burn: Burn | None = None,
    option_draw: float = 0.5,
) -> Iterator[Mapping[str, Any]]:
    """`station simulate --shuffle MODEL --gather ORDER`: `drivers.sim.stream.simulate`'s
    stream (the same arguments, the same seeds: the first shoe is the same), each shoe
    after the first the last one's discards gathered the `gathering` way and shuffled by
    `model`. A core table beside the dealer says each card's round and role, as the
    station sees them. Arguments are checked before the first event (ValueError)."""
    parse_model(model)
    if gathering not in GATHERINGS:
        raise ValueError(f"{gathering!r} is not a gathering order; use {', '.join(GATHERINGS)}")
    decks = deal_of(game).decks if decks is None else decks
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise ValueError(f"decks must be a whole number of at least 1, got {decks!r}")
    resolve_cut_depth(cut_depth, 52 * decks)
    root = random.Random(seed)
    rng = random.Random(root.getrandbits(64))
    dealer = Dealer(
        random.Random(root.getrandbits(64)),
        decks=decks,
        gated=gated,
        cut_policy=cut_policy,
        faults=faults,
        rounds=rounds,
        game=game,
        burn=burn,
        option_draw=option_draw,
        options=random.Random(root.getrandbits(64)),
    )
    table = Table(game=game, decks=decks, gated=gated, cut_policy=cut_policy, burn=burn)
    return _shuffled_shoes(dealer, table, rng, shoes, cut_depth, model, gathering)


def _shuffled_shoes(
    dealer: Dealer,
    table: Table,
    rng: random.Random,
    shoes: int,
    cut_depth: CutDepth,
    model: str,
    gathering: str,
) -> Iterator[Mapping[str, Any]]:
    shoe = VirtualShoe(dealer.decks, rng, cut_depth)
    discards: list[str] = []
    for number in range(shoes):
        if number:
            depth = resolve_cut_depth(cut_depth, shoe.size)
            shoe = VirtualShoe.stacked(shuffle(discards, model, rng), depth, dealer.decks)
        events = []
        for event in dealer.deal_shoe(shoe):
            events.append(event)
            yield event
        order = shoe.order
        dealt = order[: shoe.cards_dealt]
        seen = seen_cards(events, table)
        if [c.card for c in seen] != dealt:  # a card the events do not show: no rounds
            seen = [DealtCard(card, 0, None) for card in dealt]
        discards = gather(seen, order[shoe.cards_dealt :], gathering, rng)
