"""Photos named by card code (`AS.png`, `td.jpg`, `AS-2.png`): the reference set of
calibration and the labelled set of the accuracy report."""

from __future__ import annotations

from pathlib import Path

import cv2

from drivers.recognition import Image
from station.core.cards import parse_card

SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


class PhotoError(ValueError):
    """A photo set that cannot be used; the message names the file."""


def labelled_photos(directory: str | Path) -> list[tuple[str, Path]]:
    """(card, file) for every photo in `directory`; the card is the name up to the first
    `-`, `_` or `.` (so several photos of one card can sit side by side)."""
    root = Path(directory)
    if not root.is_dir():
        raise PhotoError(f"{root} is not a directory of photos named by card (AS.png, ...)")
    found = []
    for path in sorted(root.iterdir()):
        if path.suffix.lower() not in SUFFIXES:
            continue
        stem = path.stem.replace("_", "-").split("-")[0]
        card = parse_card(stem)
        if card is None:
            raise PhotoError(
                f"{path}: {stem!r} is not a card code (name photos AS.png, TD.png, 10H.jpg ...)"
            )
        found.append((card, path))
    if not found:
        raise PhotoError(f"{root} has no photos ({', '.join(SUFFIXES)})")
    return found


def load(path: Path) -> Image:
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise PhotoError(f"{path}: not an image OpenCV can read")
    return image


def reference_set(directory: str | Path) -> dict[str, Image]:
    """One photo per card; a second photo of the same card is refused (which to use?)."""
    photos: dict[str, Image] = {}
    for card, path in labelled_photos(directory):
        if card in photos:
            raise PhotoError(f"{path}: a second reference photo of {card}; keep one")
        photos[card] = load(path)
    return photos
