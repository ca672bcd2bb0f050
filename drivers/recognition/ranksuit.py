"""The `rank-suit` recogniser: the card's index corner against templates of the table's
own deck.

Calibration straightens one reference photo of each of the 52 cards and keeps its
top-left index corner (rank and suit, in colour) and a small picture of the whole card
as that card's templates. A card seen by the camera is found, straightened the same
way, evened out for light, and compared both ways round (it may lie either way) with
every template by normalised cross-correlation. The best card must then win a *duel*
against each of the next best, judged only on the pixels where the two differ; its
confidence is the narrowest win (1: exactly the template, 0: halfway to the rival). Below
`min_confidence` the card is unreadable: never a guess.

The model is one `.npz` file (numpy arrays and a JSON header, no pickles).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from drivers.recognition import Image, Reading
from drivers.recognition.cardfind import aspect, find_card, straighten
from station.core.cards import ALL_CARDS

MODEL_FORMAT = "baccarat-station/rank-suit/1"
#: Straightened card width in pixels (the height follows the deck's aspect ratio).
CARD_WIDTH = 160
#: The index corner as fractions of the card: left, top, right, bottom.
CORNER = (0.0, 0.0, 0.26, 0.38)
#: Pixels of shift allowed between a template and the corner it is compared with.
SHIFT = 4
#: The whole card is also compared, small: its pips and pictures tell suits apart when
#: the index's suit sign is only a few pixels across (clubs and spades).
FACE_WIDTH = 36
FACE_SHIFT = 1
#: Weight of the index corner in the score (the rest is the whole card's).
CORNER_WEIGHT = 0.5
#: The best card must win its duel against each of this many next-best cards.
RIVALS = 3
#: Below this coarse match the picture is not a card of the deck (a hand, a foreign card).
MIN_MATCH = 0.5
DEFAULT_MIN_CONFIDENCE = 0.5


class ModelError(ValueError):
    """A model file or a reference set is unusable; the message says what to do."""


Templates = npt.NDArray[Any]


@dataclass
class RankSuitModel:
    """Templates of one deck design and the thresholds to use them with."""

    cards: tuple[str, ...]
    templates: Templates  # (n, th, tw, 3) float32: each card's index corner
    faces: Templates  # (n, fh, fw, 3) float32: each whole card, small
    card_size: tuple[int, int]
    min_confidence: float = DEFAULT_MIN_CONFIDENCE
    info: dict[str, Any] = field(default_factory=dict)
    name: str = "rank-suit"
    _bank: tuple[Templates, Templates, Templates] | None = field(
        default=None, repr=False, compare=False
    )

    # -- building, saving, loading ---------------------------------------------------------

    @classmethod
    def build(cls, references: Mapping[str, Image], **info: Any) -> RankSuitModel:
        """A model from one photo per card (keys are card codes; all 52 are needed)."""
        missing = [c for c in ALL_CARDS if c not in references]
        if missing:
            raise ModelError(
                f"no reference photo for {len(missing)} card(s): "
                f"{' '.join(missing)} (name files by card code, e.g. AS.png)"
            )
        quads = {}
        for code in ALL_CARDS:
            quad = find_card(_framed(references[code]))
            if quad is None:
                raise ModelError(
                    f"no card found in the reference photo of {code}: photograph"
                    " the card whole, on a dark cloth"
                )
            quads[code] = quad
        ratio = float(np.median([aspect(q) for q in quads.values()]))
        size = (CARD_WIDTH, round(CARD_WIDTH * ratio))
        views = [_views(straighten(_framed(references[c]), quads[c], size))[0] for c in ALL_CARDS]
        templates = np.stack([_shrink(corner, SHIFT) for corner, _ in views])
        faces = np.stack([_shrink(face, FACE_SHIFT) for _, face in views])
        return cls(ALL_CARDS, templates, faces, size, info=dict(info, aspect=round(ratio, 4)))

    def save(self, path: str | Path) -> None:
        header = {
            "format": MODEL_FORMAT,
            "cards": list(self.cards),
            "card_size": list(self.card_size),
            "min_confidence": self.min_confidence,
            "info": self.info,
        }
        with open(path, "wb") as out:
            np.savez_compressed(
                out,
                header=np.array(json.dumps(header)),
                templates=self.templates.astype(np.float16),
                faces=self.faces.astype(np.float16),
            )

    @classmethod
    def load(cls, path: str | Path) -> RankSuitModel:
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(str(data["header"]))
                templates = data["templates"].astype(np.float32)
                faces = data["faces"].astype(np.float32)
        except FileNotFoundError:
            raise ModelError(
                f"no model file {path}: make one with `station calibrate camera "
                "--reference DIR --out MODEL`"
            ) from None
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"{path} is not a rank-suit model ({exc})") from None
        if header.get("format") != MODEL_FORMAT:
            raise ModelError(f"{path}: format {header.get('format')!r}, expected {MODEL_FORMAT}")
        size = (int(header["card_size"][0]), int(header["card_size"][1]))
        return cls(
            tuple(header["cards"]),
            templates,
            faces,
            size,
            float(header["min_confidence"]),
            dict(header.get("info", {})),
        )

    def with_threshold(self, min_confidence: float | None) -> RankSuitModel:
        """The same templates with another `min_confidence` (None keeps the model's)."""
        if min_confidence is None:
            return self
        return replace(self, min_confidence=min_confidence)

    # -- reading ------------------------------------------------------------------------------

    def read(self, image: Image) -> Reading:
        quad = find_card(image)
        if quad is None:
            return Reading(None, 0.0, "no card outline found")
        return self.read_straight(straighten(image, quad, self.card_size))

    def candidates(self, card: Image) -> list[_Candidate]:
        """Every card's match for a straightened card, best first: the better of its two
        ways round, index corner and whole face weighted (each the best over one pixel
        of play once the corner is aligned), with the view it matched best."""
        corner_bank, face_bank, mean_corner = self._banks()
        th, tw = self.templates.shape[1:3]
        fh, fw = self.faces.shape[1:3]
        found: list[_Candidate] = []
        for corner, face in _views(card):
            windows = _windows(corner, th, tw)
            near = windows[
                _around(
                    int(np.argmax(np.einsum("ij,j->i", windows, mean_corner))),
                    corner.shape[1] - tw + 1,
                )
            ]
            faces = _windows(face, fh, fw)
            # einsum, not @: BLAS would spread these small products over threads that
            # spin on a busy machine and cost more than they save.
            c_scores = np.einsum("ij,jk->ik", near, corner_bank)
            f_scores = np.einsum("ij,jk->ik", faces, face_bank)
            c_at, f_at = c_scores.argmax(axis=0), f_scores.argmax(axis=0)
            score = CORNER_WEIGHT * c_scores.max(axis=0) + (1 - CORNER_WEIGHT) * f_scores.max(
                axis=0
            )
            found.extend(
                _Candidate(i, float(score[i]), near[c_at[i]], faces[f_at[i]])
                for i in range(len(self.cards))
            )
        best: dict[int, _Candidate] = {}
        for c in found:
            if c.index not in best or c.score > best[c.index].score:
                best[c.index] = c
        return sorted(best.values(), key=lambda c: -c.score)

    def duel(self, seen: _Candidate, a: int, b: int) -> float:
        """Card `a` against card `b` on the pixels where they differ, in the view that
        matched `seen`: 1 if the card seen is exactly `a`, -1 if exactly `b`, 0 halfway.
        Cards of one design share most of their pixels (the white, the layout), so a
        club and a spade correlate almost alike; this looks only at what tells them
        apart."""
        corner_bank, face_bank, _ = self._banks()
        w = CORNER_WEIGHT
        x = np.concatenate([w * seen.corner, (1 - w) * seen.face])
        ta = np.concatenate([w * corner_bank[:, a], (1 - w) * face_bank[:, a]])
        tb = np.concatenate([w * corner_bank[:, b], (1 - w) * face_bank[:, b]])
        diff = ta - tb
        return float(np.dot(x - (ta + tb) / 2, diff) / max(float(np.dot(diff, diff)) / 2, 1e-9))

    def _banks(self) -> tuple[Templates, Templates, Templates]:
        """The templates as unit vectors, one column per card, and the deck's mean index
        corner, by which a corner is first aligned for all cards alike (so no card can
        win by sliding its suit sign over another's). Made once."""
        if self._bank is None:
            corners = _unit(self.templates.reshape(len(self.cards), -1))
            faces = _unit(self.faces.reshape(len(self.cards), -1))
            mean = _unit(corners.mean(axis=0, keepdims=True))[0]
            self._bank = (corners.T.copy(), faces.T.copy(), mean)
        return self._bank

    def read_straight(self, card: Image) -> Reading:
        """The reading of a card already straightened to `card_size`: the best-matching
        card if its match is at least `MIN_MATCH` (it looks like a card of this deck at
        all) and it wins its duel with each of the next few by `min_confidence`."""
        ranked = self.candidates(card)
        winner = ranked[0]
        code = self.cards[winner.index]
        # By the duel's figure alone: two rivals with the same figure must not be
        # compared themselves (a candidate has no order; that crashed a calibration).
        confidence, rival = min(
            ((self.duel(winner, winner.index, r.index), r) for r in ranked[1 : RIVALS + 1]),
            key=lambda duel: duel[0],
        )
        other = self.cards[rival.index]
        shown = round(min(max(confidence, 0.0), 1.0), 4)
        if winner.score < MIN_MATCH:
            return Reading(
                None,
                shown,
                f"nothing matches well (best {code} at "
                f"{winner.score:.3f}): not a card of the calibrated deck?",
            )
        if confidence < self.min_confidence:
            return Reading(
                None,
                shown,
                f"{code} is too close to {other} (confidence "
                f"{confidence:.3f} < {self.min_confidence:g})",
            )
        return Reading(code, shown, f"nearest other card {other}")


@dataclass(frozen=True, slots=True)
class _Candidate:
    index: int
    score: float
    corner: Templates  # the seen corner and face where this card fits them (unit rows)
    face: Templates


def _framed(image: Image) -> Image:
    """A reference photo with a dark frame around it, so a tightly cropped scan of a card
    still has an outline to find."""
    pad = max(image.shape[:2]) // 8
    return cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=(0, 0, 0))


