"""Hardware in the loop, without the hardware: the real serial driver, through pyserial,
reads a real pseudo-terminal that plays the shoe's side.

Unplugging is closing the pty's master (the reader's reads fail, as with a pulled USB
cable); the port coming back is a new pty behind the same symlink. The rules core
(`station.core.table.Table`) judges what the driver reports, as the live station does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.decoding import FrameDecoder
from drivers.framing import encode_frame, make_framer
from drivers.serial_reader import SerialReader
from drivers.sim.pty import PtyPort
from drivers.sim.rig import parse_rig_faults, rig_events
from station.core.table import Table
from station.core.verdicts import SCANNER_FAULT
from tests.conftest import run_station
from tests.hil.rigkit import (
    TOKEN,
    FakeStationApi,
    TableSink,
    config_for,
    journal_export,
    play_against_station,
    play_into,
    sim_shoe,
)
from tests.netkit import free_port
from tests.readerkit import CollectingSink, running, wait_until


@pytest.fixture
def shoe(tmp_path: Path) -> Iterator[PtyPort]:
    port = PtyPort(tmp_path / "shoe")
    yield port
    port.close()


@pytest.mark.parametrize(
    ("framing", "codec"), [("line", "text"), ("stx-etx", "suit-rank-4"), ("line", "index52")]
)
def test_cards_through_a_pty_and_the_stop_command_back(
    shoe: PtyPort, framing: str, codec: str
) -> None:
    config = config_for(shoe.link or Path(), framing=framing, codec=codec, prefix=b"]")
    reader = SerialReader(config)
    cards = ["AS", "TD", "KH", "9C"]
    from drivers.codecs import make_codec

    encode = make_codec(codec).encode
    sink = CollectingSink()
    with running(reader, sink):
        assert shoe.wait_reader(timeout=10)
        for card in cards:
            shoe.write(encode_frame(framing, encode(card).encode(), prefix=b"]"))
        shoe.write(encode_frame(framing, b"CUT", prefix=b"]"))
        sink.wait_for(lambda s: len(s.events) == 5)
        assert reader.send(b"\x13")
        assert shoe.read(timeout=5) == b"\x13"
    assert sink.cards() == cards and sink.types()[-1] == "cut"


def test_unplug_mid_round_is_a_fault_the_table_suspends_and_the_reader_comes_back(
    shoe: PtyPort,
) -> None:
    table = Table()
    sink = TableSink(table)
    reader = SerialReader(config_for(shoe.link or Path()))

    def deal(*cards: str) -> None:
        before = len(sink.events)
        for card in cards:
            shoe.write(f"{card}\r\n".encode())
        sink.wait_for(lambda s: len(s.events) == before + len(cards))

    with running(reader, sink):
        assert shoe.wait_reader(timeout=10)
        sink.judge({"type": "shoe"}, "dealer")
        deal("AS", "2S")  # burn reveal (an ace: burn one), the burn
        assert sink.judge({"type": "close_bets"}, "dealer")["round"] == 1
        deal("9H", "8D")  # P1, B1: the round is being dealt
        assert shoe.drain()
        shoe.unplug()
        sink.wait_for(lambda s: "fault" in s.types())
        source, fault, verdict = sink.judged[-1]
        assert (source, fault["type"], verdict["error"]) == ("reader", "fault", SCANNER_FAULT)
        assert table.suspension is not None
        assert reader.status()["connected"] is False
        shoe.plug()  # the cable goes back in: same link, a new pty
        sink.wait_for(lambda s: any("reconnected" in m for m, _ in s.notices))
        assert reader.status()["connected"] is True
        assert shoe.wait_reader(timeout=10)
        # The supervisor voids the round (cards may have come out unseen) and play goes on.
        assert sink.judge({"type": "void"}, "supervisor")["voided_round"] == 1
        assert sink.judge({"type": "close_bets"}, "dealer")["round"] == 2
        deal("3C", "4D")
    roles = [v["role"] for _, e, v in sink.judged if e["type"] == "card"]
    assert roles == ["burn_reveal", "burn", "P1", "B1", "P1", "B1"]
    assert [v["error"] for _, _, v in sink.judged if not v["ok"]] == [SCANNER_FAULT]
    messages = [m for m, _ in sink.notices]
    assert any(m.startswith("reconnecting to") for m in messages)


@pytest.mark.parametrize("framing", ["line", "stx-etx"])
def test_random_bytes_through_a_pty_are_all_reported(shoe: PtyPort, framing: str) -> None:
    """Fuzzing the whole driver: whatever comes down the line, it keeps running, reports
    every byte, and decides exactly as the pure framer and decoder do."""
    config = config_for(shoe.link or Path(), framing=framing, max_frame=16, frame_timeout=0.05)
    reader = SerialReader(config)
    sink = CollectingSink()

    def reported() -> int:
        raws = [e["raw"] for e in sink.events] + [d["raw"] for _, d in sink.notices if "raw" in d]
        return sum(len(raw) // 2 for raw in raws)

    with running(reader, sink) as thread:
        assert shoe.wait_reader(timeout=10)

        @settings(
            max_examples=25,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture],
        )
        @given(st.binary(min_size=1, max_size=200))
        def check(data: bytes) -> None:
            events_before, bytes_before = len(sink.events), reported()
            kept = data.replace(b"\r", b"").replace(b"\n", b"") if framing == "line" else data
            framer = make_framer(framing, 16)
            decoder = FrameDecoder(config)
            frames = framer.feed(data) + framer.flush("the line went quiet")
            expected = [e for e in map(decoder.event, frames) if e is not None]
            shoe.write(data)
            # Every byte reported, and every event in (a notice may carry bytes first).
            wait_until(
                lambda: (
                    reported() == bytes_before + len(kept)
                    and len(sink.events) - events_before >= len(expected)
                ),
                what="every byte and every event",
            )
            assert sink.events[events_before:] == expected
            assert thread.is_alive()

        check()


# --- station sim-shoe end to end ------------------------------------------------------------

SIM_ARGS = dict(seed=11, rounds=8)
SIM_FAULTS = (
    "unreadable=0.05,garbled=0.08,disconnect=0.04,foreign=0.1,while_suspended=0.3,"
    "extra_third=0.1,missing_third=0.1,early_card=0.05,short_burn=0.5"
)


def test_sim_shoe_into_the_serial_driver_gives_every_verdict_the_dealer_expects(
    tmp_path: Path,
) -> None:
    """`station sim-shoe` (a subprocess) plays a faulty shoe into a pty, the serial driver
    reads it, dealer and supervisor events come through the HTTP API: every event gets the
    verdict the simulated dealer expects (`expect`), unplugs and garbled frames included."""
    stream = list(
        rig_events(SIM_ARGS["seed"], parse_rig_faults(SIM_FAULTS), rounds=SIM_ARGS["rounds"])
    )
    injected = {e.get("fault") for e in stream}
    assert {"garbled", "disconnect", "unreadable"} <= injected, "pick a seed that has them"
    link = tmp_path / "shoe"
    (tmp_path / "station.toml").write_text(
        '[reader]\nurl = "/dev/baccarat-shoe"\nframing = "stx-etx"\ncodec = "suit-rank-4"\n'
        'no_read = "0000"\ncut_card = "9999"\n'
    )
    reader = SerialReader(
        config_for(link, framing="stx-etx", codec="suit-rank-4", no_read="0000", cut_card="9999")
    )
    table = Table()
    sink = TableSink(table, on_suspend=lambda: reader.send(b"\x13"))
    api = FakeStationApi(sink, stream)
    command = sim_shoe(
        link,
        pace=0.002,
        unplug_for=0.05,
        seed=SIM_ARGS["seed"],
        rounds=SIM_ARGS["rounds"],
        faults=SIM_FAULTS,
        config=tmp_path / "station.toml",
        station=api.url,
    )
    reads = sum(e["actor"] == "reader" for e in stream)
    rows, _ = play_into([*command, f"--token={TOKEN}"], link, reader, sink, reads, api)
    assert [r["event"] for r in rows] == stream
    assert {r["via"] for r in rows} == {"serial", "api", "unplug"}
    assert any(r.get("shoe_received", "").startswith("13") for r in rows)  # the card stop
    judged = sink.judged[: len(stream)]
    # The rig's exit closes the pty: one more fault after the stream, nothing else.
    assert [e["type"] for _, e, _ in sink.judged[len(stream) :]] == ["fault"]
    for (source, event, verdict), planned in zip(judged, stream, strict=True):
        where = f"{planned} -> {event}, {verdict}"
        assert event["type"] == planned["type"], where
        assert source == ("reader" if planned["actor"] == "reader" else "api"), where
        if planned["type"] == "card" and source == "reader":
            assert event["card"] == planned["card"], where
        assert verdict["error"] == planned.get("expect"), where
    assert any(v["result"] for _, _, v in judged), "no round was completed"


def test_sim_shoe_without_a_station_plays_only_the_reader_part(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    stream = list(rig_events(3, rounds=2, gated=False))
    reader = SerialReader(config_for(link))
    sink = CollectingSink()
    command = [
        "sim-shoe",
        "--link",
        str(link),
        "--pace",
        "0",
        "--seed",
        "3",
        "--rounds",
        "2",
        "--ungated",
    ]
    planned = [e for e in stream if e["actor"] == "reader"]
    rows, err = play_into(command, link, reader, sink, len(planned) + 1)  # and the exit's fault
    assert "no --station" in err
    assert [r["via"] for r in rows] == [
        "serial" if e["actor"] == "reader" else "skipped" for e in stream
    ]
    assert sink.cards() == [e["card"] for e in planned if e["type"] == "card"]
    assert sink.types()[len(planned) :] == ["fault"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--faults", "disconnect=0.1"], "the disconnect fault needs --link"),
        (["--faults", "garbled=2"], "the rate of garbled must be in 0..1"),
        (["--faults", "bogus=1"], "unknown fault 'bogus'"),
        (["--codec", "ean13"], "[reader] codec: unknown codec 'ean13'"),
        (["--config", "/nonexistent.toml"], "cannot read the config /nonexistent.toml"),
    ],
)
def test_sim_shoe_refuses_bad_arguments_before_making_a_pty(
    arguments: list[str], message: str
) -> None:
    done = run_station("sim-shoe", *arguments)
    assert done.returncode == 2 and message in done.stderr.decode(), done.stderr


@pytest.mark.slow
def test_sim_shoe_against_the_real_station(tmp_path: Path) -> None:
    """The whole loop with nothing faked: `station run` reads the pty with the serial
    driver, `station sim-shoe` plays the shoe and posts the dealer's and supervisor's
    events to its API; the journal holds, in order, the verdicts the dealer expects, and
    the station's card-stop command reaches the shoe."""
    pytest.importorskip("uvicorn", reason="the API's dependencies are not installed")
    seed, rounds = SIM_ARGS["seed"], 4
    stream = list(rig_events(seed, parse_rig_faults(SIM_FAULTS), rounds=rounds))
    assert {"garbled", "disconnect"} <= {e.get("fault") for e in stream}
    link = tmp_path / "shoe"
    port = free_port()
    config = tmp_path / "station.toml"
    config.write_text(f"""
[reader]
url = "{link}"
framing = "stx-etx"
codec = "index52"
no_read = "NR"
cut_card = "CUT"
reconnect_min = 0.02
reconnect_max = 0.2
[journal]
path = "{tmp_path / "journal.db"}"
[api]
bind = "127.0.0.1:{port}"
demo_tokens = true
[signals]
stop_command = "hex:13"
""")
    rig = sim_shoe(
        link,
        pace=0.05,
        unplug_for=0.1,
        seed=seed,
        rounds=rounds,
        faults=SIM_FAULTS,
        config=config,
        station=f"http://127.0.0.1:{port}",
    )
    rows = play_against_station(config, rig)
    assert any(r.get("shoe_received", "").startswith("13") for r in rows)  # the card stop
    before, journal = journal_export(config)
    # Before the rig made its pty the reader could not open the port: faults with no shoe
    # in play, accepted and changing nothing.
    assert {(e["type"], e["verdict"]["ok"]) for e in before} <= {("restart", True), ("fault", True)}
    assert len(journal) >= len(stream)
    for planned, row in zip(stream, journal, strict=False):
        where = f"{planned} -> {row}"
        assert row["type"] == planned["type"], where
        if planned["type"] == "card" and planned["actor"] == "reader":
            assert row["card"] == planned["card"], where
        assert row["verdict"]["error"] == planned.get("expect"), where
    # After the stream: the fault of the rig closing its pty, at most.
    assert [e["type"] for e in journal[len(stream) :]] in ([], ["fault"])
