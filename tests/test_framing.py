"""The framers and the frame decoder: exact cases, then fuzzing with hypothesis.

The properties are what the station promises about a serial reader: every byte received
lands in exactly one frame (nothing is dropped), however the stream is cut into reads,
and every frame that is not a well-formed known payload is an unreadable card.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.config import ReaderConfig
from drivers.decoding import FrameDecoder
from drivers.framing import (
    ETX,
    STX,
    Frame,
    LineFramer,
    StxEtxFramer,
    bcc,
    encode_frame,
    make_framer,
)
from station.core.cards import ALL_CARDS


def feed_all(framing: str, chunks: list[bytes], max_frame: int = 64) -> list[Frame]:
    framer = make_framer(framing, max_frame)
    frames: list[Frame] = []
    for chunk in chunks:
        frames += framer.feed(chunk)
    return frames + framer.flush("end of test")


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def decode_all(frames: list[Frame], **config: Any) -> list[dict[str, Any]]:
    decoder = FrameDecoder(ReaderConfig(**config))
    return [e for e in map(decoder.event, frames) if e is not None]


# --- line framing -------------------------------------------------------------------


def test_line_terminators_cr_lf_crlf_and_blank_lines() -> None:
    frames = feed_all("line", [b"AS\r", b"\nKH\n\n10d\r\n\r\nTC\r"])
    assert [f.payload for f in frames] == [b"AS", b"KH", b"10d", b"TC"]
    assert all(f.kind == "frame" for f in frames)


def test_line_split_anywhere_gives_the_same_frames() -> None:
    stream = b"AS\r\nKH\r\n9C\r\n"
    whole = feed_all("line", [stream])
    for cut in range(len(stream) + 1):
        assert feed_all("line", [stream[:cut], stream[cut:]]) == whole


def test_line_at_exactly_max_frame_is_a_frame_one_more_is_cut() -> None:
    assert feed_all("line", [b"x" * 8 + b"\n"], max_frame=8)[0].kind == "frame"
    frames = feed_all("line", [b"x" * 9 + b"\n"], max_frame=8)
    assert [(f.kind, f.raw) for f in frames] == [("garbled", b"x" * 8), ("tail", b"x")]
    assert "longer than 8 bytes" in frames[0].problem


def test_overlong_line_is_one_garbled_frame_then_tails_then_normal_again() -> None:
    framer = LineFramer(max_frame=4)
    frames = framer.feed(b"abcdefghij")  # reported before the line even ends
    assert [(f.kind, f.raw) for f in frames] == [("garbled", b"abcd"), ("tail", b"efgh")]
    frames = framer.feed(b"kl\r\nAS\r\n")
    assert [(f.kind, f.raw) for f in frames] == [("tail", b"ijkl"), ("frame", b"AS")]
    assert not framer.pending


def test_line_without_terminator_is_held_then_flushed_as_garbled() -> None:
    framer = LineFramer()
    assert framer.feed(b"A") == []
    assert framer.pending
    [frame] = framer.flush("the line went quiet")
    assert (frame.kind, frame.raw) == ("garbled", b"A")
    assert "the line went quiet" in frame.problem
    assert framer.flush("again") == []


# --- stx-etx framing ----------------------------------------------------------------


def test_stx_etx_frame_and_its_block_check() -> None:
    data = encode_frame("stx-etx", b"AS")
    assert data == bytes([STX, 0x41, 0x53, ETX, 0x41 ^ 0x53 ^ ETX])
    [frame] = feed_all("stx-etx", [data])
    assert (frame.kind, frame.payload, frame.raw) == ("frame", b"AS", data)


def test_stx_etx_bad_block_check_is_garbled_and_names_both_checks() -> None:
    data = bytearray(encode_frame("stx-etx", b"AS"))
    data[-1] ^= 0xFF
    [frame] = feed_all("stx-etx", [bytes(data)])
    assert frame.kind == "garbled" and frame.raw == bytes(data)
    expected = bcc(b"AS" + bytes([ETX]))
    assert f"{data[-1]:#04x} does not match {expected:#04x}" in frame.problem


def test_stx_etx_block_check_may_be_stx_or_etx() -> None:
    # payload whose BCC is 0x02 (STX): "A" ^ "@" ^ ETX = 0x41 ^ 0x40 ^ 0x03 = 0x02
    data = encode_frame("stx-etx", b"A@")
    assert data[-1] == STX
    assert [f.kind for f in feed_all("stx-etx", [data, encode_frame("stx-etx", b"KH")])] == [
        "frame",
        "frame",
    ]


def test_stx_etx_noise_between_frames_is_garbled_when_the_next_frame_starts() -> None:
    framer = StxEtxFramer()
    assert framer.feed(encode_frame("stx-etx", b"AS") + b"\r\nzz")[0].kind == "frame"
    assert framer.pending
    kh = encode_frame("stx-etx", b"KH")
    frames = framer.feed(kh)
    assert [(f.kind, f.raw) for f in frames] == [("garbled", b"\r\nzz"), ("frame", kh)]


def test_stx_etx_frame_cut_short_by_a_new_stx() -> None:
    data = bytes([STX]) + b"A" + encode_frame("stx-etx", b"KH")
    frames = feed_all("stx-etx", [data])
    assert [(f.kind, f.payload) for f in frames] == [("garbled", b""), ("frame", b"KH")]
    assert frames[0].raw == bytes([STX]) + b"A"


def test_stx_etx_overlong_frame_is_cut() -> None:
    frames = feed_all("stx-etx", [bytes([STX]) + b"x" * 10], max_frame=4)
    assert frames[0].kind == "garbled" and "longer than 4 bytes" in frames[0].problem
    assert b"".join(f.raw for f in frames) == bytes([STX]) + b"x" * 10


def test_unknown_framing_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="line, stx-etx"):
        make_framer("slip")
    with pytest.raises(ValueError, match="line, stx-etx"):
        encode_frame("slip", b"AS")


# --- decoding ------------------------------------------------------------------------


def test_decoder_cards_cut_no_read_and_unknown_payloads() -> None:
    frames = feed_all("line", [b"AS\r\n10h\r\nCUT\r\nNR\r\nZZ\r\n\xff\r\n"])
    events = decode_all(frames)
    assert [(e["type"], e.get("card")) for e in events] == [
        ("card", "AS"),
        ("card", "TH"),
        ("cut", None),
        ("card", None),
        ("card", None),
        ("card", None),
    ]
    assert events[0]["raw"] == b"AS".hex()
    assert "no-read (NR)" in events[3]["detail"]
    assert "'ZZ' is no card for codec text" in events[4]["detail"]
    assert events[5]["raw"] == "ff" and "not ASCII" in events[5]["detail"]


def test_decoder_strips_prefix_and_suffix_and_refuses_a_frame_without_them() -> None:
    frames = feed_all("line", [b"<1020>\r\n1020\r\n<1020\r\n"])
    events = decode_all(frames, prefix=b"<", suffix=b">", codec="suit-rank-4")
    assert events[0]["card"] == "2S"  # suit 1 = spades, rank 020 = 2
    assert events[1]["card"] is None and "start with b'<'" in events[1]["detail"]
    assert events[2]["card"] is None and "end with b'>'" in events[2]["detail"]


def test_decoder_custom_tokens_and_codec() -> None:
    frames = feed_all("stx-etx", [encode_frame("stx-etx", p) for p in (b"51", b"##", b"--")])
    events = decode_all(frames, codec="index52", no_read="--", cut_card="##")
    assert [(e["type"], e.get("card")) for e in events] == [
        ("card", "KC"),
        ("cut", None),
        ("card", None),
    ]


# --- fuzzing -------------------------------------------------------------------------

payloads = st.binary(min_size=1, max_size=12).filter(lambda b: b"\r" not in b and b"\n" not in b)
cuts = st.lists(st.integers(min_value=0, max_value=10_000), max_size=8)


@settings(max_examples=300, deadline=None)
@given(st.lists(payloads, max_size=10), cuts, st.sampled_from(["line", "stx-etx"]))
def test_well_formed_frames_come_back_whatever_the_read_sizes(
    items: list[bytes], cut: list[int], framing: str
) -> None:
    if framing == "stx-etx":
        items = [p for p in items if STX not in p and ETX not in p]
    stream = b"".join(encode_frame(framing, p) for p in items)
    frames = feed_all(framing, split(stream, cut))
    assert [(f.kind, f.payload) for f in frames] == [("frame", p) for p in items]


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300), cuts, st.sampled_from(["line", "stx-etx"]), st.integers(1, 16))
def test_random_bytes_nothing_is_dropped_and_garbled_frames_are_unreadable_cards(
    data: bytes, cut: list[int], framing: str, max_frame: int
) -> None:
    frames = feed_all(framing, split(data, cut), max_frame=max_frame)
    received = b"".join(f.raw for f in frames)
    if framing == "line":  # terminators end lines and are the only bytes not kept
        assert received == data.replace(b"\r", b"").replace(b"\n", b"")
    else:
        assert received == data
    assert all(len(f.raw) <= max_frame + 3 for f in frames)  # memory stays bounded
    decoder = FrameDecoder(ReaderConfig())
    for frame in frames:
        event = decoder.event(frame)
        if frame.kind == "tail":
            assert event is None
            continue
        assert event is not None and event["raw"] == frame.raw.hex()
        if frame.kind == "garbled":
            assert event == {
                "type": "card",
                "card": None,
                "raw": frame.raw.hex(),
                "detail": frame.problem,
                "actor": "reader",
            }
        else:
            assert event["type"] in ("card", "cut")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(ALL_CARDS), min_size=1, max_size=8),
    st.data(),
    cuts,
)
def test_one_corrupted_byte_in_stx_etx_never_passes_as_a_card(
    cards: list[str], data: st.DataObject, cut: list[int]
) -> None:
    frames = [encode_frame("stx-etx", c.encode()) for c in cards]
    hit = data.draw(st.integers(0, len(cards) - 1), label="frame")
    offset = data.draw(st.integers(0, len(frames[hit]) - 1), label="byte")
    value = data.draw(st.integers(0, 255).filter(lambda v: v != frames[hit][offset]))
    broken = bytearray(frames[hit])
    broken[offset] = value
    stream = b"".join(frames[:hit]) + bytes(broken) + b"".join(frames[hit + 1 :])
    events = decode_all(feed_all("stx-etx", split(stream, cut)))
    read = [e["card"] for e in events if e["card"] is not None]
    assert any(e["card"] is None for e in events)
    others = iter(cards[:hit] + cards[hit + 1 :])
    assert all(card in others for card in read)  # in order, and none from the broken frame


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(ALL_CARDS), min_size=1, max_size=8), st.data())
def test_truncated_frames_become_unreadable_cards(cards: list[str], data: st.DataObject) -> None:
    stream = b"".join(encode_frame("stx-etx", c.encode()) for c in cards)
    end = data.draw(st.integers(1, len(stream) - 1))
    if end % 5 == 0:  # cut at a frame boundary: nothing is broken, draw a cut inside
        end += 1 + data.draw(st.integers(0, 3))
    events = decode_all(feed_all("stx-etx", [stream[:end]]))
    complete = end // 5
    assert [e["card"] for e in events] == [*cards[:complete], None]