def _unit(rows: Templates) -> Templates:
    """Each row less its mean, scaled to length 1: a dot product of two such rows is their
    normalised cross-correlation."""
    centred = rows - rows.mean(axis=1, keepdims=True)
    unit: Templates = centred / np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-6)
    return unit


def _around(index: int, columns: int) -> list[int]:
    """The window `index` and its neighbours one pixel away (windows in rows of
    `columns`), for a last pixel of play after alignment."""
    row, col = divmod(index, columns)
    rows = 2 * SHIFT + 1
    return [
        r * columns + c
        for r in range(max(row - 1, 0), min(row + 2, rows))
        for c in range(max(col - 1, 0), min(col + 2, columns))
    ]


def _windows(image: Templates, h: int, w: int) -> Templates:
    """Every h x w window of `image` as a unit row (the shifts a template may take)."""
    view = np.lib.stride_tricks.sliding_window_view(image, (h, w), axis=(0, 1))
    rows = view.transpose(0, 1, 3, 4, 2).reshape(view.shape[0] * view.shape[1], -1)
    return _unit(rows)


def _views(card: Image) -> list[tuple[Templates, Templates]]:
    """(index corner, small whole card) of the card as it lies and turned round, each
    normalised."""
    card = _flatten(card)
    h, w = card.shape[:2]
    x0, y0, x1, y1 = (
        round(CORNER[0] * w),
        round(CORNER[1] * h),
        round(CORNER[2] * w),
        round(CORNER[3] * h),
    )
    face_size = (FACE_WIDTH, round(FACE_WIDTH * h / w))
    views = []
    for view in (card, cv2.rotate(card, cv2.ROTATE_180)):
        face = cv2.resize(view, face_size, interpolation=cv2.INTER_AREA)
        views.append((_as_float(view[y0:y1, x0:x1]), _as_float(face)))
    return views


def _flatten(card: Image) -> Image:
    """The card as if evenly lit: each pixel over the local white (the brightest nearby,
    smoothed). Light falling off across the card would otherwise outweigh the ink."""
    size = max(3, (card.shape[1] // 8) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (size, size))
    white = cv2.GaussianBlur(cv2.dilate(card, kernel), (0, 0), size / 2).astype(np.float32)
    flat = card.astype(np.float32) / np.maximum(white, 1.0)
    return np.clip(flat * 255.0, 0, 255).astype(np.uint8)


def _as_float(patch: Image) -> Templates:
    out: Templates = np.ascontiguousarray(patch, dtype=np.float32) * np.float32(1 / 255)
    return out


def _shrink(patch: Templates, by: int) -> Templates:
    """A template is the view less `by` pixels all round: the room it can slide in."""
    return np.ascontiguousarray(patch[by:-by, by:-by])
