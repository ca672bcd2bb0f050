"""Game protection on the floor, against a real nats-server: a shoe at table B that
repeats a shoe of table A is alerted by the floor-wide check within k cards of the run,
once (a restarted floor service neither forgets its index nor alerts again); a station's
own WEAK_SHUFFLE notice shows on the floor view; an index that cannot be used turns the
check off with an alert while the archive goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from station.core.protection import MemoryHistory, Protector, run_length
from station.core.table import Table
from station.floor.archive import Archive
from station.live.journal import Journal
from station.live.protection.monitor import ACTOR
from station.shared.rows import Pending, Row, notice
from tests.conftest import run_station
from tests.floor.floorkit import (
    floor_config,
    make_journal,
    publish_rows,
    serve_floor,
    shoe_events,
    wait_for,
)
from tests.floor.kit import FloorBroker

pytestmark = [pytest.mark.floor, pytest.mark.server]


def floor_alerts(running: Any, kind: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{running.url}/api/floor/alerts", headers=running.headers("viewer"))
    assert answer.status_code == 200, answer.text
    return [a for a in answer.json()["alerts"] if a["kind"] == kind]


def card_rows(rows: list[Row], first: int, last: int) -> int:
    """Card rows (burns included) from row `first` to row `last`."""
    return sum(1 for r in rows if first <= r.seq <= last and r.event.get("type") == "card")


def test_a_shoe_of_table_b_repeating_table_a_is_alerted_once_across_restarts(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    shoe = shoe_events(seed=3, decks=1)
    # Table A deals the shoe and starts its next (so the shoe the cut card ended is in the
    # floor's index); table B deals a shoe of its own, then the same shoe as A.
    rows_a = make_journal(tmp_path / "a.db", "A", [*shoe, {"type": "shoe"}], decks=1)
    rows_b = make_journal(tmp_path / "b.db", "B", [*shoe_events(seed=8, decks=1), *shoe], 1)
    repeat_at = [r.seq for r in rows_b if r.event.get("type") == "shoe"][1]
    half = next(
        r.seq for r in rows_b if r.seq > repeat_at and card_rows(rows_b, repeat_at, r.seq) == 20
    )
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("A", "B"))
    with serve_floor(config, tokens) as running:
        publish_rows(floor, "A", rows_a)
        wait_for(lambda: running.table("A")["archived_seq"] == len(rows_a), "table A")
        assert running.service.protection.wait_idle()
        assert running.tables()["protection"]["history_shoes"] == 1
        publish_rows(floor, "B", [r for r in rows_b if r.seq <= half])
        wait_for(lambda: floor_alerts(running, "SHOE_SEQUENCE"), "the floor-wide alert")
        (alert,) = floor_alerts(running, "SHOE_SEQUENCE")
        seen = running.table("B")
        status = running.tables()["protection"]
    # Named: table B, its shoe (row), where the run starts; and A's shoe it repeats.
    assert alert["table"] == "B" and alert["resolved"] is None
    assert f"table B, shoe at row {repeat_at}" in alert["message"]
    assert "in the order of A shoe at seq 2 started" in alert["message"]  # A's `shoe` row
    assert "(its card 1) from card 1 of this shoe" in alert["message"]
    k = run_length(2, 1)  # A's shoe and B's first: the floor's history when B's began
    assert f"k = {k}" in alert["message"] and status["k"]["B"] == k
    # what the floor view says it with, in any language: the check's own figures
    figures = alert["params"]
    assert alert["code"] == "floor_protection" and figures["alert"] == "SHOE_SEQUENCE"
    assert (figures["table"], figures["shoe_seq"], figures["floor_k"]) == ("B", repeat_at, k)
    assert figures["earlier"].startswith("A shoe at seq 2 started")
    assert card_rows(rows_b, repeat_at, alert["seq"]) == k  # alerted at the k-th card
    assert [a["kind"] for a in seen["alerts"]] == ["SHOE_SEQUENCE"]
    assert status["running"] and status["history_shoes"] == 2

    # A restart: the index is kept, the catch-up re-checks B's shoe, no second alert; the
    # rest of B's shoe raises nothing new, nor does a station's own notice of the same run
    # (same shoe, same earlier shoe: had B's station had A's shoe in its index).
    earlier = f"A shoe at seq 2 started {rows_a[1].ts}"
    same = notice(
        "station", ACTOR, "same", alert="SHOE_SEQUENCE", shoe_seq=repeat_at, earlier=earlier
    )
    with Journal(tmp_path / "b.db") as journal:
        journal.append([same])
        rows_b = list(journal.rows())
    with serve_floor(config, tokens) as running:
        assert running.service.protection.wait_idle()
        assert running.tables()["protection"]["history_shoes"] == 2
        publish_rows(floor, "B", [r for r in rows_b if r.seq > half])
        wait_for(lambda: running.table("B")["archived_seq"] == len(rows_b), "the rest of B")
        assert running.service.protection.wait_idle()
        assert [a["id"] for a in floor_alerts(running, "SHOE_SEQUENCE")] == [alert["id"]]
    with Archive(config.archive.path) as archive:
        assert archive.count("B") == len(rows_b)  # archiving never waited on the check


def weak_shuffle_notice() -> tuple[list[dict[str, Any]], Pending]:
    """Two shoes, the second a single riffle of the first, and the WEAK_SHUFFLE notice the
    station's checker journals for it (`station.live.protection.monitor`)."""
    dealt = run_station(
        "simulate", "--seed", "4", "--decks", "1", "--shoes", "2", "--shuffle", "riffle:1"
    )
    assert dealt.returncode == 0, dealt.stderr
    events = [
        {k: v for k, v in orjson.loads(line).items() if k not in ("actor", "expect", "fault")}
        for line in dealt.stdout.splitlines()
    ]
    protector = Protector(MemoryHistory(), 1, table="C")
    table = Table(decks=1)
    alerts = []
    for seq, event in enumerate(events, start=2):
        alerts += protector.row(event, dict(table.decide(event).verdict), seq)
    alerts += protector.finish(len(events) + 2)
    weak = next(a for a in alerts if a.code == "WEAK_SHUFFLE")
    details = weak.as_dict()
    message = details.pop("message")
    return events, notice("station", ACTOR, message, alert=details.pop("code"), **details)


