"""A virtual dealing shoe: `decks` shuffled decks with a cut card at a set depth.

The shoe knows nothing of baccarat: it holds cards in order and gives out the next
thing that slides out of it, a card or the cut card, exactly as a physical shoe does.
The simulated dealer, a live "sim" reader and a rig that writes barcodes into a pty all
draw from it, so one seed means one order of cards for all of them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

# The cut card's depths are settings too ([reader.sim] cut_depth), bounded by these.
from drivers.cut_depth import DEFAULT_CUT_DEPTH as DEFAULT_CUT_DEPTH
from drivers.cut_depth import MIN_CUT_DEPTH as MIN_CUT_DEPTH
from station.core.cards import ALL_CARDS, parse_card

#: What `VirtualShoe.draw` returns when the cut card comes out (no card code is 3 letters).
CUT_CARD = "cut"

CutDepth = int | float

#: The shuffle models of `shuffle` (a model is steps joined by "+", e.g. "riffle:3+strip").
SHUFFLE_STEPS = ("uniform", "none", "riffle", "strip", "box")
#: How many riffles one "riffle:N" step may ask for (7 riffles mix a deck well; more is
#: asked for as "uniform").
MAX_RIFFLES = 7


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
    def order(self) -> list[str]:
        """Every card of the shoe in order, the cut card left out: the dealt ones, then
        those still in it (the discards a dealer shuffles the next shoe from)."""
        return [c for c in self._cards if c != CUT_CARD]

    @property
    def cards_dealt(self) -> int:
        return self.size - self.cards_left

    def __repr__(self) -> str:
        return (
            f"VirtualShoe(decks={self.decks}, cards_left={self.cards_left}, "
            f"cut_depth={self.cut_depth}, cut_out={self.cut_out})"
        )


# -- shuffle models (game protection: to test the shuffle-quality check honestly) --------


def riffle(cards: list[str], rng: random.Random) -> list[str]:
    """One Gilbert-Shannon-Reeds riffle: cut at a Binomial(n, 1/2) place, then drop each
    next card from a packet with probability proportional to its size."""
    n = len(cards)
    cut = rng.getrandbits(n).bit_count() if n else 0
    left, right = cards[:cut], cards[cut:]
    out: list[str] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if rng.random() * (len(left) - i + len(right) - j) < len(left) - i:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


def _packets(n: int, count: int, rng: random.Random) -> list[int]:
    """`count` packet sizes adding up to n, each within half a mean size of the mean."""
    sizes = [max(1, round(n / count * rng.uniform(0.5, 1.5))) for _ in range(count)]
    scale = n / sum(sizes)
    sizes = [max(1, round(s * scale)) for s in sizes]
    sizes[-1] += n - sum(sizes)
    while sizes[-1] < 1:  # rounding left too little for the last packet
        sizes[sizes.index(max(sizes))] -= 1
        sizes[-1] += 1
    return sizes


def strip_cut(cards: list[str], rng: random.Random, packets: int = 8) -> list[str]:
    """A strip: packets pulled off the top one after another onto a new pile, so their
    order reverses and each packet keeps its own."""
    out: list[str] = []
    place = 0
    for size in _packets(len(cards), min(packets, len(cards)), rng):
        out[:0] = cards[place : place + size]
        place += size
    return out


def box_cut(cards: list[str], rng: random.Random, blocks: int = 3) -> list[str]:
    """A box cut: the stack cut into `blocks` blocks restacked bottom block first."""
    return strip_cut(cards, rng, blocks)


def parse_shuffle_model(text: str) -> list[tuple[str, int]]:
    """`"riffle:3+strip+box"` -> [("riffle", 3), ("strip", 8), ("box", 3)]; ValueError
    with what is accepted otherwise. `uniform` is a fair shuffle, `none` no shuffle at all
    (the previous shoe's order again: a repeated shoe)."""
    defaults = {"uniform": 1, "none": 1, "riffle": 1, "strip": 8, "box": 3}
    steps: list[tuple[str, int]] = []
    for part in text.split("+"):
        name, _, count = part.strip().partition(":")
        if name not in SHUFFLE_STEPS:
            raise ValueError(
                f"{part.strip()!r} is not a shuffle step; use {', '.join(SHUFFLE_STEPS)} "
                "joined by +, with a count after a colon (e.g. riffle:3+strip+box)"
            )
        try:
            times = int(count) if count else defaults[name]
        except ValueError:
            raise ValueError(
                f"{part.strip()!r}: the count after the colon must be a number"
            ) from None
        top = MAX_RIFFLES if name == "riffle" else 64
        if not 1 <= times <= top:
            raise ValueError(f"{part.strip()!r}: the count must be between 1 and {top}")
        steps.append((name, times))
    return steps


def shuffle(cards: Sequence[str], model: str, rng: random.Random | int | None = None) -> list[str]:
    """`cards` (the previous shoe's discards, in order) shuffled by `model`
    (`parse_shuffle_model`), with `rng` (a `random.Random`, or a seed)."""
    if not isinstance(rng, random.Random):
        rng = random.Random(rng)
    out = list(cards)
    for name, times in parse_shuffle_model(model):
        if name == "uniform":
            rng.shuffle(out)
        elif name == "riffle":
            for _ in range(times):
                out = riffle(out, rng)
        elif name == "strip":
            out = strip_cut(out, rng, times)
        elif name == "box":
            out = box_cut(out, rng, times)
    return out


def reshuffled(
    previous: Sequence[str],
    model: str,
    rng: random.Random | int | None = None,
    cut_depth: CutDepth = DEFAULT_CUT_DEPTH,
    decks: int | None = None,
) -> VirtualShoe:
    """The next shoe: the previous shoe's cards (`VirtualShoe.order`, dealt order first)
    shuffled by `model`, the cut card placed as `VirtualShoe` places it."""
    cards = shuffle(previous, model, rng)
    size_decks = decks if decks is not None else max(1, len(cards) // 52)
    return VirtualShoe.stacked(cards, resolve_cut_depth(cut_depth, len(cards)), size_decks)
