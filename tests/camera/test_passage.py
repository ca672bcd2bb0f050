"""The card-passage detector: one reading per physical card, read at rest, nothing
passing unreported."""

from __future__ import annotations

from dataclasses import replace

import pytest

from calibration.synthetic import TUNING_DESIGNS, make_clip, shuffled
from drivers.recognition import Image, Reading
from drivers.recognition.passage import PassageDetector, PassageSettings
from drivers.recognition.scanner import Scanner
from drivers.recognition.source import frames, open_source
from tests.camera.kit import TEST_SCENE, model, needs_designs


@pytest.mark.parametrize("design", TUNING_DESIGNS)
def test_each_card_of_a_clip_is_read_once_at_rest(design: str) -> None:
    needs_designs()
    cards = shuffled(TUNING_DESIGNS.index(design) + 1, 13)
    clip, truth = make_clip(design, cards, TEST_SCENE)
    passages = list(Scanner(model(design), PassageSettings()).scan(frames(open_source(str(clip)))))
    assert [p.reading.card for p in passages] == cards
    for p, t in zip(passages, truth, strict=True):
        assert t.rest <= p.frame < t.leave  # read while it lay still
        assert p.frame - t.rest <= 2  # and soon: at most two frames after it came to rest


class Counting:
    """A recogniser that always answers the same, counting the pictures it was shown."""

    name = "counting"

    def __init__(self, card: str | None) -> None:
        self.card = card
        self.calls = 0

    def read(self, image: Image) -> Reading:
        self.calls += 1
        return Reading(self.card, 1.0 if self.card else 0.2, "" if self.card else "unsure")


def run(
    recogniser: Counting, clip: str, settings: PassageSettings
) -> list[tuple[str | None, int, int]]:
    detector = PassageDetector(recogniser, settings)
    out = []
    for index, frame in enumerate(frames(open_source(clip))):
        passage = detector.feed(frame, index)
        if passage is not None:
            out.append((passage.reading.card, passage.frame, passage.waited))
    return out


def test_an_unsure_card_is_tried_again_then_reported_unreadable_once() -> None:
    needs_designs()
    clip, truth = make_clip("anglo", shuffled(2, 4), TEST_SCENE)
    unsure = Counting(None)
    settings = PassageSettings(read_frames=3)
    got = run(unsure, str(clip), settings)
    assert [card for card, _, _ in got] == [None] * 4
    assert unsure.calls == 4 * 3  # three tries per card, on consecutive frames at rest
    assert [w for _, _, w in got] == [2] * 4
    for (_, frame, _), t in zip(got, truth, strict=True):
        assert t.rest <= frame < t.leave


def test_a_sure_card_is_read_once_however_long_it_rests() -> None:
    needs_designs()
    scene = replace(TEST_SCENE, rest_frames=30)
    clip, _truth = make_clip("paris", shuffled(3, 3), scene)
    sure = Counting("AS")
    assert len(run(sure, str(clip), PassageSettings())) == 3
    assert sure.calls == 3


def test_a_card_that_never_rests_is_reported_unreadable() -> None:
    needs_designs()
    scene = replace(TEST_SCENE, rest_frames=1, seed=2)
    clip, truth = make_clip("tango", shuffled(4, 3), scene)
    sure = Counting("AS")
    got = run(sure, str(clip), PassageSettings())
    assert [card for card, _, _ in got] == [None] * 3 and sure.calls == 0
    for (_, frame, waited), t in zip(got, truth, strict=True):
        assert waited == -1 and t.leave <= frame <= t.gone + 1


def test_an_empty_view_reports_nothing() -> None:
    needs_designs()
    clip, _ = make_clip("anglo", [], replace(TEST_SCENE, lead_frames=20))
    sure = Counting("AS")
    assert run(sure, str(clip), PassageSettings()) == [] and sure.calls == 0
