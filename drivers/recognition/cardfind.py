"""Find the card in a picture and straighten it: the card is the large bright shape on
the felt, its outline a quadrilateral seen in perspective.

The straightened card is upright (long side vertical) and a fixed size, so templates
made from a reference photo and a card seen at another angle line up pixel for pixel.
Which short edge is "top" is not known (a card may lie either way round), so readers
look at both index corners.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from drivers.recognition import Image

Quad = npt.NDArray[Any]

#: A card must cover at least this share of the picture to be looked for.
MIN_CARD_AREA = 0.01
#: Card stock is at least this bright in its darkest channel (0-255), even in poor light.
MIN_STOCK = 90


def brightness(image: Image) -> Image:
    """The darkest channel of each pixel: white card stock is bright in all three, felt of
    any strong colour is dark in at least one, so this separates them better than grey."""
    if image.ndim == 2:
        return image
    b, g, r = cv2.split(image)
    return cv2.min(cv2.min(b, g), r)


def find_card(image: Image) -> Quad | None:
    """The corners of the largest card-like shape, ordered (see `order_corners`); None
    if there is none (nothing bright, or too small)."""
    bright = brightness(image)
    _, mask = cv2.threshold(bright, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    stock = bright[mask > 0]  # Otsu splits anything in two: is the bright part card stock?
    if stock.size == 0 or float(stock.mean()) < MIN_STOCK:
        return None
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    areas = [cv2.contourArea(c) for c in contours]
    largest = max(areas)
    if largest < MIN_CARD_AREA * mask.shape[0] * mask.shape[1] / 4:
        return None
    # A court card's picture can reach the card's edge and cut its white into pieces:
    # the card is the hull of every sizeable piece.
    pieces = [c for c, a in zip(contours, areas, strict=True) if a >= largest * 0.02]
    hull = cv2.convexHull(np.concatenate(pieces))
    if cv2.contourArea(hull) < MIN_CARD_AREA * mask.shape[0] * mask.shape[1]:
        return None
    outline = _dense_outline(hull, mask.shape[:2])
    quad = order_corners(cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32))
    for _ in range(2):
        refined = _fit_sides(outline, quad)
        if refined is None:
            break
        quad = refined
    return order_corners(quad)


def _dense_outline(hull: npt.NDArray[Any], shape: tuple[int, ...]) -> Quad:
    """Every boundary pixel of the convex hull (the hull itself has only its vertices)."""
    filled = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(filled, hull, 255)
    contours, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return max(contours, key=len).reshape(-1, 2).astype(np.float32)


def _fit_sides(outline: Quad, quad: Quad) -> Quad | None:
    """Straight lines through the middle of each side, crossed: the corners a card with
    rounded corners would have if they were square, whichever way it lies. None if a
    side has too few points to fit."""
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        side = b - a
        length = float(np.linalg.norm(side))
        if length < 4:
            return None
        along = ((outline - a) @ side) / (length * length)
        normal = np.array([-side[1], side[0]], np.float32) / length
        off = np.abs((outline - a) @ normal)
        chosen = outline[(along > 0.15) & (along < 0.85) & (off < 0.08 * length + 2)]
        if len(chosen) < 5:
            return None
        vx, vy, x0, y0 = cv2.fitLine(chosen, cv2.DIST_HUBER, 0, 0.01, 0.01).reshape(4)
        lines.append((np.array([x0, y0]), np.array([vx, vy])))
    corners = []
    for i in range(4):
        (p, u), (q, v) = lines[i - 1], lines[i]
        det = u[0] * -v[1] - u[1] * -v[0]
        if abs(det) < 1e-6:
            return None
        t = ((q[0] - p[0]) * -v[1] - (q[1] - p[1]) * -v[0]) / det
        corners.append(p + t * u)
    return np.array(corners, np.float32)


def order_corners(quad: Quad) -> Quad:
    """Clockwise on screen, starting at a corner of a short edge (the nearer the top-left
    of the two), so the card comes out upright."""
    centre = quad.mean(axis=0)
    angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    pts = quad[np.argsort(angles)]
    edges = np.linalg.norm(pts - np.roll(pts, -1, axis=0), axis=1)
    if edges[0] + edges[2] > edges[1] + edges[3]:
        pts = np.roll(pts, -1, axis=0)
    if pts[2].sum() < pts[0].sum():
        pts = np.roll(pts, -2, axis=0)
    return np.ascontiguousarray(pts, dtype=np.float32)


def straighten(image: Image, quad: Quad, size: tuple[int, int]) -> Image:
    """The card inside `quad`, warped to `size` (width, height)."""
    w, h = size
    target = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    matrix = cv2.getPerspectiveTransform(quad, target)
    return cv2.warpPerspective(image, matrix, (w, h), flags=cv2.INTER_AREA)


def aspect(quad: Quad) -> float:
    """Height over width of the card outline."""
    edges = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)
    return float((edges[1] + edges[3]) / (edges[0] + edges[2]))
