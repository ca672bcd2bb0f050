"""The floor service's TOML config (`station floor --config FILE`): a file of its own,
typed like the station's (`station.shared.sections.Section`: strict, unknown keys refused, every
error naming the file, the section and the key). `config/floor.example.toml` shows every
key with its default (a test keeps it in step with these models).

The token store is the station's (`[api] tokens` by hash and a `token_file` managed by
`station token add --config FILE`), so the floor has the same login and the same roles.
Relative paths are relative to the config file's folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import (
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from station.core.protection import FALSE_ALARM_BUDGET
from station.floor.holding import HELD_ROWS
from station.shared.broker_login import BrokerLogin
from station.shared.catalogue import LANGUAGES
from station.shared.config import LogConfig, TokenEntry, parse_bind
from station.shared.config import resolve as _resolve
from station.shared.messages import (
    OFFLINE_AFTER,
    STREAM,
    STREAM_BYTES,
    TABLE_ROWS,
    check_token,
)
from station.shared.sections import ConfigError, Problem, Section, bounds, describe, read_toml
from station.shared.serving import (
    allowed_hosts_field,
    idle_timeout_field,
    max_connections_field,
    parse_host_names,
    request_timeout_field,
)
from station.shared.signing import PublicKey

#: Seconds a signed heartbeat's time may be off the floor's clock (stations and the floor
#: keep NTP time): what a replayed heartbeat cannot be newer than.
HEARTBEAT_SKEW = 30.0

__all__ = [
    "ArchiveConfig",
    "BrokerConfig",
    "ConfigError",
    "FloorApiConfig",
    "FloorServiceConfig",
    "FloorSettings",
    "FloorTableConfig",
    "from_mapping",
    "load",
]


class BrokerConfig(BrokerLogin):
    """`[broker]`: the NATS server (JetStream) the stations publish to, and how this
    service logs in and consumes (the login keys are a station's `[floor]` ones; secrets
    come from the environment or a credentials file)."""

    url: str = Field(
        "nats://127.0.0.1:4222",
        description="the floor broker, nats://HOST:PORT or tls://HOST:PORT (several, "
        "comma-separated, for a cluster)",
    )
    site: str = Field(
        "site-1",
        description="the site (casino floor) whose tables this service archives: subjects "
        "floor.<site>.<table>.journal, .heartbeat and .alert",
    )
    stream: str = Field(
        STREAM,
        description="the JetStream stream of the rows (made by this service if missing)",
    )
    replicas: int = Field(
        1,
        ge=1,
        le=5,
        description="the brokers that keep each row when this service makes the stream: 1 "
        "for one broker, 3 for a cluster of three (a row is acknowledged once two hold it, "
        "and the floor goes on through one broker's loss)",
    )
    table_rows: int = Field(
        TABLE_ROWS,
        ge=1000,
        description="rows of one table the stream keeps when this service makes it, the "
        "table's oldest dropped first: one table's login flooding its subject drops only "
        "its own rows (size it for the longest floor outage: docs/floor-publishing.md, "
        "'Sizing the broker')",
    )
    stream_bytes: int = Field(
        STREAM_BYTES,
        ge=1 << 20,
        description="bytes the stream keeps in all when this service makes it, the oldest "
        "dropped first: below the broker's max_file_store, so no publish ever fails for "
        "want of room",
    )
    user: str = Field("", description="the floor service's broker user (with password)")
    durable: str = Field(
        "floor-service",
        description="the JetStream durable consumer's name: a restarted service resumes "
        "where this one acknowledged",
    )
    batch: int = Field(
        500, ge=1, le=10_000, description="rows fetched, archived in one commit, then acked"
    )
    ack_wait: float = Field(
        5.0,
        ge=0.5,
        le=3600,
        json_schema_extra=bounds("second"),
        description="seconds before the broker sends again rows that were fetched but not "
        "acked (a service killed between its commit and its ack gets them again then)",
    )
    timeout: float = Field(
        2.0,
        gt=0,
        le=60,
        json_schema_extra=bounds("second"),
        description="seconds the broker has to answer a connection or a request; the "
        "service keeps trying",
    )

    @field_validator("durable")
    @classmethod
    def _durable(cls, value: str) -> str:
        return check_token(value, "the durable")


class ArchiveConfig(Section):
    """`[archive]`: the floor archive, every table's journal rows (SQLite, WAL)."""

    path: Path = Field(
        Path("var/floor.db"),
        strict=False,
        description="the floor archive (SQLite, WAL, synchronous FULL); relative to the "
        "config file's folder",
    )

    @field_validator("path")
    @classmethod
    def _path(cls, value: Path, info: ValidationInfo) -> Path:
        if not str(value).strip() or str(value) == ".":
            raise ValueError("must not be empty")
        return _resolve(value, info)


