"""The station's TOML config: one file, one tree of typed models, every key documented.

Each table is a frozen pydantic model (`station.shared.sections.Section`: strict types, unknown
keys refused) whose fields carry their default, bounds and meaning; `StationConfig`
composes them, with the drivers' `ReaderConfig` as `[reader]`. The larger sections have
modules of their own beside this one (`api_config`: `[api]`; `signals_config`:
`[signals]` and its webhooks), and every model is importable from here. `load(path)` reads the
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

import os
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from drivers.config import ReaderConfig, parse_bytes
from station.core.games import BURNS, CUT_POLICIES, GAME_NAMES, GAMES
from station.core.paytables import (
    GAME_PAYTABLES,
    Paytable,
    PaytableError,
    available,
    game_defaults,
)
from station.core.paytables import load as load_paytable
from station.core.table import Table
from station.live.api_config import ApiConfig
from station.live.display_config import DashboardConfig, DisplayConfig
from station.live.protection.config import ProtectionConfig
from station.live.publisher.settings import FloorConfig
from station.live.signals_config import WEBHOOK_EVENTS, SignalsConfig, WebhookConfig
from station.shared.config import ROLES, LogConfig, TokenEntry, parse_bind
from station.shared.config import resolve as _resolve
from station.shared.messages import check_token
from station.shared.sections import ConfigError, Problem, Section, describe, read_toml
from station.shared.signing import SigningKey

__all__ = [
    "ROLES",
    "WEBHOOK_EVENTS",
    "ApiConfig",
    "ConfigError",
    "DashboardConfig",
    "DisplayConfig",
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
#: What a systemd credential's name is made of (`[journal] signing_key_credential`).
CREDENTIAL_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-_.")
#: The `[table]` keys whose default is the game's (left out: the game's value).
GAME_KEYS = ("decks", "burn", "cut_policy", "paytable")


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
        for key, value in game_defaults(game.name).items():
            filled.setdefault(key, value)
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

    def pinned(self) -> dict[str, tuple[int | str, int | str]]:
        """The game's keys (GAME_KEYS) set to another value than the game's default, each
        with (its value, the game's): a config written for one game and switched to
        another keeps the first game's values where it wrote them out."""
        defaults = game_defaults(self.game)
        values = {key: getattr(self, key) for key in GAME_KEYS}
        return {k: (v, defaults[k]) for k, v in values.items() if v != defaults[k]}

    def pinned_notice(self) -> str | None:
        """The line `station run` logs at start when the config pins values that are not
        the game's defaults, e.g. `table: decks = 8 pinned by the config; chemin de fer's
        default is 6`; None when it pins none."""
        pinned = self.pinned()
        if not pinned:
            return None
        values = ", ".join(f"{key} = {_shown(value)}" for key, (value, _) in pinned.items())
        defaults = ", ".join(_shown(default) for _, default in pinned.values())
        title = GAMES[self.game].title
        if len(pinned) == 1:
            return f"table: {values} pinned by the config; {title}'s default is {defaults}"
        return f"table: {values} pinned by the config; {title}'s defaults are {defaults}"

    def new_table(self) -> Table:
        """A fresh table dealt by these settings (validation vouched for each of them)."""
        return Table(
            game=self.game,
            decks=self.decks,
            gated=self.gated,
            cut_policy=self.cut_policy,  # type: ignore[arg-type]
            burn=self.burn,  # type: ignore[arg-type]
        )


def _shown(value: int | str) -> str:
    """A value as the config file writes it (strings in quotes)."""
    return f'"{value}"' if isinstance(value, str) else str(value)


class JournalConfig(Section):
    """`[journal]`: where the durable journal lives, and the key that signs its rows."""

    path: Path = Field(
        Path("var/journal.db"),
        strict=False,
        description="the journal (SQLite, WAL, synchronous FULL) and its head "
        "anchor <path>.head; relative to the config file's "
        "folder",
    )
    signing_key: Path | None = Field(
        None,
        strict=False,
        description="the station's Ed25519 private key (PEM, mode 0600), which signs every "
        "row of the journal; made by `station key init`, relative to the config file's "
        'folder; empty (""): the journal is unsigned',
    )
    signing_key_credential: str = Field(
        "journal-key",
        description="the systemd credential holding signing_key (the unit's "
        "LoadCredential=NAME:PATH): when the station runs under systemd and "
        "$CREDENTIALS_DIRECTORY holds NAME, it reads the key there, not the file (which "
        'may then be root\'s alone); empty (""): always the file',
    )

    @field_validator("path")
    @classmethod
    def _path(cls, value: Path, info: ValidationInfo) -> Path:
        if not str(value).strip() or str(value) == ".":
            raise ValueError("must not be empty")
        return _resolve(value, info)

    @field_validator("signing_key", mode="before")
    @classmethod
    def _no_key(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("signing_key")
    @classmethod
    def _signing_key(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        return None if value is None else _resolve(value, info)

    @field_validator("signing_key_credential")
    @classmethod
    def _credential(cls, value: str) -> str:
        if value and (value in (".", "..") or not set(value) <= CREDENTIAL_CHARACTERS):
            raise ValueError(f"a credential's name is letters, digits, - _ and ., got {value!r}")
        return value

    @property
    def rotations(self) -> Path | None:
        """Where `station key rotate` keeps the old keys' endorsements of the new (public):
        `<signing_key>.rotations`."""
        key = self.signing_key
        return None if key is None else key.with_name(key.name + ".rotations")

    def load_key(
        self, environ: Mapping[str, str] = os.environ, config: str = "FILE"
    ) -> SigningKey | None:
        """The station's signing key (None: the journal is unsigned): the credential
        signing_key_credential names if systemd handed it over ($CREDENTIALS_DIRECTORY),
        else the file signing_key. SigningError says what is wrong and what to do (with
        `config`, the config file's path, in the command it names)."""
        if self.signing_key is None:
            return None
        return SigningKey.load_handed_over(
            self.signing_key, self.signing_key_credential, environ, config
        )


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
    display: DisplayConfig = Field(default_factory=DisplayConfig, description="[display]")
    dashboard: DashboardConfig = Field(default_factory=DashboardConfig, description="[dashboard]")
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


def load(path: str | Path | None, secrets: bool = True) -> StationConfig:
    """The config from a TOML file (None: all defaults); `secrets=False`: the broker's and
    the webhooks' secrets are not read (`from_mapping`)."""
    if path is None:
        return StationConfig()
    data = read_toml(path)
    return from_mapping(data, source=str(path), base=Path(path).absolute().parent, secrets=secrets)


def from_mapping(
    data: Mapping[str, Any],
    source: str = "config",
    base: Path | None = None,
    secrets: bool = True,
) -> StationConfig:
    """The config from parsed TOML (relative paths against `base`, the file's folder);
    every error names `source`, the section and the key. `secrets=False`, for a command
    that connects to nothing (`station token`, `journal`, `key`): how the secrets are given
    is checked, but they are not read, so their environment variables need not be set."""
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ConfigError(
            f"{source}: unknown section [{unknown[0]}] (known: {', '.join(SECTIONS)})"
        )
    try:
        config = StationConfig.model_validate(data, context={"base": base, "secrets": secrets})
    except ValidationError as exc:
        raise ConfigError(describe(exc, StationConfig, source=source)) from None
    return config.model_copy(update={"source": source})
