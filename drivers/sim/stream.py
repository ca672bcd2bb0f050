"""The simulated dealer's event stream (`station simulate`): shoes shuffled from one seed
and dealt one after another by a `Dealer`.

Determinism: all randomness comes from one `random.Random(seed)`. It seeds three
streams: one shuffles the shoes, one decides the faults, one the options' draws, so a
seed gives the same first shoe whatever the fault rates, and the same arguments give
the same stream, event for event.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping

from drivers.sim.dealer import Dealer, Event
from drivers.sim.deals import Burn, CutPolicy, deal_of
from drivers.sim.shoe import (
    DEFAULT_CUT_DEPTH,
    CutDepth,
    VirtualShoe,
    parse_shuffle_model,
    reshuffled,
    resolve_cut_depth,
)
from station.core.cards import ALL_CARDS


def simulate(
    seed: int,
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
    shuffle: str | None = None,
) -> Iterator[Event]:
    """The events of `shoes` shoes dealt by a simulated dealer, reproducible from `seed`.

    `game` is one of `drivers.sim.deals.GAME_NAMES`; `decks`, `cut_policy` and `burn`
    default to the game's (punto banco: 8, one_more, reveal; the cercle games: 6, stop,
    none). `cut_depth` is the number of cards behind the cut card (int) or that fraction
    of the shoe (float in 0..1); `faults` maps fault names to rates (see
    `drivers.sim.faults`; a key `all` sets every fault this table can detect, named faults
    override it); `rounds` caps the rounds of each shoe, after which the supervisor ends
    the shoe; `option_draw` is the chance that a hand with an option draws. `shuffle` (a
    model of `parse_shuffle_model`, e.g. "riffle:1"): each shoe after the first is its
    previous shoe's cards (dealt order first) shuffled by it, as a dealer shuffles the
    discards; None (the default): every shoe is new decks shuffled fairly. Arguments are
    checked before the first event (ValueError / FaultSpecError).
    """
    deal = deal_of(game)
    decks = deal.decks if decks is None else decks
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise ValueError(f"decks must be a whole number of at least 1, got {decks!r}")
    if shoes < 0:
        raise ValueError(f"shoes must be at least 0, got {shoes}")
    resolve_cut_depth(cut_depth, len(ALL_CARDS) * decks)  # a bad depth fails before any event
    if shuffle is not None:
        parse_shuffle_model(shuffle)  # a bad model fails before any event too
    root = random.Random(seed)
    shuffles = random.Random(root.getrandbits(64))
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
    return _shoes(dealer, shuffles, shoes, cut_depth, shuffle)


def _shoes(
    dealer: Dealer,
    shuffles: random.Random,
    shoes: int,
    cut_depth: CutDepth,
    model: str | None = None,
) -> Iterator[Event]:
    previous: VirtualShoe | None = None
    for _ in range(shoes):
        if model is None or previous is None:
            shoe = VirtualShoe(dealer.decks, shuffles, cut_depth)
        else:
            shoe = reshuffled(previous.order, model, shuffles, cut_depth, dealer.decks)
        yield from dealer.deal_shoe(shoe)
        previous = shoe
