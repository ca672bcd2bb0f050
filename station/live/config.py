"""The station's TOML config: one file, one tree of typed models, every key documented.

Each table is a frozen pydantic model (`station.shared.sections.Section`: strict types, unknown
keys refused) whose fields carry their default, bounds and meaning; `StationConfig`
composes them, with the drivers' `ReaderConfig` as `[reader]`. `load(path)` reads the
file with `tomllib` and turns any problem into one `ConfigError` that names the file,
the section and the key. `config/example.toml` shows every key with its default (a test
keeps it in step with these models).

Relative paths in a config file (the journal, the token file, the camera model and
source, a `table:FILE` codec) are relative to the config file's folder, so the station
finds them whatever its working directory. Without a file (all defaults) they are
relative to the working directory. A file with no `[reader]` table runs the station
without a reader (events come only through the API, e.g. on a test rig).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    Field,
    PrivateAttr,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from drivers.config import ReaderConfig, parse_bytes
from station.core.games import BURNS, CUT_POLICIES, GAME_NAMES, GAMES
from station.core.paytables import GAME_PAYTABLES, Paytable, PaytableError, available
from station.core.paytables import load as load_paytable
from station.core.table import Table
from station.live.protection.config import ProtectionConfig
from station.live.publisher.settings import FloorConfig
from station.shared.config import ROLES, LogConfig, TokenEntry, parse_bind
from station.shared.config import resolve as _resolve
from station.shared.messages import check_token
from station.shared.sections import ConfigError, Problem, Section, bounds, describe, read_toml

__all__ = [
    "ROLES",
    "ApiConfig",
    "ConfigError",
    "FloorConfig",
    "JournalConfig",
    "LogConfig",
    "ReaderConfig",
    "SignalsConfig",
    "StationConfig",
    "TableConfig",
    "TokenEntry",
    "WebhookConfig",
    "from_mapping",
    "load",
    "parse_bind",
]

#: The most decks a shoe holds (casinos deal 6 or 8).
MAX_DECKS = 16
#: What a game server can hear of (`[[signals.webhook]] events`), in the README's order.
WEBHOOK_EVENTS = (
    "round_result",
    "round_voided",
    "shoe_started",
    "shoe_finished",
    "suspended",
    "resumed",
    "protection_alert",
)
#: The shortest webhook secret accepted: 256 bits, as long as the HMAC-SHA256 key wants.
MIN_SECRET_BYTES = 32


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


class TableConfig(Section):
    """`[table]`: which table this is, the game it plays and how it is dealt (the rules'
    options). `decks`, `burn`, `cut_policy` and `paytable` left out are the game's (the
    defaults shown are punto banco's), filled in when the table is validated: build one
    for another game with keywords (`TableConfig(game=...)`), not `model_copy`, which
    validates nothing and would keep punto banco's values."""

    id: str = Field(
        "table-1", description="this table's name, in the journal, the webhooks and the dashboard"
    )
    game: str = Field(
        "punto_banco",
        description='the game dealt: "punto_banco", "chemin_de_fer" or "baccarat_banque"; '
        "decks, burn, cut_policy and paytable left out are the game's",
    )
    decks: int = Field(
        8,
        ge=1,
        le=MAX_DECKS,
        description="52-card decks in the shoe (a card seen more than `decks` times is "
        "foreign); default: the game's (8 punto banco, 6 chemin de fer and baccarat banque)",
    )
    gated: bool = Field(
        True,
        description="cards may be dealt only after an accepted close_bets (false: ungated table)",
    )
    burn: str = Field(
        "reveal",
        description='"reveal" (the first card of a shoe says how many to burn) or "none" '
        "(no burn); default: the game's (reveal punto banco, none chemin de fer and "
        "baccarat banque)",
    )
    cut_policy: str = Field(
        "one_more",
        description="what the cut card does while a round is "
        'being dealt: "one_more" (the next round '
        'is the last), "last_round" (this round '
        'is the last) or "stop" (this round, if any, is the last; none: the shoe ends '
        "at once); default: the game's (one_more punto banco, stop chemin de fer and "
        "baccarat banque)",
    )
    paytable: str = Field(
        "traditional",
        description="what the table pays, for the live odds and the game server: a shipped "
        'paytable ("traditional", "no_commission", "chemin_de_fer", "baccarat_banque") or a '
        "paytable TOML file, relative to the config file's folder; it must be for the "
        "table's game; default: the game's (traditional, chemin_de_fer, baccarat_banque)",
    )
    _paytable: Paytable | None = PrivateAttr(None)

    @model_validator(mode="before")
    @classmethod
    def _game_defaults(cls, data: Any) -> Any:
        """The keys left out take the game's value (punto banco's: the fields' defaults)."""
        if not isinstance(data, Mapping):
            return data
        name = data.get("game", "punto_banco")
        game = GAMES.get(name) if isinstance(name, str) else None
        if game is None:
            return data  # the game's own check says what is wrong
        filled = dict(data)
        filled.setdefault("decks", game.decks)
        filled.setdefault("burn", game.burn)
        filled.setdefault("cut_policy", game.cut_policy)
        filled.setdefault("paytable", GAME_PAYTABLES[game.name])
        return filled

    @field_validator("game")
    @classmethod
    def _game(cls, value: str) -> str:
        if value not in GAME_NAMES:
            raise ValueError(f"must be one of {', '.join(GAME_NAMES)}, got {value!r}")
        return value

    @field_validator("burn")
    @classmethod
    def _burn(cls, value: str) -> str:
        if value not in BURNS:
            raise ValueError(f"must be one of {', '.join(BURNS)}, got {value!r}")
        return value

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("cut_policy")
    @classmethod
    def _cut_policy(cls, value: str) -> str:
        if value not in CUT_POLICIES:
            raise ValueError(f"must be one of {', '.join(CUT_POLICIES)}, got {value!r}")
        return value

    @field_validator("paytable")
    @classmethod
    def _paytable_spec(cls, value: str, info: ValidationInfo) -> str:
        """A shipped name as it is, a file against the config's folder; it must load."""
        if value not in available():
            if not value.strip():
                raise ValueError(f"must name a paytable ({', '.join(available())}) or a file")
            value = str(_resolve(Path(value), info))
        try:
            load_paytable(value)
        except PaytableError as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _paytable_of_the_game(self) -> TableConfig:
        """A paytable settles one game's results: another game's is refused here."""
        paytable = self.load_paytable()
        if paytable.game != self.game:
            raise Problem(
                "paytable",
                f"paytable {paytable.name} is for {paytable.game}, but this table plays "
                f"{self.game}: give a {self.game} paytable (the shipped one is "
                f'"{GAME_PAYTABLES[self.game]}"), or leave paytable out for it',
            )
        return self

    def load_paytable(self) -> Paytable:
        """The paytable in force (validation vouched that it loads; read once, and again
        after a `model_copy` that changed it)."""
        loaded = self._paytable
        if loaded is None or self.paytable not in (loaded.name, loaded.source):
            loaded = load_paytable(self.paytable)
            self._paytable = loaded
        return loaded

    def new_table(self) -> Table:
        """A fresh table dealt by these settings (validation vouched for each of them)."""
        return Table(
            game=self.game,
            decks=self.decks,
            gated=self.gated,
            cut_policy=self.cut_policy,  # type: ignore[arg-type]
            burn=self.burn,  # type: ignore[arg-type]
        )


