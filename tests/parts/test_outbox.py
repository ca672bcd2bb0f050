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


def owed_entries(box: Outbox, journal: Journal, endpoints: list[str]) -> list[Any]:
    """A genuine event of the journal's first row, owed to each of `endpoints`."""
    first = next(journal.rows())
    body = box.body("round_result", first, {"round": None, "result": None})
    raw = orjson.dumps(body)
    return [(key, first.seq, body["id"], raw) for key in endpoints]


async def on_disk(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


def test_owed_events_are_sent_again_and_those_of_a_gone_endpoint_dropped(tmp_path: Path) -> None:
    cfg = config(tmp_path, ["round_result"])
    with Journal(cfg.journal.path) as journal:
        journal.start("t-9", Table(decks=1))
        box = outbox(cfg, journal=journal)
        (key,) = box.webhooks.keys
        journal.owe(owed_entries(box, journal, [key, "gone"]))
        queued: list[Any] = []
        box.webhooks.queue = queued.extend  # type: ignore[method-assign]
        asyncio.run(box.send_owed(journal, on_disk))
        assert [entry[0] for entry in queued] == [key]
        assert [entry[0] for entry in journal.owed()] == [key]  # the gone one settled


def test_entries_the_station_did_not_write_are_refused_journaled_and_alerted(
    tmp_path: Path,
) -> None:
    """Issue 32, attack 1 in the small: an entry written into the file under the id of a
    future row, or a genuine id with another body, is never queued."""
    cfg = config(tmp_path, ["round_result"])
    with Journal(cfg.journal.path) as journal:
        journal.start("t-9", Table(decks=1))
        alerts: list[tuple[str, str, dict[str, Any]]] = []
        table = Table(decks=1)
        box = Outbox(cfg, lambda: table, lambda: journal, [].append, lambda *a: alerts.append(a))
        (key,) = box.webhooks.keys
        (genuine,) = owed_entries(box, journal, [key])
        journal.owe([genuine])
        future = journal.epoch.event_id("t-9", 5, "round_result")
        forged_body = orjson.loads(genuine[3]) | {"id": future, "seq": 5, "result": "banker"}
        db = journal._db
        db.execute(
            "INSERT INTO outbox (endpoint, seq, id, body) VALUES (?, ?, ?, ?)",
            (key, 5, future, orjson.dumps(forged_body)),
        )
        other = orjson.loads(genuine[3]) | {"result": {"winner": "banker"}}
        db.execute("UPDATE outbox SET body = ? WHERE id = ?", (orjson.dumps(other), genuine[2]))
        queued: list[Any] = []
        box.webhooks.queue = queued.extend  # type: ignore[method-assign]
        asyncio.run(box.send_owed(journal, on_disk))
        assert queued == []
        assert journal.owed() == []  # refused: out of the outbox, never sent
        last = list(journal.rows())[-1]
        assert last.event["message"] == "webhook events refused" and last.event["count"] == 2
        assert [a[0] for a in alerts] == ["OUTBOX_FORGED"]
        assert alerts[0][2]["count"] == 2 and alerts[0][2]["first"] in (future, genuine[2])


def test_nothing_is_delivered_while_held(tmp_path: Path) -> None:
    """`hold`: the sender posts nothing (events stay owed) until every hold is released."""
    import http.server
    import threading

    got: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    secret = tmp_path / "secret"
    secret.write_text("s" * 64)
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    cfg = from_mapping(
        {
            "table": {"id": "t-9"},
            "journal": {"path": str(tmp_path / "journal.db")},
            "signals": {
                "webhook": [{"url": url, "secret_file": str(secret), "events": ["round_result"]}]
            },
        }
    )
    try:
        with Journal(cfg.journal.path) as journal:
            journal.start("t-9", Table(decks=1))
            box = outbox(cfg, journal=journal)
            (key,) = box.webhooks.keys
            entries = owed_entries(box, journal, [key])

            async def run() -> tuple[int, int]:
                box.hold("the floor's stream not compared yet")
                box.hold("start-up checks")
                box.start()
                box.queue(entries)
                await asyncio.sleep(0.3)
                held = len(got)
                box.release("start-up checks")
                await asyncio.sleep(0.3)
                still = len(got)
                box.release("the floor's stream not compared yet")
                for _ in range(100):
                    if got:
                        break
                    await asyncio.sleep(0.02)
                await box.webhooks.stop()
                return held, still

            held, still = asyncio.run(run())
        assert (held, still, len(got)) == (0, 0, 1)
    finally:
        server.shutdown()
        server.server_close()
