"""Reading a card from a camera picture: finding and straightening the card, the two
recognisers (`rank-suit` templates, `barcode` via pyzbar), and the card-passage detector
that decides when a card is in view, at rest, read, and gone.

Everything here is a pure function of the frames it is given, so the live driver
(`drivers.camera`), `station scan`, calibration and the benchmark share one code path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy.typing as npt

Image = npt.NDArray[Any]


@dataclass(frozen=True, slots=True)
class Reading:
    """What a recogniser made of one picture: `card` None means unreadable (never a guess)."""

    card: str | None
    confidence: float
    #: Why it is unreadable, or what else it could have been (for logs and reports).
    detail: str = ""
    #: The raw barcode payload, when the recogniser reads barcodes.
    raw: str | None = None


class Recogniser(Protocol):
    """Turns the picture of a card at rest into a `Reading`."""

    name: str

    def read(self, image: Image) -> Reading:
        """The card in `image` (BGR, the region of interest), or an unreadable reading."""
        ...
