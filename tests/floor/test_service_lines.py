"""A table's line on the floor against a real nats-server: one station's heartbeats (two
stations claiming one table: the second one's are ignored for the line and counted on
the conflict alert), and what a station says of its journal (`journal_down`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from station.floor.board import Board
from station.floor.config import FloorServiceConfig
from station.live.journal.reading import read_rows
from station.live.publisher.publisher import REFUSED
from station.shared.messages import Heartbeat, heartbeat_subject
from tests.floor.floorkit import (
    RunningFloor,
    floor_config,
    heartbeat,
    in_thread,
    publish_rows,
    serve_floor,
    wait_for,
)
from tests.floor.kit import SITE, FloorBroker, admin, append_rows, new_journal, run_publisher

pytestmark = [pytest.mark.floor, pytest.mark.server]


def conflict(running: RunningFloor, table: str) -> dict[str, Any] | None:
    """The table's conflict alert as its line shows it (None: none)."""
    said = running.table(table)["station_alerts"]
    return next((a for a in reversed(said) if a["code"] == "conflict"), None)


def recorded(
    running: RunningFloor, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[Heartbeat, bool]]:
    """Every heartbeat the board is given from now on, and whether it took it for the
    table's line."""
    board = running.service.board
    seen: list[tuple[Heartbeat, bool]] = []
    take: Callable[..., bool] = board.heartbeat

    def keep(beat: Heartbeat, *args: Any) -> bool:
        taken = take(beat, *args)
        seen.append((beat, taken))
        return taken

    monkeypatch.setattr(board, "heartbeat", keep)
    return seen


def beat(seq: int, publisher: str, digest: str = "0" * 64, table: str = "t") -> Heartbeat:
    """A station's heartbeat at row `seq` (its hash `digest`), its publisher `publisher`."""
    return Heartbeat(
        SITE, table, "2026-12-01T00:00:00Z", seq, digest, seq, publisher, "punto_banco", 1,
        None, False, None,
    )  # fmt: skip


def send_beat(floor: FloorBroker, heartbeat: Heartbeat) -> None:
    """`heartbeat` on its subject (core NATS), as a station sends it."""

    async def send() -> None:
        async with admin(floor) as nc:
            await nc.publish(heartbeat_subject(SITE, heartbeat.table), heartbeat.encode())
            await nc.flush()

    in_thread(lambda: asyncio.run(send()))


