"""The uvicorn options of the station's server: its WebSocket protocol, and which
reverse proxies it believes.

`WS /api/live` sends every committed batch to every client. Through ASGI each message
costs each client an encode, a frame and a write (about 50 us; 100 with per-message
deflate): 200 dashboards took 20-40 ms a batch, and the last client waited for all. So
the protocol is uvicorn's own (`websockets-sansio`) plus one ASGI extension,
`station.frames`: `write(data)` writes WebSocket frames already built (by the fan-out,
once for every client) in one transport write, honouring the transport's flow control
like an ASGI send; `write_now(data)` writes only if that needs no wait; `abort()` drops
a connection whose client stopped reading. Per-message deflate is off, so frames are the
same for every client. An app served without the extension (another server) falls back
to ASGI sends.

Behind a reverse proxy every request comes from the proxy's address, so the wrong-token
throttle would throttle every client at once. uvicorn's own proxy-headers middleware
takes the client from `X-Forwarded-For` (and the scheme from `X-Forwarded-Proto`), but
only on connections from `[api] trusted_proxies`: from anywhere else the headers are a
client's word and ignored. None trusted (the default) turns the middleware off, whatever
uvicorn's own default or `FORWARDED_ALLOW_IPS` says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

FRAMES = "station.frames"


class StationWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol, offering `scope["extensions"]["station.frames"]`."""

    async def run_asgi(self) -> None:
        if not self.config.ws_per_message_deflate:  # else each client's frames differ
            self.scope["extensions"][FRAMES] = {
                "write": self.write_frames,
                "write_now": self.write_frames_now,
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
        """Drop the connection now, with what its buffers hold (a client that stopped
        reading would keep them, in the kernel too, as long as it stays connected)."""
        self.transport.abort()


def uvicorn_options(trusted_proxies: Sequence[str] = ()) -> dict[str, Any]:
    """What `uvicorn.Config` needs for `WS /api/live`, believing `X-Forwarded-For` from
    `trusted_proxies` only (addresses or networks, checked by the config; see the
    module's docstring)."""
    return {
        "ws": StationWebSocketProtocol,
        "ws_per_message_deflate": False,
        "proxy_headers": bool(trusted_proxies),
        "forwarded_allow_ips": list(trusted_proxies),
    }
