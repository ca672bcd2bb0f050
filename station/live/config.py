"""The station's TOML config: one file, every key with a documented default.

Every section is a frozen dataclass; `load(path)` reads the file with `tomllib`, rejects
unknown keys and values of the wrong type or range with an error that names the file,
the section and the key, and fills in the defaults. `config/example.toml` documents
every key. Relative paths are relative to the current directory (the service's
working directory).

The `[reader]` table belongs to the drivers: it is validated by
`drivers.config.from_mapping` (a `drivers.config.ReaderConfig`; driver settings such as
the demo's `[reader.sim]` are sub-tables). A file with no `[reader]` table runs the
station without a reader (events come only through the API, e.g. on a test rig).
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from drivers.config import ReaderConfig, parse_bytes
from station.core.table import CUT_POLICIES, Table

ROLES = ("viewer", "dealer", "supervisor", "rig")  # lowest first: `station.live.tokens.RANK`


class ConfigError(Exception):
    """The config cannot be used; the message names the key and says what is expected."""


@dataclass(frozen=True)
class TableConfig:
    """`[table]`: which table this is and how it is dealt (the rules' options)."""

    id: str = "table-1"
    decks: int = 8
    gated: bool = True
    cut_policy: str = "one_more"

    def check(self, where: str) -> None:
        if not self.id.strip():
            raise ConfigError(f"{where}.id: must not be empty")
        if self.decks < 1:
            raise ConfigError(f"{where}.decks: must be at least 1, got {self.decks}")
        if self.cut_policy not in CUT_POLICIES:
            raise ConfigError(f"{where}.cut_policy: must be one of {', '.join(CUT_POLICIES)}, "
                              f"got {self.cut_policy!r}")  # fmt: skip

    def new_table(self) -> Table:
        """A fresh table dealt by these settings (`check` has vouched for cut_policy)."""
        return Table(decks=self.decks, gated=self.gated, cut_policy=self.cut_policy)  # type: ignore[arg-type]


@dataclass(frozen=True)
class JournalConfig:
    """`[journal]`: where the durable journal lives."""

    path: Path = Path("var/journal.db")

    def check(self, where: str) -> None:
        if not str(self.path).strip():
            raise ConfigError(f"{where}.path: must not be empty")


@dataclass(frozen=True)
class TokenEntry:
    """One API token, by hash only (see `station.live.tokens`)."""

    name: str
    role: str
    sha256: str


@dataclass(frozen=True)
class ApiConfig:
    """`[api]`: where the HTTP/WebSocket API listens and who may use it."""

    bind: str = "127.0.0.1:8000"
    public_read: bool = False
    tokens: tuple[TokenEntry, ...] = ()
    token_file: Path = Path("var/tokens.toml")
    allow_rig: bool = False
    demo_tokens: bool = False

    @property
    def host(self) -> str:
        return self.bind.rpartition(":")[0].strip("[]")

    @property
    def port(self) -> int:
        return int(self.bind.rpartition(":")[2])

    def check(self, where: str) -> None:
        host, sep, port = self.bind.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ConfigError(f"{where}.bind: expected HOST:PORT (e.g. 127.0.0.1:8000), "
                              f"got {self.bind!r}")  # fmt: skip
        names = set()
        for i, t in enumerate(self.tokens):
            if t.role not in ROLES:
                raise ConfigError(f"{where}.tokens[{i}].role: must be one of "
                                  f"{', '.join(ROLES)}, got {t.role!r}")  # fmt: skip
            if len(t.sha256) != 64 or any(c not in "0123456789abcdef" for c in t.sha256):
                raise ConfigError(f"{where}.tokens[{i}].sha256: expected 64 lower-case hex "
                                  "digits (the output of `station token add`)")  # fmt: skip
            if t.name in names:
                raise ConfigError(f"{where}.tokens[{i}].name: {t.name!r} is used twice")
            names.add(t.name)


@dataclass(frozen=True)
class SignalsConfig:
    """`[signals]`: who hears about suspensions, and what the shoe is told."""

    webhooks: tuple[str, ...] = ()
    webhook_timeout: float = 2.0
    webhook_attempts: int = 8
    webhook_backoff: float = 0.5
    stop_command: str = ""
    release_command: str = ""

    def check(self, where: str) -> None:
        for i, url in enumerate(self.webhooks):
            if not url.startswith(("http://", "https://")):
                raise ConfigError(f"{where}.webhooks[{i}]: expected an http:// or https:// "
                                  f"URL, got {url!r}")  # fmt: skip
        if self.webhook_timeout <= 0:
            raise ConfigError(f"{where}.webhook_timeout: must be more than 0 seconds")
        if self.webhook_attempts < 1:
            raise ConfigError(f"{where}.webhook_attempts: must be at least 1")
        if self.webhook_backoff < 0:
            raise ConfigError(f"{where}.webhook_backoff: must not be negative")
        for key in ("stop_command", "release_command"):
            try:
                parse_bytes(getattr(self, key))
            except ValueError as exc:
                raise ConfigError(f"{where}.{key}: {exc}") from None


@dataclass(frozen=True)
class StationConfig:
    """The whole file."""

    table: TableConfig = field(default_factory=TableConfig)
    reader: ReaderConfig | None = None
    journal: JournalConfig = field(default_factory=JournalConfig)
    api: ApiConfig = field(default_factory=ApiConfig)
    signals: SignalsConfig = field(default_factory=SignalsConfig)
    source: str = "(defaults)"

    @property
    def stop_command(self) -> bytes:
        """What to write to the shoe when the table suspends: `[signals] stop_command`, or
        else the reader's own `stop_command` (b"" for none)."""
        if self.signals.stop_command:
            return parse_bytes(self.signals.stop_command)
        return (self.reader.stop_command if self.reader is not None else None) or b""


SECTIONS: dict[str, type[Any]] = {
    "table": TableConfig, "journal": JournalConfig, "api": ApiConfig,
    "signals": SignalsConfig,
}  # fmt: skip


def load(path: str | Path | None) -> StationConfig:
    """The config from a TOML file (None: all defaults)."""
    if path is None:
        return StationConfig()
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ConfigError(f"cannot read the config {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return from_mapping(data, source=str(path))


def from_mapping(data: Mapping[str, Any], source: str = "config") -> StationConfig:
    """The config from parsed TOML; every error names `source` and the key."""
    unknown = sorted(set(data) - set(SECTIONS) - {"reader"})
    if unknown:
        raise ConfigError(f"{source}: unknown section [{unknown[0]}] (known: "
                          f"{', '.join(sorted([*SECTIONS, 'reader']))})")  # fmt: skip
    parts: dict[str, Any] = {}
    for name, cls in SECTIONS.items():
        value = data.get(name, {})
        where = f"{source}: [{name}]"
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a table of keys, got {type(value).__name__}")
        section = _build(cls, value, f"{source}: {name}")
        section.check(f"{source}: {name}")
        parts[name] = section
    parts["reader"] = _reader(data.get("reader", {}), source)
    return StationConfig(**parts, source=source)


def _reader(value: object, source: str) -> Any:
    """The validated `ReaderConfig`, or None for no `[reader]` table (no reader)."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{source}: [reader]: expected a table of keys")
    if not value:
        return None
    from drivers.config import ConfigError as ReaderConfigError
    from drivers.config import from_mapping as reader_from_mapping

    try:
        return reader_from_mapping(value)
    except ReaderConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from exc


def _build(cls: type[Any], values: Mapping[str, Any], where: str) -> Any:
    hints = get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown key (known: "
                          f"{', '.join(sorted(fields))})")  # fmt: skip
    kwargs = {k: _convert(v, hints[k], f"{where}.{k}") for k, v in values.items()}
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field missing (token entries)
        raise ConfigError(f"{where}: {exc}") from exc


def _convert(value: Any, hint: Any, where: str) -> Any:
    """Check `value` against the field's type: TOML already gives str/int/float/bool."""
    origin = get_origin(hint)
    if hint is bool:
        if type(value) is not bool:
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if hint is int:
        if type(value) is not int:
            raise ConfigError(f"{where}: expected a whole number, got {value!r}")
        return value
    if hint is float:
        if type(value) not in (int, float):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    if hint is Path:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a path string, got {value!r}")
        return Path(value)
    if origin is tuple:
        item = get_args(hint)[0]
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        return tuple(_convert(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a table like {{name = ..., role = ...}}")
        return _build(hint, value, where)
    if origin in (Union, types.UnionType):
        return value
    raise ConfigError(f"{where}: unsupported setting type {hint}")  # a programming error
