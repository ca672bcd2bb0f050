"""A virtual dealing shoe: `decks` shuffled decks with a cut card at a set depth.

The shoe knows nothing of baccarat: it holds cards in order and gives out the next
thing that slides out of it, a card or the cut card, exactly as a physical shoe does.
The simulated dealer, a live "sim" reader and a rig that writes barcodes into a pty all
draw from it, so one seed means one order of cards for all of them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

# The cut card's depths are settings too ([reader.sim] cut_depth): the config model's
# bounds are their home, and the config may not import the simulator.
from drivers.config import DEFAULT_CUT_DEPTH as DEFAULT_CUT_DEPTH
from drivers.config import MIN_CUT_DEPTH as MIN_CUT_DEPTH
from station.core.cards import ALL_CARDS, parse_card

#: What `VirtualShoe.draw` returns when the cut card comes out (no card code is 3 letters).
CUT_CARD = "cut"

CutDepth = int | float


class ShoeEmpty(LookupError):
    """`draw` on a shoe with no card left: the dealer went past the end of the shoe."""


def parse_cut_depth(text: str) -> CutDepth:
    """`"16"` -> 16 cards; `"0.25"` -> a quarter of the shoe; the unit is cards behind the cut.

    Raises ValueError with a message that says what is accepted.
    """
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        fraction = float(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is neither a number of cards (e.g. 16) nor a fraction of the shoe "
            "(e.g. 0.25)"
        ) from None
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"a fraction of the shoe must be between 0 and 1, got {text}")
    return fraction


def resolve_cut_depth(depth: CutDepth, size: int, minimum: int = MIN_CUT_DEPTH) -> int:
    """The number of cards behind the cut card in a shoe of `size` cards.

    An int is a number of cards; a float in (0, 1) is a fraction of the shoe, rounded to
    the nearest card. The cut card must leave at least `minimum` cards behind it and at
    least one card in front of it (the burn reveal), or ValueError says what fits.
    """
    if isinstance(depth, bool) or not isinstance(depth, int | float):
        raise ValueError(f"cut depth must be a number of cards or a fraction, got {depth!r}")
    if isinstance(depth, float):
        if not 0.0 < depth < 1.0:
            raise ValueError(f"a fraction of the shoe must be between 0 and 1, got {depth}")
        cards = round(depth * size)
    else:
        cards = depth
    low, high = minimum, size - 1
    if not low <= cards <= high:
        fraction = f" ({depth} of the shoe)" if isinstance(depth, float) else ""
        raise ValueError(
            f"the cut card must have between {low} and {high} cards behind it in a shoe of "
            f"{size} cards, got {cards}{fraction}"
        )
    return cards


class VirtualShoe:
    """A shuffled shoe: `draw()` gives the next card code, or `CUT_CARD` when the cut card
    comes out (it sits in front of the card `cut_position` counts from the top)."""

    __slots__ = ("_cards", "_next", "cut_depth", "cut_position", "decks", "size")

    def __init__(
        self,
        decks: int = 8,
        rng: random.Random | int | None = None,
        cut_depth: CutDepth = DEFAULT_CUT_DEPTH,
    ) -> None:
        """Shuffle `decks` full decks with `rng` (a `random.Random`, or a seed) and place
        the cut card with `cut_depth` cards behind it (cards, or a fraction of the shoe)."""
        if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
            raise ValueError(f"decks must be a whole number of at least 1, got {decks!r}")
        if not isinstance(rng, random.Random):
            rng = random.Random(rng)
        cards = list(ALL_CARDS) * decks
        rng.shuffle(cards)
        self._load(cards, decks, resolve_cut_depth(cut_depth, len(cards)))

    @classmethod
    def stacked(cls, cards: Sequence[str], cut_depth: int, decks: int = 1) -> VirtualShoe:
        """A shoe holding exactly `cards` in this order (a rig's prepared shoe), the cut
        card with `cut_depth` cards behind it. No minimum depth: a short stacked shoe may
        run out, and `draw` then raises ShoeEmpty."""
        codes: list[str] = []
        for text in cards:
            code = parse_card(text)
            if code is None:
                raise ValueError(f"{text!r} is not a card code (e.g. AS, TD)")
            codes.append(code)
        if not 0 <= cut_depth <= len(codes):
            raise ValueError(f"cut depth must be between 0 and {len(codes)}, got {cut_depth}")
        shoe = cls.__new__(cls)
        shoe._load(codes, decks, cut_depth)
        return shoe

    def _load(self, cards: list[str], decks: int, cut_depth: int) -> None:
        self._cards = cards
        self._next = 0  # index of the next item: cards, with the cut card at cut_position
        self.decks = decks
        self.size = len(cards)
        self.cut_depth = cut_depth
        self.cut_position = len(cards) - cut_depth
        # The cut card is an item of its own: items before it are cards 0..cut_position-1.
        self._cards.insert(self.cut_position, CUT_CARD)

    def draw(self) -> str:
        """The next thing out of the shoe: a card code, or `CUT_CARD` once, at its place."""
        index = self._next
        if index >= len(self._cards):
            raise ShoeEmpty(f"the shoe of {self.size} cards is empty")
        self._next = index + 1
        return self._cards[index]

    @property
    def next_is_cut(self) -> bool:
        """Whether the next thing out of the shoe is the cut card."""
        return self._next == self.cut_position

    @property
    def cut_out(self) -> bool:
        """Whether the cut card has come out of the shoe."""
        return self._next > self.cut_position

    @property
    def cards_left(self) -> int:
        """Cards still in the shoe (the cut card is not a card)."""
        return len(self._cards) - self._next - (0 if self.cut_out else 1)

    @property
    def cards_dealt(self) -> int:
        return self.size - self.cards_left

    def __repr__(self) -> str:
        return (
            f"VirtualShoe(decks={self.decks}, cards_left={self.cards_left}, "
            f"cut_depth={self.cut_depth}, cut_out={self.cut_out})"
        )
