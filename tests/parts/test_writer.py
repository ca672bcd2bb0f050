"""The writer on its own: a real journal on disk, no station, no server. It decides and
commits in order, hands each batch on once, refuses while the journal cannot be written,
and journals the outage once it can again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from station.core.table import Table
from station.live.errors import NotReady, Refused
from station.live.journal import Journal, OutboxEntry
from station.live.outbox import Signal
from station.live.writer import Commit, Queued, Writer
from station.shared.rows import Row, notice
from tests.diskkit import disk_full, failing_commits


class NoOutbox:
    """An outbox with no endpoints: nothing owed, nothing delivered."""

    def __init__(self) -> None:
        self.kept: list[tuple[str, str]] = []

    def entries(self, signals: list[Signal], rows: list[Row]) -> list[OutboxEntry]:
        return []

    def take_delivered(self) -> list[tuple[str, str]]:
        return [("endpoint", "id-1")]

    def keep_delivered(self, delivered: list[tuple[str, str]]) -> None:
        self.kept += delivered


class Heard:
    """What the writer's callbacks were told."""

    def __init__(self) -> None:
        self.commits: list[Commit] = []
        self.unwritable = 0
        self.status: list[str] = []
        self.refused: list[int] = []
        self.fatal: list[str] = []


def make_writer(tmp_path: Path, heard: Heard, outbox: NoOutbox | None = None) -> Writer:
    async def on_disk(fn: Callable[..., Any], *args: Any) -> Any:
        return fn(*args)

    return Writer(
        "t-1",
        lambda: Table(decks=1),
        on_disk,
        outbox or NoOutbox(),
        committed=heard.commits.append,
        unwritable=lambda: setattr(heard, "unwritable", heard.unwritable + 1),
        status=heard.status.append,
        refused=heard.refused.append,
        fatal=heard.fatal.append,
    )


def run(body: Callable[[Writer, Heard], Awaitable[None]], tmp_path: Path) -> Heard:
    heard = Heard()

    async def main() -> None:
        writer = make_writer(tmp_path, heard)
        assert await writer.open(tmp_path / "journal.db", heard.status.append) is None
        assert writer.journal is not None
        writer.journal.start("t-1", writer.table)
        writer.replayed(writer.journal.replay_into(writer.table).suspended_since)
        writer.start()
        try:
            await body(writer, heard)
        finally:
            await writer.stop()
            writer.journal.close()

    asyncio.run(main())
    return heard


def test_events_are_decided_committed_and_handed_on_in_order(tmp_path: Path) -> None:
    async def body(writer: Writer, heard: Heard) -> None:
        shoe = await writer.submit({"type": "shoe"}, "api", "dealer")
        card = await writer.submit({"type": "card", "card": "5H"}, "api", "dealer")
        assert card.seq == shoe.seq + 1
        assert card.verdict is not None and card.verdict["role"] == "burn_reveal"
        assert writer.snapshot.seq == card.seq

    heard = run(body, tmp_path)
    rows = [row for commit in heard.commits for row in commit.rows]
    assert [r.event["type"] for r in rows] == ["shoe", "card"]
    assert heard.commits[-1].snapshot.seq == rows[-1].seq
    assert heard.fatal == [] and heard.unwritable == 0


def test_a_burst_is_one_commit(tmp_path: Path) -> None:
    async def body(writer: Writer, heard: Heard) -> None:
        for _ in range(20):
            writer.put(Queued(notice("station", "test", "burst")))
        await writer.journal_notice(notice("station", "test", "last"))

    heard = run(body, tmp_path)
    sizes = [len(c.rows) for c in heard.commits]
    assert sum(sizes) == 21 and max(sizes) > 1, sizes


def test_an_event_that_cannot_be_stored_is_refused_and_a_notice_takes_its_place(
    tmp_path: Path,
) -> None:
    async def body(writer: Writer, heard: Heard) -> None:
        with pytest.raises(Refused, match="plain JSON values"):
            await writer.submit({"type": "shoe", "n": 2**70}, "api", "dealer")
        assert writer.table.shoes_started == 0

    heard = run(body, tmp_path)
    (row,) = heard.commits[-1].rows
    assert row.kind == "notice" and "refused" in row.event["message"]


