"""The `barcode` recogniser: the code printed on the card, read with pyzbar (libzbar0),
and turned into a card by the same codecs as the serial reader (`station.core.cards`).

No code found, a payload the codec does not know, or two codes naming different cards
are all an unreadable card: never a guess.
"""

from __future__ import annotations

import cv2

from drivers.codecs import Codec
from drivers.recognition import Image, Reading
from drivers.recognition.cardfind import find_card


class BarcodeRecogniser:
    name = "barcode"

    def __init__(self, codec: Codec) -> None:
        from pyzbar import pyzbar  # libzbar0 is loaded here: only when the driver is chosen

        self._decode = pyzbar.decode
        self.codec = codec

    def read(self, image: Image) -> Reading:
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
        quad = find_card(image)
        if quad is not None:  # the card alone decodes faster and with less clutter
            x, y, w, h = cv2.boundingRect(quad.astype("int32"))
            pad = max(w, h) // 10
            y0, x0 = max(y - pad, 0), max(x - pad, 0)
            grey = grey[y0 : y + h + pad, x0 : x + w + pad]
        payloads = [s.data.decode("latin-1") for s in self._decode(grey)]
        if not payloads:
            return Reading(None, 0.0, "no barcode found")
        cards = {self.codec.decode(p) for p in payloads}
        raw = " ".join(payloads)
        if None in cards:
            return Reading(None, 0.0, f"{raw!r} is not a card in codec {self.codec.name}", raw)
        if len(cards) > 1:
            return Reading(None, 0.0, f"codes name different cards: {raw!r}", raw)
        return Reading(cards.pop(), 1.0, "", raw)