def test_a_stations_weak_shuffle_notice_shows_on_the_floor(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    events, weak = weak_shuffle_notice()
    rows = make_journal(tmp_path / "c.db", "C", events, decks=1)
    with Journal(tmp_path / "c.db") as journal:
        journal.append([weak])
        rows = list(journal.rows())
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("C",))
    with serve_floor(config, tokens) as running:
        publish_rows(floor, "C", rows)
        wait_for(lambda: running.table("C")["archived_seq"] == len(rows), "table C")
        (alert,) = floor_alerts(running, "WEAK_SHUFFLE")
        assert alert["table"] == "C" and alert["seq"] == len(rows)
        assert weak.event["message"] in alert["message"] and "tell surveillance" in alert["message"]
        assert alert["code"] == "station_protection"
        assert alert["params"]["alert"] == "WEAK_SHUFFLE"
        assert alert["params"]["riffles"] == weak.event["riffles"]
        assert [a["kind"] for a in running.table("C")["alerts"]] == ["WEAK_SHUFFLE"]
        assert running.service.protection.wait_idle()
        assert floor_alerts(running, "SHOE_SEQUENCE") == []  # the station's matter, not twice
    with serve_floor(config, tokens) as running:  # archived once: shown once after a restart
        assert len(floor_alerts(running, "WEAK_SHUFFLE")) == 1


def test_an_index_that_cannot_be_used_turns_the_check_off_not_the_floor(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    foreign = tmp_path / "foreign.db"
    foreign.write_bytes(b"not a database at all" * 100)
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("A",))
    config = config.model_copy(
        update={"protection": config.protection.model_copy(update={"index": foreign})}
    )
    rows = make_journal(tmp_path / "a.db", "A", shoe_events(seed=3, decks=1)[:30], decks=1)
    with serve_floor(config, tokens) as running:
        publish_rows(floor, "A", rows)
        wait_for(lambda: running.table("A")["archived_seq"] == len(rows), "table A")
        assert running.service.protection.wait_idle()
        (off,) = floor_alerts(running, "protection")
        status = running.tables()["protection"]
    assert str(foreign) in off["message"] and "off" in off["message"]
    assert not status["running"] and status["error"] == off["message"]
