"""Shared footage for the camera tests: small clips of the tuning designs, cached.

Clips, sheets and stills go to `calibration.synthetic.cache_dir()` (`$STATION_CACHE`,
else `~/.cache/baccarat-station`), keyed by their content, so a second run only reads
them. The scene is the smallest that still shows the index corners (480x360, a card
150 pixels wide).
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from functools import cache
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.synthetic import Scene, cache_dir, write_stills
from drivers.recognition.ranksuit import RankSuitModel
from station.core.cards import ALL_CARDS

TEST_SCENE = Scene(width=480, height=360, card_width=150, seed=41)
#: Reference photos: the same camera, a card laid still, a little less noise.
REFERENCE_SCENE = replace(TEST_SCENE, seed=42, noise=2.0, jpeg_quality=90)


def needs_designs() -> None:
    """Skip, saying what to install, if the system packages are missing (`make install`
    installs them; a skipped test here is a broken setup, not a pass)."""
    missing = [
        tool
        for tool, path in (("rsvg-convert (librsvg2-bin)", "rsvg-convert"),)
        if shutil.which(path) is None
    ]
    if not Path("/usr/share/aisleriot/cards/anglo.svgz").exists():
        missing.append("gnome-cards-data")
    if missing:
        pytest.fail(f"missing system packages: {', '.join(missing)}; run `make install`")


@cache
def references(design: str) -> Path:
    """One still photo per card of `design` (cached per scene)."""
    needs_designs()
    directory = cache_dir() / f"ref-{design}-{REFERENCE_SCENE.key()}"
    if not all((directory / f"{c}.png").exists() for c in ALL_CARDS):
        write_stills(design, directory, REFERENCE_SCENE)
    return directory


@cache
def model(design: str) -> RankSuitModel:
    directory = references(design)
    return RankSuitModel.build({c: cv2.imread(str(directory / f"{c}.png")) for c in ALL_CARDS})


@cache
def model_file(design: str) -> Path:
    path = cache_dir() / f"model-{design}-{REFERENCE_SCENE.key()}.npz"
    model(design).save(path)
    return path


@cache
def labelled(design: str) -> Path:
    """Another photo of each card, by another camera placement: for accuracy checks."""
    needs_designs()
    scene = replace(TEST_SCENE, seed=43)
    directory = cache_dir() / f"lab-{design}-{scene.key()}"
    if not all((directory / f"{c}.png").exists() for c in ALL_CARDS):
        write_stills(design, directory, scene)
    return directory


def photo(directory: Path, card: str) -> np.ndarray:
    image = cv2.imread(str(directory / f"{card}.png"))
    assert image is not None
    return image
