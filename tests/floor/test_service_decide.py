"""The supervisors' decisions through the floor's API, against a real nats-server: only a
supervisor decides, every decision recorded with who, the errors say what to do, and the
decisions survive a restart of the floor service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.floor.floorkit import (
    RunningFloor,
    floor_config,
    make_journal,
    publish_rows,
    serve_floor,
    shoe_events,
    wait_for,
)
from tests.floor.kit import FloorBroker

pytestmark = [pytest.mark.floor, pytest.mark.server]


def post(
    running: RunningFloor, path: str, body: Any, role: str | None = "supervisor"
) -> httpx.Response:
    headers = running.headers(role) if role is not None else {}
    return httpx.post(f"{running.url}{path}", json=body, headers=headers)


def test_a_supervisor_accepts_a_gap_and_acknowledges_an_alert(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = make_journal(tmp_path / "t1.db", "table-1", shoe_events(seed=1, decks=1)[:12])
    config, tokens = floor_config(tmp_path, floor, monkeypatch, tables=("table-1",))
    gap = "/api/floor/tables/table-1/accept-gap"
    reason = {"from_seq": 4, "to_seq": 5, "reason": "rows lost with the old broker's disk"}
    with serve_floor(config, tokens) as running:
        publish_rows(floor, "table-1", rows[:3] + rows[5:8])  # rows 4 and 5 lost
        wait_for(lambda: running.table("table-1")["held"] == 3, "the rows after the gap")
        [alert] = running.table("table-1")["alerts"]
        assert running.table("table-1")["gap"] == {"from_seq": 4, "to_seq": 5}
        # Who may not: no token, a token of too low a role, a rig.
        assert post(running, gap, reason, role=None).status_code == 401
        for role in ("viewer", "dealer", "rig"):
            answer = post(running, gap, reason, role=role)
            assert answer.status_code == 403, role
            assert answer.json()["detail"] == "this action needs a token of a higher role"
        # What is not right says what to do.
        unknown = post(running, "/api/floor/tables/table-9/accept-gap", reason)
        assert unknown.status_code == 404 and "unknown table 'table-9'" in unknown.text
        wrong = post(running, gap, {**reason, "to_seq": 4})
        assert wrong.status_code == 409
        assert "no such gap: table table-1's gap is rows 4-5" in wrong.json()["detail"]
        blank = post(running, gap, {**reason, "reason": ""})
        assert blank.status_code == 422 and "reason" in blank.json()["detail"]
        text = httpx.post(
            f"{running.url}{gap}", content=b"reason", headers=running.headers("supervisor")
        )
        assert text.status_code == 415
        assert running.table("table-1")["archived_seq"] == 3  # none of that decided anything
        # The acknowledgement: who, when, why; the alert stays open, shown acknowledged.
        ack = post(running, f"/api/floor/alerts/{alert['id']}/acknowledge", {"reason": "on it"})
        assert ack.status_code == 200, ack.text
        [seen] = running.table("table-1")["alerts"]
        assert seen["acknowledged"]["by"] == "test-supervisor"
        assert seen["acknowledged"]["reason"] == "on it" and seen["resolved"] is None
        again = post(running, f"/api/floor/alerts/{alert['id']}/acknowledge", {"reason": "me"})
        assert again.status_code == 409 and "acknowledged by test-supervisor" in again.text
        missing = post(running, "/api/floor/alerts/999/acknowledge", {"reason": "x"})
        assert missing.status_code == 404
        # The gap accepted: the table goes on, the chain checked from row 6.
        accepted = post(running, gap, reason)
        assert accepted.status_code == 200, accepted.text
        decided = accepted.json()
        assert decided["archived"] == 3 and decided["archived_seq"] == 8
        assert decided["decision"]["by"] == "test-supervisor"
        assert decided["decision"]["role"] == "supervisor"
        seen = running.table("table-1")
        assert seen["archived_seq"] == 8 and seen["held"] == 0 and seen["alerts"] == []
        assert seen["gap"] is None and seen["broken_chain"] is None
        [line] = seen["accepted"]
        assert (line["from_seq"], line["to_seq"], line["by"]) == (4, 5, "test-supervisor")
        assert seen["problem"].startswith("rows 4-5 accepted as missing")
        publish_rows(floor, "table-1", rows[8:])
        wait_for(lambda: running.table("table-1")["archived_seq"] == len(rows), "the next rows")
    # A restart: the decisions, the acknowledgement and the accepted gap are all still there.
    with serve_floor(config, tokens) as running:
        answer = httpx.get(f"{running.url}/api/floor/decisions", headers=running.headers("viewer"))
        kinds = [(d["kind"], d["by"]) for d in answer.json()["decisions"]]
        assert kinds == [("accept_gap", "test-supervisor"), ("acknowledge", "test-supervisor")]
        seen = running.table("table-1")
        assert seen["archived_seq"] == len(rows) and len(seen["accepted"]) == 1
        alerts = httpx.get(f"{running.url}/api/floor/alerts", headers=running.headers("viewer"))
        [old] = alerts.json()["alerts"]
        assert old["acknowledged"]["reason"] == "on it"
        assert old["resolved_by"]["kind"] == "accept_gap"


def test_a_supervisor_accepts_a_new_chain(
    tmp_path: Path, floor: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = make_journal(tmp_path / "a.db", "table-1", shoe_events(seed=1, decks=1)[:6])
    other = make_journal(tmp_path / "b.db", "table-1", shoe_events(seed=2, decks=1)[:10])
    config, tokens = floor_config(tmp_path, floor, monkeypatch)
    chain = "/api/floor/tables/table-1/accept-chain"
    with serve_floor(config, tokens) as running:
        publish_rows(floor, "table-1", rows + other[len(rows) :])
        wait_for(lambda: running.table("table-1")["held"] == len(other) - len(rows), "held")
        n = len(rows)  # the other journal's row n + 1 does not link to row n
        assert running.table("table-1")["broken_chain"] == n + 1
        assert post(running, chain, {"seq": n + 1, "reason": "x"}, role="dealer").status_code == 403
        wrong = post(running, chain, {"seq": n + 2, "reason": "new PC"})
        assert wrong.status_code == 409 and f"accept row {n + 1}" in wrong.json()["detail"]
        bad = post(running, chain, {"seq": "seven", "reason": "new PC"})
        assert bad.status_code == 422 and "seq" in bad.json()["detail"]
        done = post(running, chain, {"seq": n + 1, "reason": "the PC was replaced"})
        assert done.status_code == 200, done.text
        assert done.json()["archived"] == len(other) - len(rows)
        seen = running.table("table-1")
        assert seen["archived_seq"] == len(other) and seen["alerts"] == []
        assert seen["accepted"][0]["kind"] == "accept_chain"
        schema = httpx.get(running.url + "/api/openapi.json").json()
        assert "/api/floor/tables/{table}/accept-chain" in schema["paths"]
