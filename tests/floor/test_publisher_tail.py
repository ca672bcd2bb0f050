"""Issue 32, the publisher's half, from real processes: a real nats-server, `station run`
with its signing key publishing to it, `station floor` knowing the table's public key.

Attack 6: while the station's rows wait (its broker login refused, as if the broker were
out of its reach), someone with the table's broker login who can read the journal file
publishes a junk "row N+1" whose prev_hash is the journal's last row. At its next start
the station does not believe it: the junk is foreign (journaled, alerted), and every row
of the station's goes out after it, so the floor's archive is the journal, row for row.

Attack 3 (the publisher's half): every local file of the station (its journal and its
head anchor) put back as they were a while ago, without `journal restore`: only the
floor's stream still holds what the station signed after. At start the publisher finds
the stream's last row signed by the station's key and missing from the journal: the
station journals a discontinuity notice (a new epoch: no id given twice), alerts, and the
new epoch's rows go to the stream after the old ones, the notice first."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from station.core.snapshot import take
from station.core.table import Table
from station.live.journal import Journal
from station.live.journal.epoch import DISCONTINUITY, discontinuity_notice, epoch_of
from station.live.journal.reading import read_rows
from station.live.publisher.link import PublisherLink
from station.live.publisher.publisher import DISCONTINUITY_CODE
from station.live.publisher.settings import FloorConfig
from station.live.publisher.tail import FOREIGN
from station.shared.messages import JournalMessage, journal_subject
from station.shared.rows import Pending
from station.shared.signing import SigningKey
from tests.floor.kit import (
    SITE,
    FloorBroker,
    ensure_stream,
    run_publisher,
    start_broker,
    station_floor,
    stored_rows,
    table_count,
    wait_for,
    wait_published,
)
from tests.floor.signedkit import events, floor_process, forged, signed_journal, wait_until
from tests.floor.test_forgery import as_the_table, deal, signed_station
from tests.service.stationkit import BURN, TABLE, running, station

pytestmark = [pytest.mark.floor, pytest.mark.server]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[FloorBroker]:
    found = start_broker(tmp_path / "broker", (TABLE,))
    try:
        ensure_stream(found)
        yield found
    finally:
        found.broker.stop()


async def publish_with_the_login(broker: FloorBroker, body: bytes) -> None:
    """What a holder of the table's broker login can do: publish at its subject."""
    nc = await as_the_table(broker)
    try:
        reply = await nc.request(journal_subject(SITE, TABLE), body, 2)
        assert "error" not in orjson.loads(reply.data), reply.data  # the stream took it
    finally:
        await nc.close()


def stream_messages(broker: FloorBroker) -> list[JournalMessage]:
    return [JournalMessage.decode(b) for b in asyncio.run(stored_rows(broker, TABLE))]


@pytest.mark.parametrize("made", ["junk", "copied"])
def test_a_junk_row_on_the_journals_last_row_is_not_believed_and_the_gap_fills(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch, made: str
) -> None:
    """`junk`: a row made up on the journal's last row; `copied`: the journal's last row
    itself (signed by the station: read from the journal file), which no publisher of the
    station sent."""
    config, tokens, public = signed_station(tmp_path, broker, monkeypatch)
    journal = tmp_path / "var" / "journal.db"
    with floor_process(tmp_path / "floor", broker, {TABLE: public}) as floor:
        monkeypatch.setenv("STATION_FLOOR_TOKEN", floor.tokens["viewer"])
        with running(config, tokens) as proc:
            proc.post({"type": "shoe"}, "dealer")
            for event in BURN:
                proc.post(event)
            deal(proc, range(1, 3))
            published = read_rows(journal, 0, 10_000)[-1].seq
            wait_until(
                lambda: floor.table(TABLE)["archived_seq"] == published, "rows archived", timeout=60
            )
        # The broker out of the station's reach (its login refused): rows wait.
        monkeypatch.setenv("FLOOR_PASSWORD", "not-the-password")
        with running(config, tokens) as proc:
            deal(proc, range(3, 5))
        rows = read_rows(journal, 0, 10_000)
        waiting = [r.seq for r in rows if r.seq > published]
        assert len(waiting) > 5 and floor.table(TABLE)["archived_seq"] == published
        # The insider: a junk "row N+1" on the journal's last row, with the table's login.
        junk = (
            forged(TABLE, rows[-1], message="all is well")
            if made == "junk"
            else JournalMessage.of(TABLE, rows[-1]).encode()
        )
        asyncio.run(publish_with_the_login(broker, junk))
        monkeypatch.setenv("FLOOR_PASSWORD", broker.user(TABLE).password)
        with running(config, tokens, log_level="info") as proc:
            deal(proc, range(5, 6))
            wait_until(
                lambda: floor.table(TABLE)["archived_seq"] == read_rows(journal, 0, 10_000)[-1].seq,
                "every row of the station's archived, the waiting ones too",
                timeout=60,
            )
            seen = floor.table(TABLE)
            rows = read_rows(journal, 0, 10_000)
            archived = floor.get(f"/api/floor/tables/{TABLE}/rows?after=0&limit=1000")["rows"]
            verified = station(
                "journal", "verify", "--config", str(config),
                "--public-key", public, "--against-floor", floor.url,
            )  # fmt: skip
    claimed = JournalMessage.decode(junk)
    # The floor's archive is the journal, row for row: no gap, no junk in it.
    assert [(r["seq"], r["hash"]) for r in archived] == [(r.seq, r.hash) for r in rows]
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert seen["signed"]
    # The stream holds every waiting row of the station's after the junk.
    messages = stream_messages(broker)
    at = [m.hash for m in messages].index(claimed.hash)
    assert set(waiting) <= {m.seq for m in messages[at + 1 :]}
    if made == "copied":  # a copy of a row of its own: not believed, nothing to alert
        assert "no publisher of this station sent it" in proc.log_text()
        return
    assert claimed.hash not in {r["hash"] for r in archived}
    assert seen["forged"] >= 1
    # The station said so: journaled (where it went on from: not the junk's word), alerted.
    [said] = [r.event for r in rows if r.event.get("message") == FOREIGN]
    assert said["claims_row"] == claimed.seq and said["after_row"] == 0
    assert any(a["code"] == "foreign" for a in seen["station_alerts"]), seen["station_alerts"]


