"""The barcode recogniser: pyzbar reads the printed code, the serial reader's codecs
name the card; anything else is unreadable."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.synthetic import Camera, film, shuffled
from drivers.codecs import make_codec
from drivers.recognition.barcode import BarcodeRecogniser
from drivers.recognition.passage import PassageSettings
from drivers.recognition.scanner import Scanner
from drivers.recognition.source import frames, open_source
from tests.camera.kit import TEST_SCENE, needs_designs
from tests.camera.printing import coded_deck, print_code

WIDTH = 195  # the card as rendered, before the camera shrinks it to 150 pixels


@pytest.mark.parametrize("codec", ["index52", "suit-rank-4", "text"])
def test_printed_codes_name_their_cards(codec: str) -> None:
    needs_designs()
    c = make_codec(codec)
    deck = coded_deck("anglo", c, WIDTH)
    camera = Camera(TEST_SCENE)
    reader = BarcodeRecogniser(c)
    for card in ("AS", "TD", "7H", "KC", "2S"):
        reading = reader.read(camera.still(deck[card]))
        assert (reading.card, reading.raw, reading.confidence) == (card, c.encode(card), 1.0)


def test_a_code_the_codec_does_not_know_is_unreadable() -> None:
    needs_designs()
    deck = coded_deck("anglo", make_codec("text"), WIDTH)
    reader = BarcodeRecogniser(make_codec("index52"))
    reading = reader.read(Camera(TEST_SCENE).still(deck["QS"]))  # "QS" is no index52 code
    assert reading.card is None and reading.raw == "QS"
    assert "not a card in codec index52" in reading.detail


def test_a_card_without_a_code_is_unreadable() -> None:
    needs_designs()
    deck = coded_deck("anglo", make_codec("text"), WIDTH)
    plain = deck["9D"].copy()
    plain[:, :, :3] = np.where(plain[:, :, 3:] > 0, 235, 0)  # a blank card
    reading = BarcodeRecogniser(make_codec("text")).read(Camera(TEST_SCENE).still(plain))
    assert reading.card is None and reading.detail == "no barcode found"


def test_two_codes_naming_different_cards_are_unreadable() -> None:
    needs_designs()
    codec = make_codec("text")
    two = coded_deck("anglo", codec, WIDTH)["4C"].copy()
    h = two.shape[0]
    two[: h // 2] = print_code(two[: h // 2].copy(), "4C")
    two[h // 2 :] = print_code(two[h // 2 :].copy(), "5C")
    reading = BarcodeRecogniser(codec).read(Camera(TEST_SCENE).still(two))
    assert reading.card is None and "different cards" in reading.detail


@pytest.mark.slow
def test_a_clip_of_coded_cards_reads_one_card_per_passage(tmp_path: Path) -> None:
    needs_designs()
    codec = make_codec("index52")
    deck = coded_deck("tango", codec, WIDTH)
    cards = shuffled(9, 10)
    path = tmp_path / "coded.avi"
    writer = cv2.VideoWriter(
        str(path),
        cv2.VideoWriter.fourcc(*"MJPG"),
        TEST_SCENE.fps,
        (TEST_SCENE.width, TEST_SCENE.height),
    )
    truth = film(TEST_SCENE, deck, cards, writer.write)  # type: ignore[arg-type]
    writer.release()
    scanner = Scanner(BarcodeRecogniser(codec), PassageSettings())
    passages = list(scanner.scan(frames(open_source(str(path)))))
    assert [p.reading.card for p in passages] == cards
    assert all(t.rest <= p.frame < t.leave for p, t in zip(passages, truth, strict=True))
