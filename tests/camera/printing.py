"""Cards with a QR code printed on them, as some tables use: for the barcode tests."""

from __future__ import annotations

import cv2
import numpy as np
import segno

from calibration.synthetic import render_deck
from drivers.codecs import Codec


def print_code(card: np.ndarray, payload: str) -> np.ndarray:
    """`card` (BGRA) with a QR code of `payload` in its middle, on a white quiet zone."""
    qr = segno.make_qr(payload, error="m")
    modules = np.array([list(row) for row in qr.matrix], np.uint8)
    modules = np.pad(modules, 3)  # quiet zone
    h, w = card.shape[:2]
    cell = max(2, int(w * 0.7) // modules.shape[0])
    code = np.where(np.kron(modules, np.ones((cell, cell), np.uint8)) > 0, 20, 255).astype(np.uint8)
    out = card.copy()
    ch, cw = code.shape
    y, x = (h - ch) // 2, (w - cw) // 2
    out[y : y + ch, x : x + cw, :3] = cv2.cvtColor(code, cv2.COLOR_GRAY2BGR)
    out[y : y + ch, x : x + cw, 3] = 255
    return out


def coded_deck(design: str, codec: Codec, width: int) -> dict[str, np.ndarray]:
    """Every card of `design` with its code in `codec` printed on it."""
    return {
        card: print_code(image, codec.encode(card))
        for card, image in render_deck(design, width).items()
    }