class FloorApiConfig(Section):
    """`[api]`: where the floor view listens, who may see it (the station's tokens), and
    what its clients may hold (the keys both services have, `station.shared.serving`)."""

    bind: str = Field("127.0.0.1:8100", description="HOST:PORT where the floor page and API listen")
    public_read: bool = Field(
        False, description="true: the floor page and GET /api/floor/* need no token"
    )
    tokens: tuple[TokenEntry, ...] = Field(
        (), strict=False, description="tokens by hash, [{name, role, sha256}]"
    )
    token_file: Path = Field(
        Path("var/tokens.toml"),
        strict=False,
        description="the token file (re-read when it changes): name a station's (its [api] "
        "token_file, managed by `station token add/revoke`) for the same logins; relative "
        "to the config file's folder",
    )
    demo_tokens: bool = Field(
        False,
        description="make a token per role at start, print them, and forget them at exit "
        "(demo only)",
    )
    max_connections: int = max_connections_field()
    request_timeout: float = request_timeout_field()
    idle_timeout: float = idle_timeout_field()
    allowed_hosts: tuple[str, ...] = allowed_hosts_field()

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

    @field_validator("token_file")
    @classmethod
    def _token_file(cls, value: Path, info: ValidationInfo) -> Path:
        if not str(value).strip() or str(value) == ".":
            raise ValueError("must not be empty")
        return _resolve(value, info)

    @field_validator("allowed_hosts")
    @classmethod
    def _allowed_hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return parse_host_names(value)

    @model_validator(mode="after")
    def _names_differ(self) -> FloorApiConfig:
        seen: set[str] = set()
        for i, t in enumerate(self.tokens):
            if t.name in seen:
                raise Problem(("tokens", i, "name"), f"{t.name!r} is used twice")
            seen.add(t.name)
        return self


class FloorTableConfig(Section):
    """`[[table]]`: a table the floor expects (shown offline until it is heard from)."""

    id: str = Field(description="the table's id ([table] id of its station)")
    name: str = Field("", description="what the floor calls it (empty: its id)")
    dashboard: str = Field(
        "",
        description="the table's own dashboard (http:// or https://); empty: the URL the "
        "station sends in its signed heartbeats",
    )
    public_key: str = Field(
        "",
        description="the station's public key, ed25519:... as `station key show` prints "
        "it: the floor archives only rows it signed, and heeds only heartbeats and alerts "
        "it signed (it follows the station's key rotations); empty: the key the station "
        "names is held for a supervisor to accept on the floor view (first use)",
    )

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return check_token(value, "the table id")

    @field_validator("public_key")
    @classmethod
    def _public_key(cls, value: str) -> str:
        if value.strip():
            PublicKey.from_text(value)  # SigningError (a ValueError) says what is wrong
        return value.strip()

    @property
    def key(self) -> PublicKey | None:
        """The public key the config names (None: none)."""
        return PublicKey.from_text(self.public_key) if self.public_key else None

    @field_validator("dashboard")
    @classmethod
    def _dashboard(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"expected an http:// or https:// URL, got {value!r}")
        return value


