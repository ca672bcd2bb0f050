"""The rank-suit recogniser on real card designs: right, or unreadable, never wrong."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.synthetic import TUNING_DESIGNS
from drivers.recognition.ranksuit import ModelError, RankSuitModel
from station.core.cards import ALL_CARDS
from tests.camera.kit import labelled, model, photo, references


@pytest.mark.parametrize("design", TUNING_DESIGNS)
def test_every_card_of_the_deck_is_read(design: str) -> None:
    m = model(design)
    readings = {c: m.read(photo(labelled(design), c)) for c in ALL_CARDS}
    wrong = {c: r for c, r in readings.items() if r.card != c}
    assert not wrong
    assert min(r.confidence for r in readings.values()) >= m.min_confidence


@pytest.mark.parametrize("design", ["anglo", "tango"])
def test_a_card_lying_the_other_way_round_is_read(design: str) -> None:
    m = model(design)
    for card in ("AS", "7D", "KC", "TH"):
        turned = cv2.rotate(photo(labelled(design), card), cv2.ROTATE_180)
        assert m.read(turned).card == card


@pytest.mark.parametrize("design", ["paris", "simplistic"])
def test_a_card_with_its_indices_covered_is_never_misread(design: str) -> None:
    """A dealer's thumb over both index corners: what is left may still name the card,
    but it must never name another one."""
    m = model(design)
    unreadable = 0
    for card in ALL_CARDS:
        image = photo(labelled(design), card)
        straight = _cover_indices(image)
        reading = m.read(straight)
        assert reading.card in (None, card), (card, reading)
        unreadable += reading.card is None
    assert unreadable  # the thumb does hide something


def _cover_indices(image: np.ndarray) -> np.ndarray:
    """Paint skin-coloured discs over both index corners of the card in `image`."""
    from drivers.recognition.cardfind import find_card

    quad = find_card(image)
    assert quad is not None
    out = image.copy()
    for corner, towards in ((quad[0], quad[2]), (quad[2], quad[0])):
        centre = corner + (towards - corner) * 0.16
        radius = int(np.linalg.norm(towards - corner) * 0.14)
        cv2.circle(out, (int(centre[0]), int(centre[1])), radius, (150, 170, 220), -1)
    return out


def test_rivals_tied_in_their_duels_do_not_crash_the_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two rivals of the winner with the same duel figure: a reading, not a TypeError
    (`station calibrate camera` crashed so on one design)."""
    m = model("anglo")
    monkeypatch.setattr(RankSuitModel, "duel", lambda self, seen, a, b: 0.9)
    reading = m.read(photo(labelled("anglo"), "7D"))
    assert reading.card == "7D" and reading.confidence == 0.9


def test_a_blank_card_is_unreadable() -> None:
    image = photo(labelled("anglo"), "AS")
    quad = cv2.convexHull(_find(image).astype(np.int32))
    blank = image.copy()
    cv2.fillConvexPoly(blank, quad, (235, 235, 235))
    reading = model("anglo").read(blank)
    assert reading.card is None and reading.detail


def _find(image: np.ndarray) -> np.ndarray:
    from drivers.recognition.cardfind import find_card

    quad = find_card(image)
    assert quad is not None
    return quad


def test_empty_felt_is_unreadable() -> None:
    image = photo(labelled("anglo"), "AS")
    felt = np.full_like(image, (40, 100, 45))
    reading = model("anglo").read(felt)
    assert reading.card is None and "no card" in reading.detail


def test_a_higher_threshold_turns_readings_into_unreadable_cards() -> None:
    strict = model("paris").with_threshold(1.01)
    reading = strict.read(photo(labelled("paris"), "QH"))
    assert reading.card is None
    assert "too close to" in reading.detail and "QH" in reading.detail


def test_the_model_file_round_trips(tmp_path: Path) -> None:
    m = model("tango")
    m.save(tmp_path / "m.npz")
    loaded = RankSuitModel.load(tmp_path / "m.npz")
    assert loaded.cards == m.cards and loaded.card_size == m.card_size
    for card in ("2C", "2S", "QD"):
        image = photo(labelled("tango"), card)
        a, b = m.read(image), loaded.read(image)
        assert a.card == b.card == card
        assert a.confidence == pytest.approx(b.confidence, abs=0.02)  # stored as float16


def test_bad_model_files_and_reference_sets_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="station calibrate camera"):
        RankSuitModel.load(tmp_path / "none.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a model")
    with pytest.raises(ModelError, match="not a rank-suit model"):
        RankSuitModel.load(tmp_path / "junk.npz")
    some = {c: photo(references("anglo"), c) for c in ALL_CARDS[:50]}
    with pytest.raises(ModelError, match=r"no reference photo for 2 card\(s\): QC KC"):
        RankSuitModel.build(some)
    felt = {c: np.full((200, 150, 3), 60, np.uint8) for c in ALL_CARDS}
    with pytest.raises(ModelError, match="no card found in the reference photo of AS"):
        RankSuitModel.build(felt)
