"""The station's link to its floor publisher on its own: no floor configured means no
process at all (nothing to wake, nothing to stop)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from station.core.snapshot import take
from station.core.table import Table
from station.live.publisher.link import PublisherLink
from station.live.publisher.settings import FloorConfig
from station.shared.rows import Pending


def test_without_a_floor_there_is_no_publisher(tmp_path: Path) -> None:
    posted: list[Pending] = []
    link = PublisherLink(FloorConfig(), "t-1", tmp_path / "journal.db", posted.append)

    async def main() -> None:
        link.start(lambda: (take(Table(decks=1), 0, "t-1", None), None))
        link.committed()
        await link.stop(0)

    asyncio.run(main())
    assert link.process is None and posted == []
