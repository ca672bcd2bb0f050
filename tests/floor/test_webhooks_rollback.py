"""Issue 32, attack 3, as the game server sees it: every local file put back (the journal
with its own head anchor, which the station's start-up checks then believe), the station
started again, a floor holding what the station signed since. The rows the station
commits at that start, before its publisher has compared the stream with the journal, are
at seqs the game server has had with other bodies: a suspension announced again at start
(`suspended` of the restart row) is the one every table in that state sends. Webhooks wait
for the comparison (`station.live.floorcheck`), so that event is withheld (journaled,
alerted), and the game server gets one body per id and the new epoch's events after.

Real processes: nats-server, `station floor` knowing the key, a signed `station run`, a
game server that checks every delivery's HMAC and keeps them all."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from station.live.floorcheck import WITHHELD
from station.live.journal.epoch import DISCONTINUITY
from station.live.journal.reading import read_rows
from tests.floor.kit import FloorBroker, ensure_stream, start_broker
from tests.floor.signedkit import floor_process, floor_section, wait_until
from tests.service.stationkit import BURN, TABLE, natural_round, running, station, write_config
from tests.service.test_insider_journal import Ledger, alerts, ledger, notices

pytestmark = [pytest.mark.floor, pytest.mark.server]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[FloorBroker]:
    found = start_broker(tmp_path / "broker", (TABLE,))
    try:
        ensure_stream(found)
        yield found
    finally:
        found.broker.stop()


def signed_station_with_hooks(
    tmp_path: Path, broker: FloorBroker, book: Ledger, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, dict[str, str], str]:
    (tmp_path / "hook.secret").write_text(book.secret.decode() + "\n")
    hook = f'[[signals.webhook]]\nurl = "{book.url}"\nsecret_file = "hook.secret"\n'
    config, tokens = write_config(
        tmp_path, 'signing_key = "station.pem"', floor_section(broker, TABLE) + hook
    )
    assert station("key", "init", "--config", str(config)).returncode == 0
    shown = station("key", "show", "--config", str(config))
    monkeypatch.setenv("FLOOR_PASSWORD", broker.user(TABLE).password)
    return config, tokens, shown.stdout.strip()


def announced(book: Ledger, kind: str) -> list[dict[str, object]]:
    return [b for b in book.bodies() if b["type"] == kind]


def test_a_rollback_only_the_floor_can_see_sends_no_id_twice(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = tmp_path / "var" / "journal.db"
    with ledger() as book:
        config, tokens, public = signed_station_with_hooks(tmp_path, broker, book, monkeypatch)
        with floor_process(tmp_path / "floor", broker, {TABLE: public}) as floor:
            with running(config, tokens) as proc:
                proc.post({"type": "shoe"}, "dealer")
                for event in BURN:
                    proc.post(event)
                for event in natural_round(1):
                    proc.post(event)
                proc.post({"type": "card", "card": "??"})  # suspended: unreadable card
                last = read_rows(journal, 0, 10_000)[-1].seq
                wait_until(lambda: floor.table(TABLE)["archived_seq"] == last, "archived", 60)
            shutil.copytree(tmp_path / "var", tmp_path / "saved")  # the insider's copy
            with running(config, tokens) as proc:
                # The restart row announces the suspension again: its id names that row.
                wait_until(lambda: len(announced(book, "suspended")) == 2, "announced", 30)
                last = read_rows(journal, 0, 10_000)[-1].seq
                wait_until(lambda: floor.table(TABLE)["archived_seq"] == last, "archived", 60)
            before = book.bodies()
            shutil.rmtree(tmp_path / "var")
            shutil.copytree(tmp_path / "saved", tmp_path / "var")  # ... put back, anchor too
            with running(config, tokens, log_level="info") as proc:
                wait_until(lambda: notices(proc, WITHHELD), "the events withheld", 60)
                proc.post({"type": "resume", "card": "7H"}, "supervisor")
                wait_until(lambda: announced(book, "resumed"), "the resume announced", 30)
                shown = alerts(proc)
                [discontinuity] = notices(proc, DISCONTINUITY)
                [withheld] = notices(proc, WITHHELD)
    book.check()  # one body per id, one result per round key
    # What reached the game server after the put-back: only the new epoch's events (the
    # suspension said again under the new epoch's ids, then the resume); the restart row's
    # suspension in the old epoch (an id it had, with another body) was withheld.
    after = book.bodies()[len(before) :]
    [begun] = [r for r in read_rows(journal, 0, 10_000) if r.seq == discontinuity["seq"]]
    new_epoch = begun.hash[:8]
    assert {b["epoch"] for b in after} == {new_epoch}
    assert "resumed" in [b["type"] for b in after]
    assert withheld["seq"] > discontinuity["seq"]
    codes = {a["code"] for a in shown}
    assert "WEBHOOKS_WITHHELD" in codes
    [words] = [a["message"] for a in shown if a["code"] == "WEBHOOKS_WITHHELD"]
    assert "1 webhook event(s)" in words and "NOT sent" in words
    [figures] = [a["params"] for a in shown if a["code"] == "WEBHOOKS_WITHHELD"]
    assert figures["count"] == 1 and figures["variant"] == "renewed"  # the dashboard's words
