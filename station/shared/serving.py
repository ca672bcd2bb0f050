"""The `[api]` keys both services have about the clients they serve: how many connections
they hold at once, how long a connection may be slow or silent, and which names they
answer to with `public_read` on.

Why shared: the station and the floor service run the same server (uvicorn, with the
budget of `station.api.connections`), so they are bounded by the same keys with the same
meaning; each program's `[api]` model declares them with these fields (after its own
keys, in the file's order), and `Serving` is what the server reads of them.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Protocol

from pydantic import Field

from station.shared.sections import bounds

#: File descriptors a service keeps for itself below its open-files limit, beside its
#: connections. The event loop accepts at most `ACCEPT_BURST` connections in one pass (the
#: listen backlog), and one it refuses lives four passes (accepted, given its protocol,
#: answered 503, closed): so up to four bursts are open over the cap during a flood. And
#: its own files: the journal or archive and their readers, the index, pipes, the port.
ACCEPT_BURST = 64
OWN_FILES = 128
RESERVED_FILES = 4 * ACCEPT_BURST + OWN_FILES


class Serving(Protocol):
    """The keys of `[api]` that bound what clients may hold of a service (both services'
    `[api]` models have them, each declared with the fields below)."""

    @property
    def max_connections(self) -> int: ...
    @property
    def request_timeout(self) -> float: ...
    @property
    def idle_timeout(self) -> float: ...
    @property
    def allowed_hosts(self) -> tuple[str, ...]: ...


def max_connections_field() -> Any:
    return Field(
        640,
        ge=1,
        le=1_000_000,
        description="connections (HTTP and WebSocket) open at once; a connection past it "
        "is answered 503 and closed at once. Lowered at start, with a warning, to the "
        f"open-files limit (LimitNOFILE) less {RESERVED_FILES} kept for the service's own "
        "files",
    )


def request_timeout_field() -> Any:
    return Field(
        10.0,
        gt=0,
        le=300,
        json_schema_extra=bounds("second"),
        description="seconds a client has to send a whole request (its head and body) "
        "from its first byte; past it the connection is answered 408 and closed (a header "
        "a byte a second)",
    )


def idle_timeout_field() -> Any:
    return Field(
        5.0,
        gt=0,
        le=3600,
        json_schema_extra=bounds("second"),
        description="seconds a connection may stay silent before its first request or "
        "between requests; then it is closed (open WebSockets are not idle)",
    )


def allowed_hosts_field() -> Any:
    return Field(
        (),
        strict=False,
        description="with public_read on: the names (the Host header, without its port) "
        "the service answers to besides IP addresses and localhost; a request naming "
        "another is refused (400; a WebSocket, close code 1008), so that a page of another "
        "site cannot read it through DNS rebinding",
    )


def parse_host_names(value: tuple[str, ...]) -> tuple[str, ...]:
    """`[api] allowed_hosts` checked (`parse_host_name`)."""
    return tuple(parse_host_name(name) for name in value)


def parse_host_name(text: str) -> str:
    """`text` as a host name, in lower case; ValueError if it is not one (a port, a
    scheme or a path in it: write the name alone)."""
    name = text.strip().lower().rstrip(".")
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789-.")
    if not name or not set(name) <= allowed or ".." in name or name.startswith((".", "-")):
        raise ValueError(
            f"{text!r} is not a host name: write the name alone, as clients put it in the "
            'Host header without its port, e.g. "table-1.pit.example"'
        )
    return name


def host_of(header: str) -> str:
    """The name or address of a Host header (its port and IPv6 brackets removed), in
    lower case."""
    host = header.strip().lower()
    if host.startswith("["):  # [::1]:8000
        return host[1:].partition("]")[0]
    name, _, port = host.rpartition(":")
    return name if name and port.isdigit() else host


def is_address(host: str) -> bool:
    """Whether `host` (from `host_of`) is an IP address rather than a name: a browser's
    page on an address is that address's own, never another site's."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