def test_every_local_file_rolled_back_is_a_discontinuity_the_station_journals(
    tmp_path: Path, broker: FloorBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, tokens, public = signed_station(tmp_path, broker, monkeypatch)
    var = tmp_path / "var"
    journal = var / "journal.db"
    saved = tmp_path / "saved"
    with floor_process(tmp_path / "floor", broker, {TABLE: public}) as floor:
        with running(config, tokens) as proc:
            proc.post({"type": "shoe"}, "dealer")
            for event in BURN:
                proc.post(event)
            deal(proc, range(1, 2))
            kept = read_rows(journal, 0, 10_000)[-1].seq
            wait_until(
                lambda: floor.table(TABLE)["archived_seq"] == kept, "rows archived", timeout=60
            )
        shutil.copytree(var, saved)  # the insider's copy of every local file, then
        with running(config, tokens) as proc:
            deal(proc, range(2, 4))
            signed_last = read_rows(journal, 0, 10_000)[-1]
            wait_until(
                lambda: floor.table(TABLE)["archived_seq"] == signed_last.seq,
                "rows archived",
                timeout=60,
            )
        # A plain restart believed the stream's last row: its own, sent by its publisher.
        assert "not believed" not in proc.log_text() and "rows go again" not in proc.log_text()
        shutil.rmtree(var)
        shutil.copytree(saved, var)  # ... put back: the journal and its head anchor agree
        with running(config, tokens, log_level="info") as proc:
            wait_until(
                lambda: [
                    r
                    for r in read_rows(journal, 0, 10_000)
                    if r.event.get("message") == DISCONTINUITY
                ],
                "the discontinuity journaled",
                timeout=60,
            )
            deal(proc, range(2, 3))  # the station goes on, in the new epoch
            last = read_rows(journal, 0, 10_000)[-1].hash
            wait_until(
                lambda: stream_messages(broker)[-1].hash == last,
                "the new epoch's rows published",
                timeout=60,
            )
            seen = floor.table(TABLE)
            log = proc.log_text()
    rows = read_rows(journal, 0, 10_000)
    [notice] = [r for r in rows if r.event.get("message") == DISCONTINUITY]
    event = notice.event
    # It names what the stream holds against the journal, and begins epoch 2.
    assert event["epoch"] == 2 and event["where"] == "floor stream"
    assert event["stream_row"] == signed_last.seq and event["stream_hash"] == signed_last.hash
    assert event["journal_row_hash"] is None and event["journal_rows"] < signed_last.seq
    assert notice.signature is not None  # a signed row of the journal, like any other
    with contextlib.closing(sqlite3.connect(journal)) as db:
        epoch = epoch_of(db)
    assert epoch is not None and (epoch.number, epoch.since) == (2, notice.seq)
    assert epoch.mark == notice.hash[:8]  # every id the station hands out from now on
    # The stream: the old epoch's rows, then this journal's from where it left the old
    # one's chain (the notice among them), each signed; none of the old epoch's dropped.
    messages = stream_messages(broker)
    tail = messages[[m.hash for m in messages].index(signed_last.hash) + 1 :]
    assert [m.hash for m in tail] == [r.hash for r in rows[event["resume_after"] :]]
    assert notice.hash in {m.hash for m in tail} and all(m.signature for m in tail)
    assert any(a["code"] == DISCONTINUITY_CODE for a in seen["station_alerts"])
    assert DISCONTINUITY in log and "rolled back or cut" in log


# -- what the station is told once the stream was compared (PublisherLink's `checked`) --


def link_checks(
    floor: FloorBroker, journal: Journal, publish: bool = False
) -> list[tuple[bool, str]]:
    """Run the station's link (its publisher process) on `journal`, its notices journaled
    by this loop as the station's writer does, until `checked` was called (and, with
    `publish`, the stream holds every row of the journal); what it was told."""
    told: list[tuple[bool, str]] = []
    link = PublisherLink(
        station_floor(floor, "table-1"),
        "table-1",
        journal.path,
        lambda pending: journal.append([pending]),
        checked=lambda sound, what: told.append((sound, what)),
    )

    async def done() -> bool:
        if not told:
            return False
        return not publish or await table_count(floor, "table-1") >= journal.last_seq

    async def main() -> None:
        # The publisher process yields to everything else (SCHED_IDLE): patience on a
        # busy machine.
        link.start(lambda: (take(Table(decks=1), 0, "table-1", None), None))
        deadline = time.monotonic() + 60
        while not await done():
            assert time.monotonic() < deadline, f"checked told {told}"
            await asyncio.sleep(0.05)
        await link.stop(journal.last_seq)

    asyncio.run(main())
    return told


def test_the_link_says_once_the_stream_was_compared_and_what_it_found(
    floor: FloorBroker, tmp_path: Path
) -> None:
    key = SigningKey.generate()
    first = signed_journal(tmp_path / "a.db", "table-1", key, events(6))
    assert link_checks(floor, first) == [(True, "the stream holds no row of this table")]
    wait_published(floor, "table-1", first.last_seq)
    [(sound, what)] = link_checks(floor, first)
    assert sound and what == f"the stream holds this journal up to row {first.last_seq}"
    # A journal of the same key that lacks what the key signed: a discontinuity, told only
    # once its notice (a new epoch) is in the journal.
    shorter = signed_journal(tmp_path / "b.db", "table-1", key, events(3))
    [(sound, what)] = link_checks(floor, shorter)
    assert not sound and what.startswith(f"{DISCONTINUITY}: the stream holds row 7")
    [notice] = [r for r in read_rows(shorter.path) if r.event.get("message") == DISCONTINUITY]
    assert notice.event["epoch"] == 2 and notice.event["stream_row"] == first.last_seq
    first.close()
    shorter.close()


def test_without_a_floor_the_link_says_at_once_there_is_nothing_to_compare(
    tmp_path: Path,
) -> None:
    told: list[tuple[bool, str]] = []
    link = PublisherLink(
        FloorConfig(), "t-1", tmp_path / "j.db", lambda _: None, checked=lambda *a: told.append(a)
    )

    async def main() -> None:
        link.start(lambda: (take(Table(decks=1), 0, "t-1", None), None))
        await link.stop(0)

    asyncio.run(main())
    assert told == [(True, "no floor is configured")] and link.process is None


def test_a_discontinuity_the_station_journaled_at_start_is_published_as_its_epoch(
    floor: FloorBroker, tmp_path: Path
) -> None:
    """The station's own start-up found the journal cut (its head anchor says more) and
    journaled a discontinuity before the publisher looked: the stream's old rows after the
    cut are that epoch's predecessors, no second notice is asked for, and the new epoch
    goes on from the row before the notice (the floor has every row before it)."""
    key = SigningKey.generate()
    path = tmp_path / "var" / "journal.db"
    path.parent.mkdir()
    journal = signed_journal(path, "table-1", key, events(3))
    journal.close()
    saved = tmp_path / "saved"
    shutil.copytree(path.parent, saved)
    journal = signed_journal(path, "table-1", key, events(8)[3:])
    with run_publisher(floor, "table-1", journal.path):
        wait_published(floor, "table-1", journal.last_seq)
    old_last = journal.last_seq
    journal.close()
    shutil.rmtree(path.parent)
    shutil.copytree(saved, path.parent)  # cut back to its first rows
    journal = signed_journal(path, "table-1", key, [])
    cut = journal.last_seq
    journal.append([discontinuity_notice(2, where="head anchor", anchor_seq=old_last)])
    notices: list[Pending] = []
    with run_publisher(floor, "table-1", journal.path, notices):
        wait_for(
            lambda: stream_messages_of(floor)[-1].seq == journal.last_seq,
            timeout=30,
            what="the new epoch",
        )
    assert [p.event["message"] for p in notices] == []  # nothing more to journal
    messages = stream_messages_of(floor)
    assert [m.seq for m in messages] == [
        *range(1, old_last + 1),
        *range(cut + 1, journal.last_seq + 1),
    ]
    assert messages[old_last].prev_hash == messages[cut - 1].hash  # on the row before the cut
    journal.close()


def stream_messages_of(floor: FloorBroker) -> list[JournalMessage]:
    return [JournalMessage.decode(b) for b in asyncio.run(stored_rows(floor, "table-1"))]
