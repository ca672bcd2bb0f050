"""uvicorn's server, except that a second Ctrl-C still stops the service cleanly.

uvicorn treats a second SIGINT during its shutdown as "force quit": it stops waiting for
open connections (a dashboard's WebSocket, a slow client) and also skips the app's
lifespan shutdown. `asyncio.run` then cancels the lifespan task where it stands, and the
operator gets a screenful of CancelledError traceback; the station's stop (the writer's
last batch, the outbox, the journal's close) never ran. Here the second Ctrl-C still
skips the waiting, but the station is stopped before the process exits (it takes a
fraction of a second); every committed row is on disk whichever way it ends.
"""

from __future__ import annotations

import logging
import signal
import socket
from types import FrameType

import uvicorn

log = logging.getLogger("station.serve")


class StationServer(uvicorn.Server):
    """`uvicorn.Server` whose forced exit still runs the app's lifespan shutdown, and which
    says whether a SIGINT stopped it (`interrupted`)."""

    #: A SIGINT asked the server to stop. uvicorn raises the signal again once stopped,
    #: which a process started with SIGINT ignored (`station run &` in a script) does not
    #: notice: `startup.serve` then says it, so the exit status is 130 either way.
    interrupted = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGINT:
            if self.should_exit and not self.force_exit:
                log.warning("Ctrl-C again: not waiting for open connections; stopping now")
            self.interrupted = True
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets)
        lifespan = self.lifespan
        done = getattr(lifespan, "shutdown_event", None)
        if self.force_exit and done is not None and not done.is_set():
            await lifespan.shutdown()