class JournalConfig(Section):
    """`[journal]`: where the durable journal lives."""

    path: Path = Field(
        Path("var/journal.db"),
        strict=False,
        description="the journal (SQLite, WAL, synchronous FULL) and its head "
        "anchor <path>.head; relative to the config file's "
        "folder",
    )

    @field_validator("path")
    @classmethod
    def _path(cls, value: Path, info: ValidationInfo) -> Path:
        if not str(value).strip() or str(value) == ".":
            raise ValueError("must not be empty")
        return _resolve(value, info)


class ApiConfig(Section):
    """`[api]`: where the HTTP/WebSocket API listens and who may use it."""

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


class WebhookConfig(Section):
    """`[[signals.webhook]]`: one game-server endpoint, signed with its own secret.

    The secret is read when the config is loaded (from `secret_file`, or from the
    environment with `secret = "env:NAME"`) and kept out of the model's fields, so it is
    never printed, journaled or dumped with the config.
    """

    url: StrictStr = Field(description="where the events are POSTed (http:// or https://)")
    secret_file: Path | None = Field(
        None,
        strict=False,
        description=f"a file holding the signing secret (at least {MIN_SECRET_BYTES} bytes; "
        "surrounding whitespace is ignored); relative to the config file's folder",
    )
    secret: str | None = Field(
        None,
        description='"env:NAME": the signing secret is the environment variable NAME '
        "(give this or secret_file, not both)",
    )
    events: tuple[str, ...] = Field(
        WEBHOOK_EVENTS,
        strict=False,
        description=f"the events this endpoint gets, any of {', '.join(WEBHOOK_EVENTS)}",
    )
    _key: bytes = PrivateAttr(b"")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"expected an http:// or https:// URL, got {value!r}")
        return value

    @field_validator("secret_file")
    @classmethod
    def _secret_file(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is not None and (not str(value).strip() or str(value) == "."):
            raise ValueError("must not be empty")
        return None if value is None else _resolve(value, info)

    @field_validator("events")
    @classmethod
    def _events(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("must name at least one event (leave the key out for all of them)")
        for name in value:
            if name not in WEBHOOK_EVENTS:
                raise ValueError(f"must be among {', '.join(WEBHOOK_EVENTS)}, got {name!r}")
        if len(set(value)) != len(value):
            raise ValueError("names an event twice")
        return value

    @model_validator(mode="after")
    def _read_secret(self) -> WebhookConfig:
        # The messages never quote the secret, only where it was to come from.
        if (self.secret is None) == (self.secret_file is None):
            raise Problem(
                "secret_file",
                'give the signing secret as secret_file = "FILE" or as '
                'secret = "env:NAME" (one of the two)',
            )
        if self.secret is not None:
            name = self.secret.removeprefix("env:")
            if not self.secret.startswith("env:") or not name:
                raise Problem(
                    "secret",
                    'write secret = "env:NAME" (the secret itself belongs in the '
                    "environment or in secret_file, never in the config)",
                )
            if name not in os.environ:
                raise Problem("secret", f"the environment variable {name} is not set")
            key = os.environ[name].strip().encode()
            where = f"the environment variable {name}"
        else:
            assert self.secret_file is not None
            try:
                key = self.secret_file.read_bytes().strip()
            except OSError as exc:
                raise Problem(
                    "secret_file", f"cannot read {self.secret_file}: {exc.strerror}"
                ) from None
            where = str(self.secret_file)
        if len(key) < MIN_SECRET_BYTES:
            raise Problem(
                "secret" if self.secret is not None else "secret_file",
                f"the secret in {where} is {len(key)} bytes; it must be at least "
                f"{MIN_SECRET_BYTES} (e.g. `openssl rand -hex 32`)",
            )
        self._key = key
        return self

    @property
    def key(self) -> bytes:
        """The signing secret (HMAC-SHA256 key)."""
        return self._key


class SignalsConfig(Section):
    """`[signals]`: who hears about the table (the game server), and what the shoe is told."""

    webhook: tuple[WebhookConfig, ...] = Field(
        (),
        strict=False,
        description="the game server's endpoints, one [[signals.webhook]] table each: "
        "signed events (rounds, voids, shoes, suspensions)",
    )
    webhooks: tuple[StrictStr, ...] = Field(
        (),
        strict=False,
        description="deprecated: URLs that get an unsigned JSON POST on every suspension "
        "and every resume only (use [[signals.webhook]])",
    )
    webhook_timeout: float = Field(
        2.0,
        gt=0,
        le=300,
        json_schema_extra=bounds("second"),
        description="seconds before one POST is given up and retried",
    )
    webhook_attempts: int = Field(8, ge=1, le=100, description="tries per notice")
    webhook_backoff: float = Field(
        0.5,
        ge=0,
        le=30,
        json_schema_extra=bounds("second"),
        description="first wait between tries (s); it doubles, to at most 30 s",
    )
    stop_command: str = Field(
        "",
        description="written to the shoe when the table suspends: "
        'text with \\xNN escapes, or "hex:13"; empty: '
        "nothing (else the [reader] stop_command)",
    )
    release_command: str = Field(
        "", description="written to the shoe when the table resumes (as stop_command)"
    )

    @field_validator("webhook", mode="before")
    @classmethod
    def _webhook_tables(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            for i, item in enumerate(value):
                if isinstance(item, str):
                    raise Problem(
                        (i,),
                        "expected a [[signals.webhook]] table (url, secret_file or secret, "
                        f"events), got the string {item!r}; plain URLs go in the deprecated "
                        "webhooks = [...] (unsigned, suspensions and resumes only)",
                    )
        return value

    @model_validator(mode="after")
    def _webhooks(self) -> SignalsConfig:
        for i, url in enumerate(self.webhooks):
            if not url.startswith(("http://", "https://")):
                raise Problem(("webhooks", i), f"expected an http:// or https:// URL, got {url!r}")
        return self

    @field_validator("stop_command", "release_command")
    @classmethod
    def _bytes(cls, value: str) -> str:
        parse_bytes(value)
        return value


class StationConfig(Section):
    """The whole file. `source` (not a key of the file) says where it came from."""

    table: TableConfig = Field(default_factory=TableConfig, description="[table]")
    reader: ReaderConfig | None = Field(None, description="[reader]; none: no reader")
    journal: JournalConfig = Field(default_factory=JournalConfig, description="[journal]")
    api: ApiConfig = Field(default_factory=ApiConfig, description="[api]")
    signals: SignalsConfig = Field(default_factory=SignalsConfig, description="[signals]")
    protection: ProtectionConfig = Field(
        default_factory=ProtectionConfig, description="[protection]"
    )
    log: LogConfig = Field(default_factory=LogConfig, description="[log]")
    floor: FloorConfig = Field(default_factory=FloorConfig, description="[floor]")
    source: str = Field("(defaults)", exclude=True, description="the file the config was read from")

    @field_validator("reader", mode="before")
    @classmethod
    def _no_reader(cls, value: Any) -> Any:
        return None if isinstance(value, Mapping) and not value else value

    @model_validator(mode="after")
    def _floor_table(self) -> StationConfig:
        """With a floor, the table's id is a token of its subjects (floor.<site>.<table>)."""
        if self.floor.enabled:
            try:
                check_token(self.table.id, "[table] id")
            except ValueError as exc:
                raise Problem(("table", "id"), f"{exc}; the floor ([floor] url) needs it") from None
        return self

    @property
    def stop_command(self) -> bytes:
        """What to write to the shoe when the table suspends: `[signals] stop_command`, or
        else the reader's own `stop_command` (b"" for none)."""
        if self.signals.stop_command:
            return parse_bytes(self.signals.stop_command)
        return (self.reader.stop_command if self.reader is not None else None) or b""


#: The tables of the file (`source` is not one).
SECTIONS = tuple(name for name in StationConfig.model_fields if name != "source")


def load(path: str | Path | None) -> StationConfig:
    """The config from a TOML file (None: all defaults)."""
    if path is None:
        return StationConfig()
    data = read_toml(path)
    return from_mapping(data, source=str(path), base=Path(path).absolute().parent)


def from_mapping(
    data: Mapping[str, Any], source: str = "config", base: Path | None = None
) -> StationConfig:
    """The config from parsed TOML (relative paths against `base`, the file's folder);
    every error names `source`, the section and the key."""
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ConfigError(
            f"{source}: unknown section [{unknown[0]}] (known: {', '.join(SECTIONS)})"
        )
    try:
        config = StationConfig.model_validate(data, context={"base": base})
    except ValidationError as exc:
        raise ConfigError(describe(exc, StationConfig, source=source)) from None
    return config.model_copy(update={"source": source})
