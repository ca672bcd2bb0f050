"""The station's end of its floor publisher: started when `[floor] url` is set, woken
after each committed batch, stopped with the last row.

The publisher is a process of its own (`process`): it reads the committed journal itself,
so the station's only work per commit is one byte down a pipe. A wake lost costs only
delay: the publisher looks at the journal every few seconds anyway. A notice it journals
(the broker refused a row, a foreign row at its subject) goes through the writer like
every row.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from station.core.snapshot import TableSnapshot
from station.live.publisher.settings import FloorConfig, KeyFile
from station.shared.rows import Pending

if TYPE_CHECKING:  # imported when a floor is configured (nats costs start-up time)
    from station.live.publisher.process import PublisherProcess


class PublisherLink:
    """The floor publisher of one station, or nothing when it has no floor."""

    def __init__(
        self,
        config: FloorConfig,
        table_id: str,
        journal_path: Path,
        post: Callable[[Pending], None],
        key: KeyFile | None = None,
        checked: Callable[[bool, str], None] | None = None,
    ) -> None:
        """`post`: queue a notice row for the writer (called on the loop). `key`: where
        the station's signing key is (the publisher reads it to sign its heartbeats and
        alerts); None: unsigned. `checked(sound, what)`: called on the loop once per
        start of the publisher, when it first compared the floor's stream with the
        journal: sound, or what it found (a discontinuity: its notice, which begins a new
        epoch, is in the journal's writer's queue by then; a refusal). With no floor it is
        called at `start` (nothing to compare); while the broker cannot be reached, not
        at all."""
        self.config = config
        self.table_id = table_id
        self.journal_path = journal_path
        self.key = key
        self._post = post
        self._checked = checked
        self.process: PublisherProcess | None = None

    def start(self, table: Callable[[], tuple[TableSnapshot, str | None]]) -> None:
        """Start the process ([floor] url set; nothing otherwise). `table`: the latest
        snapshot and why the journal cannot be written, if it cannot (the heartbeat's)."""
        if not self.config.enabled:
            if self._checked is not None:
                self._checked(True, "no floor is configured")
            return
        from station.live.publisher.process import PublisherProcess
        from station.live.publisher.state import TableState

        loop = asyncio.get_running_loop()

        def journal_notice(pending: Pending) -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: stopping
                loop.call_soon_threadsafe(self._post, pending)

        def checked(sound: bool, what: str) -> None:
            if self._checked is not None:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(self._checked, sound, what)

        self.process = PublisherProcess(
            self.config,
            self.table_id,
            self.journal_path,
            state=lambda: TableState.of(*table()),
            journal_notice=journal_notice,
            key=self.key,
            checked=checked,
        )
        self.process.start()

    def committed(self) -> None:
        """Wake the publisher: a batch of rows is committed (and in the listeners' queues)."""
        if self.process is not None:
            self.process.committed()

    async def stop(self, last_seq: int) -> None:
        """Stop it, the rows up to `last_seq` published first if the broker takes them now."""
        if self.process is not None:
            await asyncio.to_thread(self.process.stop, last_seq)