def test_while_the_journal_cannot_be_written_events_are_refused_then_the_outage_is_journaled(
    tmp_path: Path,
) -> None:
    async def body(writer: Writer, heard: Heard) -> None:
        await writer.submit({"type": "shoe"}, "api", "dealer")
        with failing_commits(writer.journal, disk_full()):
            with pytest.raises(NotReady, match="full"):
                await writer.submit({"type": "card", "card": "5H"}, "api", "dealer")
            assert writer.journal_status()["writable"] is False
            with pytest.raises(NotReady):
                await writer.submit({"type": "card", "card": "5H"}, "api", "dealer")
        for _ in range(200):  # the writer tries again with backoff
            if writer.unavailable is None:
                break
            await asyncio.sleep(0.05)
        assert writer.unavailable is None and writer.journal_status() == {"writable": True}

    heard = run(body, tmp_path)
    assert heard.unwritable == 1  # said once, not per refusal
    assert any("NOT READY" in s for s in heard.status)
    assert any("written again" in s for s in heard.status)
    last = heard.commits[-1].rows
    assert [r.event.get("message") or r.event["type"] for r in last] == [
        "the journal could not be written",
        "fault",
    ]
    assert last[0].event["refused"] == {"api": 2}
    assert last[1].verdict is not None and last[1].verdict["ok"] is False


def test_a_failed_commit_keeps_the_delivered_events_for_a_later_one(tmp_path: Path) -> None:
    outbox = NoOutbox()
    heard = Heard()

    async def main() -> None:
        writer = make_writer(tmp_path, heard, outbox)
        await writer.open(tmp_path / "journal.db", heard.status.append)
        assert writer.journal is not None
        writer.journal.start("t-1", writer.table)
        writer.start()
        with failing_commits(writer.journal, disk_full()), pytest.raises(NotReady):
            await writer.submit({"type": "shoe"}, "api", "dealer")
        await writer.stop()
        writer.journal.close()

    asyncio.run(main())
    assert outbox.kept[:1] == [("endpoint", "id-1")]


def test_a_bug_stops_the_writer_and_every_waiter_hears_it(tmp_path: Path) -> None:
    async def body(writer: Writer, heard: Heard) -> None:
        assert writer.journal is not None

        def broken(*args: Any, **kwargs: Any) -> list[Row]:
            raise RuntimeError("a bug")

        writer.journal.append = broken  # type: ignore[method-assign]
        with pytest.raises(NotReady, match="the writer failed: a bug"):
            await writer.submit({"type": "shoe"}, "api", "dealer")
        with pytest.raises(NotReady, match="a bug"):
            await writer.submit({"type": "shoe"}, "api", "dealer")

    heard = run(body, tmp_path)
    assert heard.fatal == ["the writer failed: a bug"]


def test_a_journal_that_cannot_be_opened_is_waited_for(tmp_path: Path) -> None:
    heard = Heard()
    folder = tmp_path / "ro"
    folder.mkdir()

    async def main() -> None:
        writer = make_writer(tmp_path, heard)
        real = Journal
        tries = []

        def opener(path: Path) -> Journal:
            tries.append(path)
            if len(tries) < 3:
                from station.live.journal import JournalUnopenable

                raise JournalUnopenable(f"{path}: the disk is full")
            return real(path)

        async def on_disk(fn: Callable[..., Any], *args: Any) -> Any:
            return (opener if fn is real else fn)(*args)

        writer._on_disk = on_disk
        waited = await writer.open(folder / "journal.db", heard.status.append)
        assert waited is not None and "full" in waited.reason
        assert len(tries) == 3 and writer.unavailable is None
        assert writer.journal is not None
        writer.journal.close()

    asyncio.run(main())
    assert heard.status == [f"table t-1: NOT READY: {folder / 'journal.db'}: the disk is full"]
