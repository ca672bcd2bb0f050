"""A shoe's decision buttons (`[reader] decision_draw` / `decision_stand`): a frame equal
to one of them is the dealer's decision for the hand whose turn it is (issue 10)."""

from __future__ import annotations

from typing import Any

import pytest

from drivers.config import ReaderConfig, from_mapping
from drivers.decoding import FrameDecoder
from drivers.framing import Frame, encode_frame, make_framer
from drivers.serial_reader import SerialReader
from drivers.sim.rig import RigError, ShoeEncoder
from station.shared.sections import ConfigError
from tests.readerkit import CollectingSink, running
from tests.test_serial_reader import ShoeServer, fast, server  # noqa: F401 - the fixture

BUTTONS = {"decision_draw": "CARTE", "decision_stand": "NON"}


def decode(config: ReaderConfig, payload: bytes) -> dict[str, Any] | None:
    framer = make_framer(config.framing, config.max_frame)
    (frame,) = framer.feed(encode_frame(config.framing, payload, config.prefix, config.suffix))
    return FrameDecoder(config).event(frame)


def test_the_buttons_are_decisions_without_a_hand() -> None:
    config = ReaderConfig(**BUTTONS)
    assert decode(config, b"CARTE") == {
        "type": "decision",
        "draw": True,
        "raw": b"CARTE".hex(),
        "actor": "reader",
    }
    stand = decode(config, b" NON ")
    assert stand is not None and (stand["type"], stand["draw"]) == ("decision", False)
    assert "hand" not in stand
    # Framed as the shoe frames everything else.
    boxed = ReaderConfig(**BUTTONS, framing="stx-etx", prefix=b"]")
    assert (decode(boxed, b"CARTE") or {})["draw"] is True


def test_without_buttons_the_payloads_are_unreadable_cards() -> None:
    """Unset by default: a shoe that sends CARTE anyway is sending something unreadable."""
    config = ReaderConfig()
    assert (config.decision_draw, config.decision_stand) == (None, None)
    event = decode(config, b"CARTE")
    assert event is not None and (event["type"], event["card"]) == ("card", None)


def test_cards_and_the_cut_card_are_still_cards() -> None:
    config = ReaderConfig(**BUTTONS)
    assert (decode(config, b"9H") or {})["card"] == "9H"
    assert (decode(config, b"CUT") or {})["type"] == "cut"


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        (
            {"decision_draw": "CARTE"},
            "[reader] decision_stand: set decision_draw and decision_stand together",
        ),
        (
            {"decision_stand": "NON"},
            "[reader] decision_draw: set decision_draw and decision_stand together",
        ),
        (
            {"decision_draw": "X", "decision_stand": "X"},
            "[reader] decision_stand: must differ from decision_draw",
        ),
        (
            {"decision_draw": "CUT", "decision_stand": "NON"},
            "[reader] decision_draw: must differ from cut_card",
        ),
        (
            {"decision_draw": "CARTE", "decision_stand": "NR"},
            "[reader] decision_stand: must differ from no_read",
        ),
        (
            {"decision_draw": "AS", "decision_stand": "NON"},
            "'AS' reads as AS with codec 'text'; pick another",
        ),
        (
            {"decision_draw": " ", "decision_stand": "NON"},
            "[reader] decision_draw: cannot be empty",
        ),
        ({"decision_draw": 1, "decision_stand": "NON"}, "[reader] decision_draw"),
    ],
)
def test_bad_buttons_name_the_key(keys: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_mapping(keys)
    assert message in str(caught.value)


def test_the_rig_sends_decisions_down_the_line_only_with_buttons() -> None:
    with_buttons = ShoeEncoder(ReaderConfig(**BUTTONS))
    decision = {"type": "decision", "hand": "tableau2", "draw": False, "actor": "dealer"}
    assert with_buttons.on_the_line(decision)
    assert with_buttons.encode(decision) == b"NON\r\n"
    assert with_buttons.encode({**decision, "draw": True}) == b"CARTE\r\n"
    # A decision that breaks the rules on purpose names its hand: it goes to the API.
    assert not with_buttons.on_the_line({**decision, "fault": "refused_decision"})
    plain = ShoeEncoder(ReaderConfig())
    assert not plain.on_the_line(decision)
    with pytest.raises(RigError, match="set \\[reader\\] decision_draw"):
        plain.encode(decision)


def test_decisions_over_a_serial_port(server: ShoeServer) -> None:  # noqa: F811
    reader = SerialReader(fast(server.url, **BUTTONS))
    sink = CollectingSink()
    with running(reader, sink):
        conn = server.accept(sink)
        conn.sendall(b"5H\r\nCARTE\r\nNON\r\n")
        sink.wait_for(lambda s: len(s.events) == 3)
        got = list(sink.events)  # before the close: the port lost is a fault of its own
        conn.close()
    assert [(e["type"], e.get("draw")) for e in got] == [
        ("card", None),
        ("decision", True),
        ("decision", False),
    ]


def test_a_garbled_button_frame_is_unreadable() -> None:
    config = ReaderConfig(**BUTTONS, framing="stx-etx")
    event = FrameDecoder(config).event(Frame("garbled", b"\x02CARTE\x03\x00", problem="bad check"))
    assert event is not None and (event["type"], event["card"]) == ("card", None)
