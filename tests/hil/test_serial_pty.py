"""Hardware in the loop, without the hardware: the real serial driver, through pyserial,
reads a real pseudo-terminal that plays the shoe's side.

Unplugging is closing the pty's master (the reader's reads fail, as with a pulled USB
cable); the port coming back is a new pty behind the same symlink. The rules core
(`station.core.table.Table`) judges what the driver reports, as the live station does.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.config import ReaderConfig
from drivers.decoding import FrameDecoder
from drivers.framing import encode_frame, make_framer
from drivers.serial_reader import SerialReader
from drivers.sim.pty import PtyPort
from drivers.sim.rig import parse_rig_faults, rig_events
from station.core.table import ERRORS, SCANNER_FAULT, Table
from tests.conftest import run_station, spawn_run, spawn_station
from tests.netkit import free_port
from tests.readerkit import CollectingSink, running, wait_until


class TableSink(CollectingSink):
    """The station's part in miniature: every event, from the reader or from the dealer
    and supervisor, is judged by one `Table` in arrival order."""

    def __init__(self, table: Table, on_suspend: Callable[[], object] | None = None) -> None:
        super().__init__()
        self.table = table
        self.on_suspend = on_suspend  # what the service does: the shoe's card-stop command
        self.judged: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self._lock = threading.Lock()

    def event(self, event: dict[str, Any]) -> None:
        self.judge(event, "reader")
        super().event(event)

    def judge(self, event: dict[str, Any], source: str) -> dict[str, Any]:
        with self._lock:
            verdict: dict[str, Any] = dict(self.table.apply(event))
            self.judged.append((source, event, verdict))
            if verdict["error"] in ERRORS and self.on_suspend is not None:
                self.on_suspend()
            return verdict


def config_for(link: Path, **keys: Any) -> ReaderConfig:
    quick = {"reconnect_min": 0.02, "reconnect_max": 0.2, "frame_timeout": 0.2}
    return ReaderConfig(url=str(link), **{**quick, **keys})


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

TOKEN = "rig-test-token"


class FakeStationApi:
    """`POST /api/events` on 127.0.0.1, judging with the same `TableSink` as the reader.

    The rig posts a dealer event right after writing the cards before it; the reader may
    still be decoding them. A real station orders by arrival too, and a real dealer is
    seconds slower than this rig, so here each post waits until the reader has passed on
    every reader event that precedes it in the (known) stream: the test is then exact."""

    def __init__(
        self,
        sink: TableSink,
        stream: list[dict[str, Any]],
        on_the_line: Callable[[dict[str, Any]], bool] = lambda e: e.get("actor") == "reader",
    ) -> None:
        self.sink = sink
        self.readers_before: list[int] = []
        count = 0
        for event in stream:
            if on_the_line(event):  # the shoe sends it (the rig's `ShoeEncoder.on_the_line`)
                count += 1
            else:
                self.readers_before.append(count)
        self.posts = 0
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    return self.answer(401, {"detail": "missing token"})
                event = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                need = api.readers_before[api.posts]
                api.posts += 1
                api.sink.wait_for(lambda s: len(s.events) >= need)
                self.answer(200, api.sink.judge(event, "api"))

            def answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


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
    command = [
        "sim-shoe",
        "--link",
        str(link),
        "--pace",
        "0.002",
        "--unplug-for",
        "0.05",
        "--seed",
        str(SIM_ARGS["seed"]),
        "--rounds",
        str(SIM_ARGS["rounds"]),
        "--faults",
        SIM_FAULTS,
        "--config",
        str(tmp_path / "station.toml"),
        "--station",
        api.url,
        f"--token={TOKEN}",  # a token may begin with "-": never a separate argument
    ]
    rig = spawn_station(*command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(link.is_symlink, what="the rig's pty link")
        with running(reader, sink):
            out, err = rig.communicate(timeout=120)
            assert rig.returncode == 0, err.decode()
            sink.wait_for(lambda s: len(s.events) >= sum(e["actor"] == "reader" for e in stream))
    finally:
        if rig.poll() is None:
            rig.kill()
        api.close()
    rows = [json.loads(line) for line in out.splitlines()]
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
    rig = spawn_station(*command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(link.is_symlink, what="the rig's pty link")
        with running(reader, sink):
            out, err = rig.communicate(timeout=60)
            planned = [e for e in stream if e["actor"] == "reader"]
            sink.wait_for(lambda s: len(s.events) > len(planned))  # and the exit's fault
    finally:
        if rig.poll() is None:
            rig.kill()
    assert rig.returncode == 0
    assert "no --station" in err.decode()
    rows = [json.loads(line) for line in out.splitlines()]
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
    rig_command = [
        "sim-shoe",
        "--link",
        str(link),
        "--pace",
        "0.05",
        "--unplug-for",
        "0.1",
        "--seed",
        str(seed),
        "--rounds",
        str(rounds),
        "--faults",
        SIM_FAULTS,
        "--config",
        str(config),
        "--station",
        f"http://127.0.0.1:{port}",
    ]
    rig = None
    station = spawn_run(config)
    try:
        assert station.stdout is not None
        token = ""
        for line in station.stdout:
            parts = line.split()
            if len(parts) == 2 and parts[0] == "supervisor":
                token = parts[1]
                break
        assert token, "station run printed no supervisor token"
        rig = spawn_station(
            *rig_command, f"--token={token}", stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = rig.communicate(timeout=180)
        assert rig.returncode == 0, err.decode()
    finally:
        for proc in (rig, station):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
    rows = [json.loads(line) for line in out.splitlines()]
    assert any(r.get("shoe_received", "").startswith("13") for r in rows)  # the card stop
    export = run_station("journal", "export", "--config", str(config))
    journal = [json.loads(line) for line in export.stdout.splitlines()]
    first_shoe = next(i for i, e in enumerate(journal) if e["type"] == "shoe")
    # Before the rig made its pty the reader could not open the port: faults with no shoe
    # in play, accepted and changing nothing.
    assert {(e["type"], e["verdict"]["ok"]) for e in journal[:first_shoe]} <= {
        ("restart", True),
        ("fault", True),
    }
    journal = journal[first_shoe:]
    assert len(journal) >= len(stream), export.stderr
    for planned, row in zip(stream, journal, strict=False):
        where = f"{planned} -> {row}"
        assert row["type"] == planned["type"], where
        if planned["type"] == "card" and planned["actor"] == "reader":
            assert row["card"] == planned["card"], where
        assert row["verdict"]["error"] == planned.get("expect"), where
    # After the stream: the fault of the rig closing its pty, at most.
    assert [e["type"] for e in journal[len(stream) :]] in ([], ["fault"])
