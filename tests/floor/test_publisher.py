"""The floor publisher against a real nats-server: every journal row in the stream exactly
once, in order, with the journal's hashes, whatever happens to the broker (SIGKILL and
restart, SIGSTOP for 3 s, its last rows lost), and a second journal claiming the table
refused."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from station.live.publisher.publisher import REFUSED
from station.live.publisher.stream import subject_matches
from station.shared.messages import STREAM, journal_subject, stream_config
from station.shared.rows import Pending
from tests.floor.kit import (
    SITE,
    FloorBroker,
    Writer,
    admin,
    append_rows,
    assert_exactly_once,
    create_stream,
    new_journal,
    run_publisher,
    table_count,
    wait_for,
    wait_published,
)

pytestmark = pytest.mark.floor


def test_every_row_once_in_order(floor: FloorBroker, tmp_path: Path) -> None:
    journal = new_journal(tmp_path / "journal.db", "table-1")
    append_rows(journal, 40)  # rows waiting before the publisher starts
    with run_publisher(floor, "table-1", journal.path) as running:
        with Writer(journal, running.publisher, 60):
            pass
        wait_published(floor, "table-1", journal.last_seq)
        assert running.publisher.status.state == "publishing"
    messages = assert_exactly_once(floor, "table-1", journal.path)
    assert {m.kind for m in messages} == {"notice", "event"}


def test_a_restarted_publisher_resumes_after_the_streams_last_row(
    floor: FloorBroker, tmp_path: Path
) -> None:
    journal = new_journal(tmp_path / "journal.db", "table-1")
    append_rows(journal, 10)
    with run_publisher(floor, "table-1", journal.path):
        wait_published(floor, "table-1", journal.last_seq)
    append_rows(journal, 10, start=10)
    with run_publisher(floor, "table-1", journal.path) as running:
        wait_published(floor, "table-1", journal.last_seq)
        # Only the new rows (at most: an acknowledgement late under load leaves a batch
        # the broker stored uncounted, found again by the next look at the stream).
        assert running.publisher.sent <= 10
    assert_exactly_once(floor, "table-1", journal.path)  # none of the old rows again


def test_broker_killed_and_restarted_mid_stream(floor: FloorBroker, tmp_path: Path) -> None:
    journal = new_journal(tmp_path / "journal.db", "table-1")
    with run_publisher(floor, "table-1", journal.path) as running:
        with Writer(journal, running.publisher, 400, interval=0.002) as writer:
            wait_for(lambda: running.publisher.published > 100, what="rows published")
            floor.broker.kill()  # SIGKILL mid-stream
            wait_for(lambda: writer.written > 250, what="rows written meanwhile")
            assert running.publisher.status.state == "connecting"
            floor.broker.start()
        wait_published(floor, "table-1", journal.last_seq)
    assert_exactly_once(floor, "table-1", journal.path)


@pytest.mark.slow
def test_broker_frozen_for_three_seconds(floor: FloorBroker, tmp_path: Path) -> None:
    journal = new_journal(tmp_path / "journal.db", "table-1")
    with run_publisher(floor, "table-1", journal.path) as running:
        with Writer(journal, running.publisher, 300, interval=0.005):
            wait_for(lambda: running.publisher.published > 50, what="rows published")
            floor.broker.freeze()  # SIGSTOP: the socket stays open, nothing answers
            wait_for(lambda: running.publisher.status.state == "connecting", what="a timeout")
            time.sleep(3.0)
            floor.broker.thaw()
        wait_published(floor, "table-1", journal.last_seq)
    assert_exactly_once(floor, "table-1", journal.path)


def test_two_publishers_on_one_journal_still_send_each_row_once(
    floor: FloorBroker, tmp_path: Path
) -> None:
    """A station restarted while its old process still publishes: the expected last
    sequence lets only one of them store each row."""
    journal = new_journal(tmp_path / "journal.db", "table-1")
    with (
        run_publisher(floor, "table-1", journal.path) as one,
        run_publisher(floor, "table-1", journal.path) as two,
    ):
        with Writer(journal, one.publisher, 200, interval=0.001):
            pass
        two.publisher.committed()
        wait_published(floor, "table-1", journal.last_seq)
        wait_for(lambda: min(one.publisher.published, two.publisher.published) == journal.last_seq)
    assert_exactly_once(floor, "table-1", journal.path)


async def _delete_last(floor: FloorBroker, table: str, count: int) -> None:
    subject = journal_subject(SITE, table)
    async with admin(floor) as nc:
        jsm = nc.jetstream()
        for _ in range(count):
            last = await jsm.get_last_msg(STREAM, subject)
            assert last.seq is not None
            await jsm.delete_msg(STREAM, last.seq)


def test_rows_the_broker_lost_are_sent_again(floor: FloorBroker, tmp_path: Path) -> None:
    journal = new_journal(tmp_path / "journal.db", "table-1")
    append_rows(journal, 30)
    with run_publisher(floor, "table-1", journal.path) as running:
        wait_published(floor, "table-1", journal.last_seq)
        asyncio.run(_delete_last(floor, "table-1", 7))  # the broker's last rows lost
        assert asyncio.run(table_count(floor, "table-1")) == journal.last_seq - 7
        append_rows(journal, 1, start=30)
        running.publisher.committed()
        wait_published(floor, "table-1", journal.last_seq)
    assert_exactly_once(floor, "table-1", journal.path)


def test_a_second_journal_for_the_same_table_is_refused(
    floor: FloorBroker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = new_journal(tmp_path / "a.db", "table-1")
    append_rows(first, 5)
    with run_publisher(floor, "table-1", first.path):
        wait_published(floor, "table-1", first.last_seq)
    second = new_journal(tmp_path / "b.db", "table-1")  # another station, same table id
    append_rows(second, 8)
    notices: list[Pending] = []
    with run_publisher(floor, "table-1", second.path, notices) as running:
        wait_for(lambda: running.publisher.status.state == "refused", what="a refusal")
        assert "another station publishes as this table" in running.publisher.status.detail
    assert [p.event["message"] for p in notices] == [REFUSED]
    assert any(REFUSED in r.getMessage() for r in caplog.records if r.levelname == "ERROR")
    assert_exactly_once(floor, "table-1", first.path)  # the first station's rows, untouched


async def _batch_headers(floor: FloorBroker, table: str) -> list[str | None]:
    async with admin(floor) as nc:
        jsm = nc.jetstream()
        info = await jsm.stream_info(STREAM)
        out = []
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            msg = await jsm.get_msg(STREAM, seq)
            out.append((msg.headers or {}).get("Nats-Batch-Id"))
        return out


def test_a_backlog_goes_in_atomic_batches(floor: FloorBroker, tmp_path: Path) -> None:
    journal = new_journal(tmp_path / "journal.db", "table-1")
    append_rows(journal, 249)  # 250 rows waiting: batches of 100, 100 and 50
    with run_publisher(floor, "table-1", journal.path):
        wait_published(floor, "table-1", journal.last_seq)
    assert_exactly_once(floor, "table-1", journal.path)
    batches = asyncio.run(_batch_headers(floor, "table-1"))
    assert None not in batches
    assert sorted(batches.count(b) for b in set(batches)) == [50, 100, 100]


async def _without_batches(floor: FloorBroker) -> None:
    async with admin(floor) as nc:
        jsm = nc.jetstream()
        await jsm.delete_stream(STREAM)
        config = stream_config()
        config.allow_atomic = False
        await jsm.add_stream(config)


def test_a_stream_without_batches_gets_rows_one_by_one(
    floor: FloorBroker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    asyncio.run(_without_batches(floor))
    journal = new_journal(tmp_path / "journal.db", "table-1")
    append_rows(journal, 30)
    with run_publisher(floor, "table-1", journal.path):
        wait_published(floor, "table-1", journal.last_seq)
    assert_exactly_once(floor, "table-1", journal.path)
    assert any("rows go one by one" in r.getMessage() for r in caplog.records)


async def _delete_stream(floor: FloorBroker) -> None:
    async with admin(floor) as nc:
        await nc.jetstream().delete_stream(STREAM)


def test_no_stream_yet_rows_wait_then_go(
    floor: FloorBroker, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    asyncio.run(_delete_stream(floor))
    journal = new_journal(tmp_path / "journal.db", "table-1")
    append_rows(journal, 5)
    with run_publisher(floor, "table-1", journal.path) as running:
        wait_for(lambda: "has no stream 'FLOOR'" in running.publisher.status.detail)
        assert running.publisher.status.state == "connecting"
        errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
        assert len(errors) == 1 and "start the floor service" in errors[0]
        asyncio.run(create_stream(floor))  # the floor service starts
        wait_published(floor, "table-1", journal.last_seq)
    assert_exactly_once(floor, "table-1", journal.path)


def test_subject_matching() -> None:
    assert subject_matches("floor.*.*.journal", "floor.s.t.journal")
    assert not subject_matches("floor.*.*.journal", "floor.s.t.heartbeat")
    assert subject_matches("floor.>", "floor.s.t.journal")
    assert not subject_matches("floor.>", "floor")
    assert not subject_matches("floor.*", "floor.s.t")
