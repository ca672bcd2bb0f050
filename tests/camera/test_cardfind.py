"""Finding the card's outline: square corners through rounded ones, upright order."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from drivers.recognition.cardfind import aspect, find_card, order_corners, straighten


def felt_with_card(
    corners: list[tuple[float, float]], size: tuple[int, int] = (320, 240), radius: int = 8
) -> np.ndarray:
    """A dark green felt with a white quadrilateral card with rounded corners on it."""
    image = np.zeros((size[1], size[0], 3), np.uint8)
    image[:] = (40, 100, 40)
    pts = np.array(corners, np.float32)
    cv2.fillConvexPoly(image, pts.astype(np.int32), (235, 235, 235))
    for p in pts:  # round off each corner: felt over the tip, a white disc inside
        inward = pts.mean(axis=0) - p
        inward /= np.linalg.norm(inward)
        tip = tuple(int(v) for v in p)
        cv2.circle(image, tip, radius, (40, 100, 40), -1)
        centre = tuple(int(v) for v in p + inward * radius * 1.4)
        cv2.circle(image, centre, radius, (235, 235, 235), -1)
    return image


@pytest.mark.parametrize("turn", [0.0, 7.0, -12.0, 90.0])
def test_corners_are_found_through_rounded_corners(turn: float) -> None:
    w, h = 100, 150
    box = cv2.boxPoints(((160, 120), (w, h), turn)).astype(np.float32)
    found = find_card(felt_with_card([tuple(p) for p in box]))
    assert found is not None
    for corner in box:  # every true corner has a found corner within 3 pixels
        assert np.min(np.linalg.norm(found - corner, axis=1)) < 3.0
    assert aspect(found) == pytest.approx(h / w, abs=0.05)
    straight = straighten(felt_with_card([tuple(p) for p in box]), found, (100, 150))
    assert straight.shape == (150, 100, 3)
    assert straight[20:130, 20:80].min() > 200  # all card, no felt


def test_a_card_in_perspective_is_found() -> None:
    corners = [(110, 50), (200, 60), (215, 200), (95, 195)]
    found = find_card(felt_with_card(corners))
    assert found is not None
    for corner in np.array(corners, np.float32):
        assert np.min(np.linalg.norm(found - corner, axis=1)) < 3.5


def test_order_is_clockwise_from_a_short_edge_near_the_top_left() -> None:
    quad = np.array([[200, 50], [100, 50], [100, 200], [200, 200]], np.float32)
    ordered = order_corners(quad[[2, 0, 3, 1]])
    assert ordered.tolist() == [[100, 50], [200, 50], [200, 200], [100, 200]]
    lying = np.array([[50, 100], [250, 100], [250, 200], [50, 200]], np.float32)
    first, second = order_corners(lying)[:2]
    assert np.linalg.norm(second - first) == pytest.approx(100)  # a short edge first


def test_empty_felt_has_no_card() -> None:
    rng = np.random.default_rng(1)
    felt = np.clip(rng.normal(70, 12, (240, 320, 3)), 0, 255).astype(np.uint8)
    assert find_card(felt) is None
