"""The publisher and a message at its subject that it did not sign (a real broker): a
signed station publishes its own rows after it, journals it and says where it went on
from, at start too (when the foreign message hides its last row); an unsigned station,
which cannot tell a forgery from another station, refuses as before."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from station.live.publisher.publisher import REFUSED
from station.live.publisher.tail import FOREIGN
from station.shared.messages import BadMessage, JournalMessage, journal_subject
from station.shared.rows import Pending
from station.shared.signing import SigningKey
from tests.floor.kit import (
    SITE,
    FloorBroker,
    admin,
    run_publisher,
    stored_rows,
    wait_for,
    wait_published,
)
from tests.floor.signedkit import events, forged, signed_journal


def publish_raw(floor: FloorBroker, table: str, body: bytes) -> None:
    async def go() -> None:
        async with admin(floor) as nc:
            await nc.jetstream().publish(journal_subject(SITE, table), body)

    asyncio.run(go())


def stream(floor: FloorBroker, table: str) -> list[bytes]:
    return asyncio.run(stored_rows(floor, table))


def ours(floor: FloorBroker, table: str) -> list[int]:
    """The journal seqs of the station's own rows the stream holds, in stream order."""
    found = []
    for body in stream(floor, table):
        with contextlib.suppress(BadMessage):  # a forger's message need not be a row
            message = JournalMessage.decode(body)
            if message.signature is not None:
                found.append(message.seq)
    return found


def test_a_foreign_row_met_at_start_is_passed_said_and_not_believed(
    floor: FloorBroker, tmp_path: Path
) -> None:
    """Issue 32, attack 6: rows 7-9 wait (no publisher: the broker out of the station's
    reach) and a junk "row 10" whose prev_hash is the journal's last row is published with
    the table's login. Its word is not taken: the station's rows 7-9 reach the stream
    (after the rows it held already, sent again), none skipped."""
    key = SigningKey.generate()
    journal = signed_journal(tmp_path / "j.db", "table-1", key, events(6))
    with run_publisher(floor, "table-1", journal.path):
        wait_published(floor, "table-1", journal.last_seq)
    published = journal.last_seq
    journal.close()
    journal = signed_journal(tmp_path / "j.db", "table-1", key, events(9)[6:])  # rows wait
    last = next(journal.rows(after=journal.last_seq - 1))
    publish_raw(floor, "table-1", forged("table-1", last))  # "row N+1" on the journal's last
    notices: list[Pending] = []
    with run_publisher(floor, "table-1", journal.path, notices) as running:
        wait_for(lambda: ours(floor, "table-1")[-1:] == [journal.last_seq], what="our rows")
        assert running.publisher.status.state == "publishing"
    # Every row after the junk, the waiting ones too; the ones held already are duplicates.
    assert ours(floor, "table-1") == [
        *range(1, published + 1),
        *range(1, journal.last_seq + 1),
    ]
    [said] = [p.event for p in notices if p.event["message"] == FOREIGN]
    assert said["after_row"] == 0 and said["claims_row"] == last.seq + 1
    journal.close()


def test_an_unreadable_foreign_message_makes_the_station_send_its_rows_again(
    floor: FloorBroker, tmp_path: Path
) -> None:
    """Its last row hidden and nothing to go by: everything again (the floor takes the
    rows it has as duplicates), never a row skipped."""
    key = SigningKey.generate()
    journal = signed_journal(tmp_path / "j.db", "table-1", key, events(4))
    with run_publisher(floor, "table-1", journal.path):
        wait_published(floor, "table-1", journal.last_seq)
    publish_raw(floor, "table-1", b"not a row")
    notices: list[Pending] = []
    with run_publisher(floor, "table-1", journal.path, notices):
        wait_for(lambda: len(ours(floor, "table-1")) == 2 * journal.last_seq, what="again")
    assert ours(floor, "table-1") == 2 * list(range(1, journal.last_seq + 1))
    [said] = [p.event for p in notices if p.event["message"] == FOREIGN]
    assert said["after_row"] == 0 and said["claims_row"] is None
    journal.close()


def test_an_unsigned_station_refuses_as_before(floor: FloorBroker, tmp_path: Path) -> None:
    journal = signed_journal(tmp_path / "j.db", "table-1", None, events(4))
    with run_publisher(floor, "table-1", journal.path):
        wait_published(floor, "table-1", journal.last_seq)
    last = next(journal.rows(after=journal.last_seq - 1))
    publish_raw(floor, "table-1", forged("table-1", last))
    notices: list[Pending] = []
    with run_publisher(floor, "table-1", journal.path, notices) as running:
        wait_for(lambda: running.publisher.status.state == "refused", what="a refusal")
    assert [p.event["message"] for p in notices] == [REFUSED]
    assert JournalMessage.decode(stream(floor, "table-1")[-1]).seq == last.seq + 1  # none after
    journal.close()