def test_a_second_station_on_a_table_never_takes_its_line(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's floor: the table's station at row 980 publishing, a second station
    with a journal of its own at row 393 refused. Here 31 and 6 rows; heartbeats every
    second."""
    first = new_journal(tmp_path / "first.db", "table-1")
    append_rows(first, 30)
    second = new_journal(tmp_path / "second.db", "table-1")
    append_rows(second, 5)
    ours = {r.hash for r in read_rows(first.path, 0, 1000)}
    theirs = {r.hash for r in read_rows(second.path, 0, 1000)}
    assert not ours & theirs  # two journals: no row alike
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("table-1",))
    with serve_floor(config, tokens) as running:
        beats = recorded(running, monkeypatch)
        with run_publisher(floor, "table-1", first.path):
            wait_for(
                lambda: (
                    running.table("table-1")["station_seq"] == first.last_seq
                    and running.table("table-1")["archived_seq"] == first.last_seq
                ),
                "the first station's rows and heartbeat",
            )
            with run_publisher(floor, "table-1", second.path) as refused:
                wait_for(
                    lambda: (
                        (c := conflict(running, "table-1")) is not None
                        and REFUSED in c["message"]
                        and c["heartbeats_ignored"] >= 3
                    ),
                    "three heartbeats of the second station counted on its conflict alert",
                )
                assert refused.publisher.status.state == "refused"
                line = running.table("table-1")
                said = conflict(running, "table-1")
    assert line["online"] and line["publisher"] == "publishing"
    assert line["station_seq"] == line["archived_seq"] == first.last_seq
    assert line["rows_behind"] == 0 and line["held"] == 0 and line["alerts"] == []
    assert said is not None and said["ignored_seq"] == second.last_seq
    assert [a["code"] for a in line["station_alerts"]] == ["conflict"]  # the station's own
    taken = [b for b, took in beats if took]
    ignored = [b for b, took in beats if not took]
    assert taken and all(b.hash in ours for b in taken), "a heartbeat of the second station"
    assert ignored and all(b.hash in theirs for b in ignored), "a heartbeat of the first one"
    assert said["heartbeats_ignored"] == len(ignored)


def test_a_heartbeat_behind_the_archive_is_checked_against_it(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A station whose publisher has not yet checked its journal (connecting) names a row
    the archive holds: by the archive's hash it is the table's station or not."""
    journal = new_journal(tmp_path / "t1.db", "table-1")
    append_rows(journal, 9)
    rows = read_rows(journal.path, 0, 1000)
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("table-1",))
    with serve_floor(config, tokens) as running:
        publish_rows(floor, "table-1", rows)
        wait_for(lambda: running.table("table-1")["archived_seq"] == 10, "the rows")
        send_beat(floor, beat(4, "connecting", rows[3].hash, table="table-1"))
        wait_for(lambda: running.table("table-1")["station_seq"] == 4, "the heartbeat at row 4")
        send_beat(floor, beat(7, "connecting", "f" * 64, table="table-1"))
        wait_for(lambda: conflict(running, "table-1") is not None, "the heartbeat refused")
        line = running.table("table-1")
        send_beat(floor, beat(10, "connecting", "e" * 64, table="table-1"))  # the last row
        wait_for(
            lambda: conflict(running, "table-1")["heartbeats_ignored"] == 2,  # type: ignore[index]
            "the second heartbeat refused",
        )
        assert running.table("table-1")["station_seq"] == 4
    assert line["station_seq"] == 4 and line["publisher"] == "connecting"
    assert line["station_alerts"] == [
        {
            "code": "conflict",
            "message": "its station's journal is not the archived one (another hash at a "
            "row the archive holds): not this table's station",
            "params": {"why": "journal"},  # the screens' words by code (`said`)
            "ts": "2026-12-01T00:00:00Z",
            "heartbeats_ignored": 1,
            "ignored_seq": 7,
        }
    ]


def test_journal_down_is_in_the_tables_api(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`GET /api/floor/tables` says why a station cannot write its journal, as the manual
    lists it, and null once it can."""
    words = "the journal cannot be written: disk full; free space on /var/lib/baccarat-station"
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("table-1", "table-2"))
    with serve_floor(config, tokens) as running:
        heartbeat(floor, "table-1", 3, journal=words)
        heartbeat(floor, "table-2", 5)
        wait_for(
            lambda: running.table("table-1")["suspended"] and running.table("table-2")["online"],
            "the heartbeats",
        )
        down, up = running.table("table-1"), running.table("table-2")
        heartbeat(floor, "table-1", 3)  # written again
        wait_for(lambda: not running.table("table-1")["suspended"], "written again")
        again = running.table("table-1")
    assert down["journal_down"] == words
    assert down["suspension"]["code"] == "JOURNAL_UNWRITABLE"
    assert up["journal_down"] is None and again["journal_down"] is None


def test_a_refused_station_ahead_of_the_archive_is_ignored_too() -> None:
    """Its publisher says refused: whatever row it names, its heartbeats are not the
    table's (none is taken, the line stays the table's station's); with no conflict alert
    from a station (a floor started after it), the floor makes one."""
    board = Board(FloorServiceConfig())
    assert board.heartbeat(beat(10, "publishing"))
    assert not board.heartbeat(beat(393, "refused"))
    assert not board.heartbeat(beat(394, "refused"))
    line = board.table("t")
    assert (line["station_seq"], line["publisher"]) == (10, "publishing")
    [said] = line["station_alerts"]
    assert said["code"] == "conflict" and "publisher is refused" in said["message"]
    assert (said["heartbeats_ignored"], said["ignored_seq"]) == (2, 394)
    # A station ahead of the archive whose publisher has not checked yet: taken (nothing
    # to check it against), until its publisher says refused.
    assert board.heartbeat(beat(500, "connecting"))
