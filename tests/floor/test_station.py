"""The floor from a whole station: `station run` SIGKILLed while it publishes, and a
station in this process whose table another journal already claims (refused: a notice,
an error line, an alert, /api/health and the heartbeat say so)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from station.live.config import StationConfig
from station.live.journal.reading import read_rows
from station.live.publisher.publisher import BURST_GAP, POLL, REFUSED
from station.shared.messages import Alert, Heartbeat, alert_subject, heartbeat_subject
from tests.conftest import spawn_run
from tests.diskkit import disk_full, failing_commits
from tests.floor.kit import (
    SITE,
    FloorBroker,
    Listener,
    append_rows,
    assert_exactly_once,
    new_journal,
    run_publisher,
    station_floor,
    table_count,
    wait_for,
    wait_published,
)
from tests.netkit import free_port
from tests.service.kit import make_config, serve

pytestmark = [pytest.mark.floor, pytest.mark.server]

KILLS = 5


def children(pid: int) -> list[int]:
    """The processes `pid` started (Linux's /proc)."""
    found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(p) for p in found]


def alive(pid: int) -> bool:
    """`pid` runs (an ended process that nobody reaped yet, a zombie, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def on_the_floor(
    floor: FloorBroker, tmp: Path, table: str, **api: Any
) -> tuple[StationConfig, dict[str, str]]:
    """A station in this process as `table` on this broker (`make_config`'s, with `api`)."""
    config, tokens = make_config(tmp, **api)
    table_config = config.table.model_copy(update={"id": table})
    update = {"table": table_config, "floor": station_floor(floor, table)}
    return config.model_copy(update=update), tokens


def station_toml(floor: FloorBroker, tmp: Path) -> tuple[Path, dict[str, str]]:
    """A `station run` config: the sim dealer at full speed, table-1 on the floor."""
    user = floor.user("table-1")
    path = tmp / "station.toml"
    path.write_text(
        f"""
[table]
id = "table-1"
decks = 1

[reader]
driver = "sim"

[reader.sim]
seed = 3
card_interval = 0.003
betting_time = 0.003
shuffle_time = 0.01
supervisor_after = 0.02

[journal]
path = "journal.db"

[api]
bind = "127.0.0.1:{free_port()}"

[floor]
url = "{floor.url}"
site = "{user.site}"
user = "{user.user}"
password = "env:FLOOR_PASSWORD"
heartbeat_interval = 1.0
timeout = 1.0
"""
    )
    return path, {"FLOOR_PASSWORD": user.password}


@pytest.mark.slow
def test_station_killed_five_times_while_publishing(floor: FloorBroker, tmp_path: Path) -> None:
    config, env = station_toml(floor, tmp_path)
    rng = random.Random(11)
    held = 0
    for _ in range(KILLS):
        station = spawn_run(config, env=env)
        try:
            # Killed once it has published more: mid-stream, at a random moment.
            wait_for(
                lambda held=held: asyncio.run(table_count(floor, "table-1")) > held + 20,
                timeout=20,
                what="rows published by the station",
            )
            time.sleep(rng.uniform(0, 0.3))
            publishers = children(station.pid)
            assert publishers, "the station runs its publisher in a process of its own"
        finally:
            station.send_signal(signal.SIGKILL)
            station.communicate(timeout=10)
        # Its publisher process goes with it (its control socket closed): none left over.
        wait_for(lambda p=publishers: not any(alive(pid) for pid in p), what="publisher gone")
        held = asyncio.run(table_count(floor, "table-1"))
    journal = tmp_path / "journal.db"
    # The rows the last kill left in the journal go out with the next start (here).
    with run_publisher(floor, "table-1", journal):
        wait_published(floor, "table-1", read_rows(journal, 0, 1_000_000)[-1].seq)
    messages = assert_exactly_once(floor, "table-1", journal)
    restarts = [m for m in messages if m.event.get("type") == "restart"]
    assert len(restarts) == KILLS


def test_a_station_whose_table_is_claimed_refuses_and_says_so(
    floor: FloorBroker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = new_journal(tmp_path / "other.db", "table-1")  # the station already on the floor
    append_rows(other, 3)
    with run_publisher(floor, "table-1", other.path):
        wait_published(floor, "table-1", other.last_seq)
    config, tokens = on_the_floor(floor, tmp_path, "table-1")
    with (
        Listener(floor, alert_subject(SITE, "table-1")) as alerts,
        Listener(floor, heartbeat_subject(SITE, "table-1")) as beats,
        serve(config, tokens) as live,
    ):
        wait_for(lambda: bool(alerts.messages), what="the alert")
        health = httpx.get(f"{live.url}/api/health").json()
        wait_for(
            lambda: any(Heartbeat.decode(b).floor == "refused" for b in beats.messages),
            what="a heartbeat saying refused",
        )
    assert health["status"] == "degraded"
    assert health["floor"]["state"] == "refused"
    assert "another station publishes as this table" in health["detail"]
    alert = Alert.decode(alerts.messages[0])
    assert (alert.table, alert.code) == ("table-1", "conflict")
    notices = [r for r in read_rows(config.journal.path) if r.event.get("message") == REFUSED]
    assert len(notices) == 1 and notices[0].actor == "floor"
    assert any(REFUSED in r.getMessage() for r in caplog.records if r.levelname == "ERROR")
    assert_exactly_once(floor, "table-1", other.path)  # the floor kept the first station's


def test_a_station_publishes_its_rows_and_heartbeats(floor: FloorBroker, tmp_path: Path) -> None:
    config, tokens = on_the_floor(floor, tmp_path, "table-2", allow_rig=True)
    with (
        Listener(floor, heartbeat_subject(SITE, "table-2")) as beats,
        serve(config, tokens) as live,
    ):
        assert live.post({"type": "shoe"}, "dealer").status_code == 200
        assert live.post({"type": "card", "card": "5H"}).status_code == 200
        last = live.station.snapshot.seq
        wait_published(floor, "table-2", last)
        # The stream holds the rows before the publisher's next report reaches the station:
        # health says "publishing" once it has.
        said: list[dict[str, Any]] = []

        def publishing() -> bool:
            said[:] = [httpx.get(f"{live.url}/api/health").json()]
            return bool(said[0].get("floor", {}).get("state") == "publishing")

        wait_for(publishing, what="health to say the publisher is publishing")
        health = said[0]

        # A heartbeat at the last row may go out before the publisher says "publishing"
        # (it said "connecting" once, under load): the one after it says so.
        def publishing_beats() -> list[Heartbeat]:
            found = (Heartbeat.decode(b) for b in beats.messages)
            return [b for b in found if b.seq == last and b.floor == "publishing"]

        wait_for(lambda: bool(publishing_beats()), what="a heartbeat at the last row, publishing")
    assert health["status"] == "ok" and health["floor"]["state"] == "publishing"
    beat = publishing_beats()[0]
    assert (beat.site, beat.table, beat.floor, beat.shoe) == (SITE, "table-2", "publishing", 1)
    snapshot = live.station.snapshot
    assert beat.round == snapshot.last_round and not beat.suspended and beat.code is None
    assert beat.hash == read_rows(config.journal.path, last - 1, 1)[0].hash
    assert_exactly_once(floor, "table-2", config.journal.path)


def test_a_station_that_cannot_write_its_journal_says_so_in_its_heartbeats(
    floor: FloorBroker, tmp_path: Path
) -> None:
    """No row can tell the floor (none is committed): the heartbeat does, until the
    journal is written again."""
    config, tokens = on_the_floor(floor, tmp_path, "table-2", allow_rig=True)
    fast = config.floor.model_copy(update={"heartbeat_interval": 1.0})
    config = config.model_copy(update={"floor": fast})
    with (
        Listener(floor, heartbeat_subject(SITE, "table-2")) as beats,
        serve(config, tokens) as live,
    ):
        assert live.post({"type": "shoe"}, "dealer").status_code == 200

        def said() -> list[str | None]:
            return [Heartbeat.decode(b).journal for b in beats.messages]

        wait_for(lambda: said()[-1:] == [None], what="a heartbeat, journal written")
        with failing_commits(live.station.journal, disk_full()):
            assert live.post({"type": "card", "card": "5H"}).status_code == 503
            wait_for(lambda: "disk full" in (said()[-1] or ""), what="disk full, heard")
        wait_for(lambda: live.station.unavailable is None, what="written again")
        heard = len(beats.messages)
        wait_for(lambda: len(beats.messages) > heard + 1, what="two more heartbeats")
        assert said()[-1] is None
        assert Heartbeat.decode(beats.messages[-1]).code == "SCANNER_FAULT"


def test_health_says_how_far_the_stream_holds_the_journal_while_rows_keep_coming(
    floor: FloorBroker, tmp_path: Path
) -> None:
    """A busy table's publisher never sees an empty read (each wake-up is a commit): the
    `published` of /api/health must still follow the rows the stream holds."""
    config, tokens = on_the_floor(floor, tmp_path, "table-2", allow_rig=True)
    with serve(config, tokens) as live:
        wait_published(floor, "table-2", live.station.snapshot.seq)

        def health() -> dict[str, Any]:
            floor_block: dict[str, Any] = httpx.get(f"{live.url}/api/health").json()["floor"]
            return floor_block

        wait_for(lambda: health()["state"] == "publishing", what="publishing")
        assert live.post({"type": "shoe"}, "dealer").status_code == 200
        for card in ("5H", "9C", "KD"):
            assert live.post({"type": "card", "card": card}).status_code == 200
        last = live.station.snapshot.seq
        wait_published(floor, "table-2", last)
        wait_for(lambda: health()["published"] == last, timeout=2.0, what=f"published {last}")
        # ... and its words too, once every row committed is in the stream.
        wait_for(
            lambda: health()["detail"] == f"caught up at row {last}", timeout=2.0, what="caught up"
        )


def test_the_publisher_process_killed_is_started_again_and_ends_with_the_station(
    floor: FloorBroker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The publisher runs in a process of its own: killed, the station says so and starts
    another, which resumes after the stream's last row; the station's stop ends it."""
    config, tokens = on_the_floor(floor, tmp_path, "table-2", allow_rig=True)
    with serve(config, tokens) as live:
        process = live.station.publisher.process
        assert process is not None
        first = process.pid
        assert first is not None and first != os.getpid()
        assert live.post({"type": "shoe"}, "dealer").status_code == 200
        wait_published(floor, "table-2", live.station.snapshot.seq)
        os.kill(first, signal.SIGKILL)
        for card in ("5H", "9C", "KD", "2S"):  # committed while no publisher runs
            assert live.post({"type": "card", "card": card}).status_code == 200
        wait_for(lambda: process.pid not in (None, first), what="a new publisher process")
        wait_published(floor, "table-2", live.station.snapshot.seq)
        second = process.pid
        assert second is not None
    assert not alive(second), "the station's stop ends its publisher process"
    assert any("the publisher process ended" in r.getMessage() for r in caplog.records), (
        "the station says its publisher ended"
    )
    assert_exactly_once(floor, "table-2", config.journal.path)


def test_the_publisher_process_yields_to_the_station_and_a_lone_commit_after_a_burst_goes_out(
    floor: FloorBroker, tmp_path: Path
) -> None:
    """The publisher runs only on the CPU the station leaves over (SCHED_IDLE), and it
    leaves the wake pipe unread for a burst gap after a wake-up: a commit that comes
    after a burst must still wake it (not wait for the 5 s poll)."""
    config, tokens = on_the_floor(floor, tmp_path, "table-2", allow_rig=True)
    with serve(config, tokens) as live:
        process = live.station.publisher.process
        assert process is not None and process.pid is not None
        assert os.sched_getscheduler(process.pid) == os.SCHED_IDLE
        assert live.post({"type": "shoe"}, "dealer").status_code == 200
        for card in ("5H", "9C", "KD", "2S", "3D", "4C"):  # a burst: within one gap
            assert live.post({"type": "card", "card": card}).status_code == 200
        wait_published(floor, "table-2", live.station.snapshot.seq)
        for card in ("6H", "7S", "8D"):  # each after a gap of quiet
            time.sleep(BURST_GAP * 2)
            before = live.station.snapshot.seq
            live.post({"type": "card", "card": card})
            assert live.station.snapshot.seq > before, "the card's row is committed"
            # well within the publisher's poll: the commit's own wake-up sent it
            wait_published(floor, "table-2", live.station.snapshot.seq, timeout=min(2.0, POLL / 2))
    assert_exactly_once(floor, "table-2", config.journal.path)
