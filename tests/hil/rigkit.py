"""The shoe rig's test kit: `station sim-shoe` (a process) plays a shoe into a real pty,
the real serial driver reads it, and the dealer's and supervisor's events go to a station:
a miniature one here (`TableSink` judging with one `Table`, `FakeStationApi` for the
HTTP part) or a real `station run`. tests/hil/test_serial_pty.py and test_cercle_shoe.py
set the rig up the same way through these."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from drivers.config import ReaderConfig
from drivers.serial_reader import SerialReader
from station.core.table import Table
from station.core.verdicts import ERRORS
from tests.conftest import run_station, spawn_run, spawn_station
from tests.readerkit import CollectingSink, running, wait_until

TOKEN = "rig-test-token"


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


def sim_shoe(
    link: Path,
    *,
    seed: int,
    rounds: int,
    pace: float,
    faults: str,
    config: Path,
    station: str,
    unplug_for: float | None = None,
) -> list[str]:
    """The `station sim-shoe` arguments of a rig on `link` posting to `station` (its
    token is added by whoever runs it: it may begin with "-", so `--token=` in one)."""
    unplug = ["--unplug-for", str(unplug_for)] if unplug_for is not None else []
    return [
        "sim-shoe",
        "--link",
        str(link),
        "--pace",
        str(pace),
        *unplug,
        "--seed",
        str(seed),
        "--rounds",
        str(rounds),
        "--faults",
        faults,
        "--config",
        str(config),
        "--station",
        station,
    ]


def play_into(
    command: list[str],
    link: Path,
    reader: SerialReader,
    sink: CollectingSink,
    reads: int,
    api: FakeStationApi | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """Run the rig (`station COMMAND`) while `reader` reads its pty into `sink`, until the
    rig exits and the sink has more than `reads` events; `api` is closed after. The rig's
    rows (one per event: what it did with it) and its stderr."""
    rig = spawn_station(*command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(link.is_symlink, what="the rig's pty link")
        with running(reader, sink):
            out, err = rig.communicate(timeout=120)
            assert rig.returncode == 0, err.decode()
            sink.wait_for(lambda s: len(s.events) >= reads)
    finally:
        if rig.poll() is None:
            rig.kill()
        if api is not None:
            api.close()
    return [json.loads(line) for line in out.splitlines()], err.decode()


def play_against_station(config: Path, command: list[str]) -> list[dict[str, Any]]:
    """`station run --config CONFIG` (with `[api] demo_tokens`) and the rig (`station
    COMMAND`) posting with its supervisor token, until the rig exits; both are stopped
    after. The rig's rows."""
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
            *command, f"--token={token}", stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = rig.communicate(timeout=180)
        assert rig.returncode == 0, err.decode()
    finally:
        for proc in (rig, station):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
    return [json.loads(line) for line in out.splitlines()]


def journal_export(config: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The station's journal (`station journal export`): the rows before the first shoe,
    and from it on."""
    export = run_station("journal", "export", "--config", str(config))
    assert export.returncode == 0, export.stderr
    journal = [json.loads(line) for line in export.stdout.splitlines()]
    first_shoe = next(i for i, e in enumerate(journal) if e["type"] == "shoe")
    return journal[:first_shoe], journal[first_shoe:]