class FloorSettings(Section):
    """`[floor]`: how the floor view judges its tables."""

    offline_after: float = Field(
        OFFLINE_AFTER,
        gt=0,
        le=3600,
        json_schema_extra=bounds("second"),
        description="seconds without a heartbeat after which a table shows offline",
    )
    results_shown: int = Field(
        12, ge=0, le=100, description="the last results of each table's shoe on the floor view"
    )
    heartbeat_skew: float = Field(
        HEARTBEAT_SKEW,
        gt=0,
        le=3600,
        json_schema_extra=bounds("second"),
        description="seconds a signed heartbeat's time may differ from the floor's clock "
        "(beyond offline_after): an older one is a replay, refused (STALE_HEARTBEAT)",
    )
    held_rows: int = Field(
        HELD_ROWS,
        ge=100,
        le=10_000_000,
        description="rows of a table its trusted key did not sign (forged, malformed, of "
        "another key) the archive holds at most, and as many signed by a first-use key "
        "waiting for a supervisor; more are not stored, only counted (dropped, "
        "HELD_FULL): one login's flood cannot fill the floor's disk. Rows the trusted key "
        "signed are always kept",
    )
    language: str = Field(
        "en",
        description=f"the floor view's default language, one of {', '.join(LANGUAGES)}, for "
        "a person whose browser asks for none of them and who has not chosen one (each "
        "person's choice, in the header's switch, is remembered by their browser)",
    )

    @field_validator("language")
    @classmethod
    def _language(cls, value: str) -> str:
        if value not in LANGUAGES:
            raise ValueError(f"must be one of {', '.join(LANGUAGES)}, got {value!r}")
        return value


class FloorProtectionConfig(Section):
    """`[protection]`: the floor-wide SHOE_SEQUENCE check over every table's archived cards
    (docs/protection.md)."""

    enabled: bool = Field(
        True, description="check every archived card against every shoe of the floor"
    )
    index: Path | None = Field(
        None,
        strict=False,
        description="the floor's index of earlier shoes (SQLite), relative to the config "
        "file's folder; unset: beside the archive (<archive path>.protection)",
    )
    false_alarm: float = Field(
        FALSE_ALARM_BUDGET,
        gt=0,
        le=0.01,
        description="the chance a fairly shuffled shoe raises SHOE_SEQUENCE, which sets "
        "the run length k from the number of shoes of the floor",
    )

    @field_validator("index")
    @classmethod
    def _index(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        if not str(value).strip() or str(value) == ".":
            raise ValueError("must not be empty (leave it out for the default)")
        return _resolve(value, info)

    def index_path(self, archive: Path) -> Path:
        """Where the index is: `index`, or beside the archive."""
        return self.index or archive.with_name(archive.name + ".protection")


class FloorServiceConfig(Section):
    """The whole file. `source` (not a key of the file) says where it came from."""

    broker: BrokerConfig = Field(default_factory=BrokerConfig, description="[broker]")
    archive: ArchiveConfig = Field(default_factory=ArchiveConfig, description="[archive]")
    floor: FloorSettings = Field(default_factory=FloorSettings, description="[floor]")
    api: FloorApiConfig = Field(default_factory=FloorApiConfig, description="[api]")
    log: LogConfig = Field(default_factory=LogConfig, description="[log]")
    protection: FloorProtectionConfig = Field(
        default_factory=FloorProtectionConfig, description="[protection]"
    )
    table: tuple[FloorTableConfig, ...] = Field(
        (), strict=False, description="[[table]]: the tables the floor expects"
    )
    source: str = Field("(defaults)", exclude=True, description="the file the config was read from")

    @model_validator(mode="after")
    def _tables_differ(self) -> FloorServiceConfig:
        seen: set[str] = set()
        for i, t in enumerate(self.table):
            if t.id in seen:
                raise Problem(("table", i, "id"), f"table {t.id!r} is listed twice")
            seen.add(t.id)
        return self


SECTIONS = tuple(name for name in FloorServiceConfig.model_fields if name != "source")


def load(path: str | Path | None) -> FloorServiceConfig:
    """The floor config from a TOML file (None: all defaults)."""
    if path is None:
        return FloorServiceConfig()
    data = read_toml(path)
    return from_mapping(data, source=str(path), base=Path(path).absolute().parent)


def from_mapping(
    data: dict[str, Any], source: str = "config", base: Path | None = None
) -> FloorServiceConfig:
    """The floor config from parsed TOML; every error names `source`, section and key."""
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ConfigError(
            f"{source}: unknown section [{unknown[0]}] (known: {', '.join(SECTIONS)}); "
            "is this a station's config? `station floor` takes the floor's own "
            "(config/floor.example.toml)"
        )
    try:
        config = FloorServiceConfig.model_validate(data, context={"base": base})
    except ValidationError as exc:
        raise ConfigError(describe(exc, FloorServiceConfig, source=source)) from None
    return config.model_copy(update={"source": source})
