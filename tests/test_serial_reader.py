"""The `[reader]` configuration, the driver registry, and the serial driver over a real
pyserial `socket://` port served by a TCP server on 127.0.0.1 (no mock of pyserial)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

import drivers
from drivers import create_reader, driver_names, factory_for, register
from drivers.config import ReaderConfig, from_mapping, parse_bytes
from drivers.framing import encode_frame
from drivers.serial_reader import SerialReader
from station.shared.sections import ConfigError
from tests.readerkit import CollectingSink, running, wait_until

# --- configuration ---------------------------------------------------------------------


def test_defaults_are_the_documented_ones() -> None:
    config = from_mapping({})
    assert config == ReaderConfig()
    assert (config.driver, config.url, config.baudrate, config.bytesize, config.parity) == (
        "serial",
        "/dev/baccarat-shoe",
        9600,
        8,
        "N",
    )
    assert (config.stopbits, config.framing, config.prefix, config.suffix, config.codec) == (
        1,
        "line",
        b"",
        b"",
        "text",
    )
    assert (config.no_read, config.cut_card, config.max_frame, config.stop_command) == (
        "NR",
        "CUT",
        64,
        None,
    )
    assert config.line_settings() == "9600 8N1"


def test_every_key_is_read_and_byte_keys_are_decoded() -> None:
    config = from_mapping(
        {
            "url": "socket://127.0.0.1:7000",
            "baudrate": 19200,
            "bytesize": 7,
            "parity": "E",
            "stopbits": 2,
            "xonxoff": True,
            "exclusive": False,
            "framing": "stx-etx",
            "prefix": "\\x1b",
            "suffix": "hex:0d 0d",
            "codec": "index52",
            "no_read": "??",
            "cut_card": "99",
            "max_frame": 16,
            "frame_timeout": 1,
            "stop_command": "\\x13",
            "reconnect_min": 0.1,
            "reconnect_max": 2,
        }
    )
    assert config.prefix == b"\x1b" and config.suffix == b"\r\r"
    assert config.stop_command == b"\x13"
    assert config.stopbits == 2.0 and config.frame_timeout == 1.0 and config.reconnect_max == 2.0
    assert config.line_settings() == "19200 7E2"
    assert config.serial_kwargs()["parity"] == "E"


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"baud": 9600}, "[reader] baud: unknown key; the keys are driver, url, baudrate"),
        ({"driver": "usb"}, "[reader] driver: 'usb' is not allowed; choose one of serial"),
        ({"baudrate": "9600"}, "[reader] baudrate: expected a whole number, got '9600'"),
        ({"baudrate": True}, "[reader] baudrate: expected a whole number"),
        ({"baudrate": 0}, "[reader] baudrate: must be positive"),
        ({"bytesize": 9}, "[reader] bytesize: 9 is not allowed; choose one of 5, 6, 7, 8"),
        ({"parity": "X"}, "[reader] parity: 'X' is not allowed; choose one of N, E, O, M, S"),
        ({"stopbits": 3}, "[reader] stopbits: 3.0 is not allowed; choose one of 1, 1.5, 2"),
        ({"framing": "slip"}, "[reader] framing: 'slip' is not allowed; choose one of line, stx"),
        ({"codec": "ean13"}, "[reader] codec: unknown codec 'ean13'; choose one of text"),
        ({"codec": "table:/nonexistent.csv"}, "[reader] codec: cannot read the barcode table"),
        ({"no_read": "AS"}, "[reader] no_read: 'AS' reads as AS with codec 'text'"),
        ({"cut_card": "12", "codec": "index52"}, "[reader] cut_card: '12' reads as KS"),
        ({"cut_card": "NR"}, "[reader] cut_card: must differ from no_read ('NR')"),
        ({"no_read": " "}, "[reader] no_read: cannot be empty"),
        ({"max_frame": 0}, "[reader] max_frame: must be at least 1 byte"),
        ({"frame_timeout": 0}, "[reader] frame_timeout: must be more than 0 seconds"),
        ({"reconnect_min": 5, "reconnect_max": 1}, "[reader] reconnect_max: must be at least"),
        ({"xonxoff": 1}, "[reader] xonxoff: expected true or false, got 1"),
        ({"prefix": "\r"}, "[reader] prefix: a line's prefix or suffix cannot hold CR or LF"),
        ({"stop_command": "hex:zz"}, "[reader] stop_command: 'hex:zz' is not hex bytes"),
        ({"stop_command": 19}, "[reader] stop_command: expected a string such as 'hex:13'"),
        ({"suffix": "€"}, "[reader] suffix: '€' has characters that are not single bytes"),
        ({"url": ""}, "[reader] url: give the port"),
    ],
)
def test_bad_settings_name_the_key_and_what_is_allowed(
    mapping: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        from_mapping(mapping)
    assert str(caught.value).startswith(message)


def test_parse_bytes_forms() -> None:
    assert parse_bytes("hex:1B 40") == b"\x1b@"
    assert parse_bytes("\\x13") == b"\x13"
    assert parse_bytes("\x13") == b"\x13"  # TOML's "\u0013" arrives as the character itself
    assert parse_bytes("STOP\\r\\n") == b"STOP\r\n"
    assert from_mapping({"stop_command": ""}).stop_command is None


def test_a_registered_driver_may_be_chosen_and_sub_tables_are_typed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(drivers._REGISTRY, "fake", lambda config: SerialReader(config))
    assert from_mapping({"driver": "fake"}).driver == "fake"
    # A driver's settings are a typed sub-table of the model ([reader.sim], [reader.camera]):
    config = from_mapping({"driver": "sim", "sim": {"seed": 7}})
    assert config.sim.seed == 7 and config.camera is None
    with pytest.raises(ConfigError, match=r"the keys are .*\[reader.camera\], \[reader.sim\]"):
        from_mapping({"fake": {"seed": 7}})


# --- registry ----------------------------------------------------------------------------


def test_registry_builds_the_configured_driver_lazily() -> None:
    assert "serial" in driver_names()
    reader = create_reader(ReaderConfig(url="loop://"))
    assert isinstance(reader, SerialReader) and reader.name == "serial"
    assert factory_for("serial") is SerialReader


def test_registry_refuses_unknown_and_duplicate_names() -> None:
    with pytest.raises(KeyError, match="no reader driver named 'usb'; the drivers are serial"):
        factory_for("usb")
    with pytest.raises(ValueError, match="already registered"):
        register("serial", SerialReader)


# --- the driver over socket:// --------------------------------------------------------------


class ShoeServer:
    """A TCP server on 127.0.0.1 standing in for a serial-to-network adapter."""

    def __init__(self, port: int = 0) -> None:
        self.listener = socket.create_server(("127.0.0.1", port))
        self.port = self.listener.getsockname()[1]
        self.url = f"socket://127.0.0.1:{self.port}"

    def accept(self, sink: CollectingSink, opened: int = 1) -> socket.socket:
        """The reader's connection, once the reader has opened its port for the `opened`-th
        time (pyserial discards what arrives while it opens, as on a real device)."""
        self.listener.settimeout(10)
        conn, _ = self.listener.accept()
        conn.settimeout(5)
        sink.wait_for(lambda s: len([m for m, d in s.notices if "retry_in" not in d]) >= opened)
        return conn

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def server() -> Iterator[ShoeServer]:
    shoe = ShoeServer()
    yield shoe
    shoe.close()


def fast(url: str, **keys: Any) -> ReaderConfig:
    return ReaderConfig(url=url, reconnect_min=0.02, reconnect_max=0.1, frame_timeout=0.1, **keys)


def test_cards_cut_and_no_read_over_a_line_port(server: ShoeServer) -> None:
    reader = SerialReader(fast(server.url))
    sink = CollectingSink()
    with running(reader, sink):
        conn = server.accept(sink)
        conn.sendall(b"AS\r\n10h\r\nNR\r\nCUT\r\n")
        sink.wait_for(lambda s: len(s.events) == 4)
        assert sink.cards() == ["AS", "TH", None]
        assert sink.types() == ["card", "card", "card", "cut"]
        assert sink.events[0]["raw"] == "4153" and sink.events[0]["actor"] == "reader"
        status = reader.status()
        assert status["connected"] and status["driver"] == "serial"
        assert status["frames"] == 4 and status["unreadable"] == 1
        assert "9600 8N1, line framing, codec text" in status["detail"]
        conn.close()
    assert sink.notices[0][0].startswith(f"reader port {server.url} open")
    assert reader.status()["detail"] == "stopped"


def test_stx_etx_bad_check_is_an_unreadable_card_with_its_bytes(server: ShoeServer) -> None:
    reader = SerialReader(fast(server.url, framing="stx-etx", codec="suit-rank-4"))
    sink = CollectingSink()
    good = encode_frame("stx-etx", b"4130")
    bad = bytearray(encode_frame("stx-etx", b"1010"))
    bad[-1] ^= 0x40
    with running(reader, sink):
        conn = server.accept(sink)
        conn.sendall(good + bytes(bad))
        sink.wait_for(lambda s: len(s.events) == 2)
        conn.close()
    assert sink.cards() == ["KD", None]
    assert sink.events[1]["raw"] == bytes(bad).hex()
    assert "block check" in sink.events[1]["detail"]


def test_a_frame_cut_short_is_reported_when_the_line_goes_quiet(server: ShoeServer) -> None:
    sink = CollectingSink()
    with running(SerialReader(fast(server.url)), sink):
        conn = server.accept(sink)
        conn.sendall(b"K")
        sink.wait_for(lambda s: len(s.events) == 1)
        conn.sendall(b"H\r\n")
        sink.wait_for(lambda s: len(s.events) == 2)
        conn.close()
    assert sink.cards() == [None, None]  # "K" alone, then "H": neither is a card
    assert "the line went quiet" in sink.events[0]["detail"]


def test_lost_connection_is_a_fault_then_the_reader_reconnects(server: ShoeServer) -> None:
    reader = SerialReader(fast(server.url))
    sink = CollectingSink()
    with running(reader, sink):
        conn = server.accept(sink)
        conn.sendall(b"AS\r\n9")  # "9" is cut short by the loss
        sink.wait_for(lambda s: len(s.events) == 1)
        conn.close()
        sink.wait_for(lambda s: "fault" in s.types())
        conn = server.accept(sink, opened=2)
        conn.sendall(b"KH\r\n")
        sink.wait_for(lambda s: s.cards()[-1:] == ["KH"])
        conn.close()
    assert sink.types()[:3] == ["card", "card", "fault"]
    assert sink.events[1]["raw"] == "39" and "the port was lost" in sink.events[1]["detail"]
    assert "lost" in sink.events[2]["detail"]
    messages = [m for m, _ in sink.notices]
    assert any(m.startswith("reconnecting to") for m in messages)
    assert any(m.startswith("reader reconnected") for m in messages)
    assert reader.status()["reconnects"] >= 1 and reader.status()["faults"] >= 1


def test_no_port_at_start_is_one_fault_then_retries_until_it_appears() -> None:
    probe = ShoeServer()
    port = probe.port
    probe.close()
    reader = SerialReader(fast(f"socket://127.0.0.1:{port}"))
    sink = CollectingSink()
    with running(reader, sink):
        sink.wait_for(lambda s: len(s.notices) >= 4)  # retries, doubling the wait up to the max
        wait_until(lambda: reader.status()["detail"].endswith("retrying in 0.1 s"))
        assert reader.status()["connected"] is False
        assert "cannot open" in reader.status()["detail"]
        late = ShoeServer(port)
        try:
            conn = late.accept(sink)
            conn.sendall(b"QC\r\n")
            sink.wait_for(lambda s: s.cards() == ["QC"])
            conn.close()
        finally:
            late.close()
    # One fault however many retries; closing the shoe's end at the close of the test may
    # be seen as a second, legitimate loss before the reader stops.
    assert sink.types()[:2] == ["fault", "card"]
    assert all("lost" in e["detail"] for e in sink.events[2:]), sink.events
    retries = [d["retry_in"] for m, d in sink.notices if "retry_in" in d]
    # doubled up to reconnect_max; then journaled only once a minute however often it retries
    assert retries[:4] == [0.02, 0.04, 0.08, 0.1]
    assert retries[4:] in ([], [0.02])  # a loss at the close starts a fresh backoff


def test_send_writes_the_stop_command_to_the_shoe(server: ShoeServer) -> None:
    reader = SerialReader(fast(server.url, stop_command=b"\x13"))
    assert reader.send(b"\x13") is False  # not connected yet
    sink = CollectingSink()
    with running(reader, sink):
        conn = server.accept(sink)
        assert reader.send(b"\x13") is True
        assert conn.recv(16) == b"\x13"
        conn.close()
