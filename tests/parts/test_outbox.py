"""The outbox on its own: the game server's body of an event, one entry per endpoint that
wants it, delivered ids deleted with the next commit (or a later one if it fails), and
what a run did not deliver sent again at the next start, an endpoint no longer configured
dropped."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from station.core.table import Table
from station.live.config import StationConfig, from_mapping
from station.live.journal import Journal
from station.live.outbox import Outbox
from station.shared.rows import GENESIS, Pending, Row


def config(tmp_path: Path, events: list[str]) -> StationConfig:
    secret = tmp_path / "secret"
    secret.write_text("s" * 64)
    return from_mapping(
        {
            "table": {"id": "t-9"},
            "journal": {"path": str(tmp_path / "journal.db")},
            "signals": {
                "webhook": [
                    {"url": "http://127.0.0.1:9/hook", "secret_file": str(secret), "events": events}
                ]
            },
        }
    )


def row(seq: int) -> Row:
    event = {"type": "card", "card": "5H"}
    return Row(
        seq,
        "2026-12-02T00:00:00.000000Z",
        "api",
        "dealer",
        "event",
        event,
        {"ok": True},
        GENESIS,
        GENESIS,
    )


def outbox(
    cfg: StationConfig, posted: list[Pending] | None = None, journal: Journal | None = None
) -> Outbox:
    table = Table(decks=1)
    return Outbox(cfg, lambda: table, lambda: journal, (posted or []).append)


def started(cfg: StationConfig) -> Journal:
    """The table's journal, begun: what names its events (its identity and epoch)."""
    journal = Journal(cfg.journal.path)
    journal.start("t-9", Table(decks=1))
    return journal


def test_a_body_names_the_table_the_row_and_the_paytable_of_a_result(tmp_path: Path) -> None:
    cfg = config(tmp_path, ["round_result"])
    with started(cfg) as journal:
        box = outbox(cfg, journal=journal)
        body = box.body("round_result", row(44), {"winner": "banker"})
        epoch = journal.epoch
    assert body["id"] == f"t-9:{epoch.journal}:{epoch.mark}:44:round_result"
    assert body["seq"] == 44 and (body["journal"], body["epoch"]) == (epoch.journal, epoch.mark)
    assert body["winner"] == "banker" and body["paytable"] == "traditional"
    assert body["event"] == {"type": "card", "card": "5H"}


def test_entries_only_for_events_an_endpoint_wants(tmp_path: Path) -> None:
    cfg = config(tmp_path, ["round_result"])
    with started(cfg) as journal:
        box = outbox(cfg, journal=journal)
        owed = box.entries([(0, "round_result", {}), (1, "shoe_started", {})], [row(5), row(6)])
        named = journal.epoch.event_id("t-9", 5, "round_result")
    assert [(seq, event_id) for _key, seq, event_id, _body in owed] == [(5, named)]
    assert orjson.loads(owed[0][3])["type"] == "round_result"


def test_delivered_ids_wait_for_a_commit_that_works(tmp_path: Path) -> None:
    box = outbox(config(tmp_path, ["round_result"]))
    box._settled("e1", "a")
    taken = box.take_delivered()
    assert taken == [("e1", "a")] and box.take_delivered() == []
    box._settled("e1", "b")
    box.keep_delivered(taken)  # that commit failed
    assert box.take_delivered() == [("e1", "a"), ("e1", "b")]


def test_owed_events_are_sent_again_and_those_of_a_gone_endpoint_dropped(tmp_path: Path) -> None:
    cfg = config(tmp_path, ["round_result"])
    box = outbox(cfg)
    (key,) = box.webhooks.keys
    with Journal(cfg.journal.path) as journal:
        journal.start("t-9", Table(decks=1))
        journal.owe(
            [
                (key, 1, "t-9:1:round_result", b'{"type": "round_result"}'),
                ("gone", 1, "t-9:1:round_result", b'{"type": "round_result"}'),
            ]
        )
        queued: list[Any] = []
        box.webhooks.queue = queued.extend  # type: ignore[method-assign]

        async def on_disk(fn: Callable[..., Any], *args: Any) -> Any:
            return fn(*args)

        asyncio.run(box.send_owed(journal, on_disk))
        assert [entry[0] for entry in queued] == [key]
        assert [entry[0] for entry in journal.owed()] == [key]  # the gone one settled
