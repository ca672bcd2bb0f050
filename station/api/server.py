"""The uvicorn options of both services' servers: the connection budget (their HTTP
protocol, `station.api.connections`), the station's WebSocket protocol, and which reverse
proxies it believes.

`WS /api/live` sends every committed batch to every client. Through ASGI each message
costs each client an encode, a frame and a write (about 50 us; 100 with per-message
deflate): 200 dashboards took 20-40 ms a batch, and the last client waited for all. So
the protocol is uvicorn's own (`websockets-sansio`) plus one ASGI extension,
`station.frames`: `write(data)` writes WebSocket frames already built (by the fan-out,
once for every client) in one transport write, honouring the transport's flow control
like an ASGI send; `write_now(data)` writes only if that needs no wait; `drained()`
waits until the transport takes more (its buffer under the high-water mark); `gone()`
waits until the connection is closed (the client answered the close frame); `abort()`
drops a connection whose client stopped reading, with a reset (`SO_LINGER` 0), so that
neither the process nor the kernel keeps what it would not read. Per-message deflate is
off, so frames are the same for every client. An app served without the extension
(another server) falls back to ASGI sends.

Behind a reverse proxy every request comes from the proxy's address, so the wrong-token
throttle would throttle every client at once. uvicorn's own proxy-headers middleware
takes the client from `X-Forwarded-For` (and the scheme from `X-Forwarded-Proto`), but
only on connections from `[api] trusted_proxies`: from anywhere else the headers are a
client's word and ignored. None trusted (the default) turns the middleware off, whatever
uvicorn's own default or `FORWARDED_ALLOW_IPS` says.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import Sequence
from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from station.api.connections import Budget, http_protocol
from station.shared.serving import ACCEPT_BURST, Serving

FRAMES = "station.frames"
#: SO_LINGER on, 0 seconds: closing the socket resets the connection and discards what
#: the kernel still holds for it (no FIN-WAIT with a full send queue).
RESET = struct.pack("ii", 1, 0)


class StationWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol, offering `scope["extensions"]["station.frames"]`."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.lost = asyncio.Event()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.lost.set()

    async def run_asgi(self) -> None:
        if not self.config.ws_per_message_deflate:  # else each client's frames differ
            self.scope["extensions"][FRAMES] = {
                "write": self.write_frames,
                "write_now": self.write_frames_now,
                "drained": self.writable.wait,
                "gone": self.lost.wait,
                "abort": self.abort,
            }
        await super().run_asgi()

    async def write_frames(self, data: bytes) -> None:
        """Write whole frames; waits while the transport's buffer is full (a client not
        reading), as an ASGI send does. Raises `ClientDisconnected` once it is gone."""
        await self.writable.wait()
        if self.disconnected or self.close_sent or self.transport.is_closing():
            raise ClientDisconnected()
        self.transport.write(data)

    def write_frames_now(self, data: bytes) -> bool:
        """Write whole frames if that needs no wait (the transport is not full); False if
        not written (then use `write_frames`)."""
        if not self.writable.is_set() or self.disconnected or self.close_sent:
            return False
        if self.transport.is_closing():
            return False
        self.transport.write(data)
        return True

    def abort(self) -> None:
        """Drop the connection now with a reset, discarding what its buffers hold (a
        client that stopped reading would keep them, in the kernel too: a plain close
        leaves the socket in FIN-WAIT-1 with its send queue for minutes)."""
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):  # closed already
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, RESET)
        self.transport.abort()


def uvicorn_options(api: Serving, trusted_proxies: Sequence[str] = ()) -> dict[str, Any]:
    """What `uvicorn.Config` needs: the connection budget of `api`'s keys (fitted to the
    open-files limit now, see `station.api.connections`), the WebSocket protocol of
    `WS /api/live`, and `X-Forwarded-For` believed from `trusted_proxies` only
    (addresses or networks, checked by the config; see the module's docstring)."""
    budget = Budget.of(api)
    return {
        "http": http_protocol(budget),
        "loop": "asyncio",
        "backlog": ACCEPT_BURST,
        "timeout_keep_alive": budget.idle_timeout,
        "ws": StationWebSocketProtocol,
        "ws_per_message_deflate": False,
        "proxy_headers": bool(trusted_proxies),
        "forwarded_allow_ips": list(trusted_proxies),
    }
