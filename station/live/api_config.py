"""`[api]` of the station's config: where the HTTP/WebSocket API listens, who may use it,
which reverse proxies it trusts, and what its clients may hold (the keys both services
share, `station.shared.serving`, and the WebSocket's catch-up); `station.live.config`
composes it into the file."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from pydantic import Field, ValidationInfo, field_validator, model_validator

from station.shared.config import TokenEntry, parse_bind
from station.shared.config import resolve as _resolve
from station.shared.sections import Problem, Section
from station.shared.serving import (
    allowed_hosts_field,
    idle_timeout_field,
    max_connections_field,
    parse_host_names,
    request_timeout_field,
)


def parse_proxy(text: str) -> str:
    """`text` as an IP address ("127.0.0.1") or network ("10.0.0.0/24"), written the
    canonical way; ValueError otherwise. Names are refused: the proxy's address is what
    the station sees, and a name would need resolving (and could change)."""
    entry = text.strip()
    try:
        if "/" in entry:
            return str(ipaddress.ip_network(entry))
        return str(ipaddress.ip_address(entry))
    except ValueError as exc:
        if "has host bits set" in str(exc):
            network = ipaddress.ip_network(entry, strict=False)
            raise ValueError(f"{text!r} has host bits set: write {str(network)!r}") from None
        raise ValueError(
            f"{text!r} is not an IP address or network: write the proxy's address as the "
            'station sees it, e.g. "127.0.0.1", "::1" or "10.0.0.0/24"'
        ) from None


class ApiConfig(Section):
    """`[api]`: where the HTTP/WebSocket API listens, who may use it, and what its clients
    may hold (the keys both services have, `station.shared.serving`, and the WebSocket's
    catch-up from the journal)."""

    bind: str = Field(
        "127.0.0.1:8000",
        description="HOST:PORT where the HTTP/WebSocket API listens (port 0 to 65535)",
    )
    public_read: bool = Field(
        False, description="true: GET /api/state, /api/journal and WS /api/live need no token"
    )
    tokens: tuple[TokenEntry, ...] = Field(
        (), strict=False, description="tokens by hash, [{name, role, sha256}]"
    )
    token_file: Path = Field(
        Path("var/tokens.toml"),
        strict=False,
        description="the token file managed by `station token add/"
        "revoke` (re-read when it changes); relative to the "
        "config file's folder",
    )
    allow_rig: bool = Field(
        False,
        description="accept rig tokens (card, cut and fault events "
        "through the API): test rigs only",
    )
    demo_tokens: bool = Field(
        False,
        description="make a token per role at start, print them, "
        "and forget them at exit (demo only)",
    )
    allowed_origins: tuple[str, ...] = Field(
        (),
        strict=False,
        description="web origins (scheme://host[:port]) besides the station's own whose "
        "pages may open WS /api/live",
    )
    metrics_bind: str = Field(
        "",
        description="empty: GET /metrics on the API, with a token (viewer and up); "
        "HOST:PORT (or PORT, on 127.0.0.1): Prometheus metrics on a listener of their "
        "own, without a token",
    )
    trusted_proxies: tuple[str, ...] = Field(
        (),
        strict=False,
        description="addresses or networks of reverse proxies whose X-Forwarded-For names "
        "the client (for the wrong-token throttle and the logs); none: the header is ignored",
    )
    max_connections: int = max_connections_field()
    request_timeout: float = request_timeout_field()
    idle_timeout: float = idle_timeout_field()
    allowed_hosts: tuple[str, ...] = allowed_hosts_field()
    max_backfills: int = Field(
        4,
        ge=1,
        le=1000,
        description="WebSocket clients catching up from the journal (?after=SEQ) at once, "
        "each in pages of at most 1 MiB; the others wait their turn",
    )
    backfill_queue: int = Field(
        200,
        ge=0,
        le=100_000,
        description="WebSocket clients that may wait for a turn to catch up; past it the "
        "handshake is answered 503 with Retry-After",
    )

    @property
    def host(self) -> str:
        return self.bind.rpartition(":")[0].strip("[]")

    @property
    def port(self) -> int:
        return int(self.bind.rpartition(":")[2])

    @field_validator("bind")
    @classmethod
    def _bind(cls, value: str) -> str:
        return parse_bind(value)

    @field_validator("allowed_origins")
    @classmethod
    def _allowed_origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for origin in value:
            scheme, sep, rest = origin.partition("://")
            if scheme not in ("http", "https") or not sep or not rest or "/" in rest:
                raise ValueError(
                    f"{origin!r} is not an origin: write scheme://host[:port], e.g. "
                    '"https://pit.example:8443" (http or https, no path)'
                )
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _allowed_hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return parse_host_names(value)

    @field_validator("trusted_proxies")
    @classmethod
    def _trusted_proxies(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(parse_proxy(entry) for entry in value)

    @field_validator("metrics_bind")
    @classmethod
    def _metrics_bind(cls, value: str) -> str:
        if not value:
            return value
        return parse_bind(f"127.0.0.1:{value}" if value.isdigit() else value)

    @property
    def metrics_address(self) -> tuple[str, int] | None:
        """(host, port) of the metrics listener, None for metrics on the API."""
        if not self.metrics_bind:
            return None
        host, _, port = self.metrics_bind.rpartition(":")
        return host.strip("[]"), int(port)

    @field_validator("token_file")
    @classmethod
    def _token_file(cls, value: Path, info: ValidationInfo) -> Path:
        if not str(value).strip() or str(value) == ".":
            raise ValueError("must not be empty")
        return _resolve(value, info)

    @model_validator(mode="after")
    def _names_differ(self) -> ApiConfig:
        seen: set[str] = set()
        for i, t in enumerate(self.tokens):
            if t.name in seen:
                raise Problem(("tokens", i, "name"), f"{t.name!r} is used twice")
            seen.add(t.name)
        return self
