"""The `[reader]` table of the station's configuration, validated once at start-up.

A typo in a port setting should stop the station with a message naming the key, not
show up at the table as a stream of unreadable cards, so `from_mapping` refuses unknown
keys and wrong types and says what is allowed. A sub-table named after a driver
(`[reader.sim]`, `[reader.camera]`) holds that driver's own settings; its factory checks
them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drivers.codecs import CodecError, make_codec
from drivers.framing import FRAMINGS

PARITIES = ("N", "E", "O", "M", "S")
BYTESIZES = (5, 6, 7, 8)
STOPBITS = (1, 1.5, 2)


class ConfigError(ValueError):
    """A `[reader]` setting is wrong; the message names the key and what is allowed."""


@dataclass(frozen=True)
class ReaderConfig:
    """Every `[reader]` key with its default. Byte-valued keys are already decoded."""

    driver: str = "serial"
    #: Any pyserial URL: a device, `socket://host:port`, `rfc2217://host:port`, `loop://`.
    url: str = "/dev/baccarat-shoe"
    baudrate: int = 9600
    bytesize: int = 8
    parity: str = "N"
    stopbits: float = 1
    xonxoff: bool = False
    rtscts: bool = False
    #: Lock the device (flock) so a second program cannot steal its bytes.
    exclusive: bool = True
    framing: str = "line"
    prefix: bytes = b""
    suffix: bytes = b""
    codec: str = "text"
    no_read: str = "NR"
    cut_card: str = "CUT"
    #: Longest payload in bytes; a longer line or frame is cut and reported unreadable.
    max_frame: int = 64
    #: Silence (seconds) after which a frame cut short, or noise, is reported.
    frame_timeout: float = 0.5
    #: Written to the shoe when the table suspends (shoes with a card stop); None: nothing.
    stop_command: bytes | None = None
    #: Reconnect backoff: first wait, doubled after each failed attempt up to the max.
    reconnect_min: float = 0.5
    reconnect_max: float = 10.0
    #: Settings of other drivers, from sub-tables: `{"sim": {...}}`.
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def line_settings(self) -> str:
        """`9600 8N1`: how people write serial settings."""
        stop = int(self.stopbits) if self.stopbits == int(self.stopbits) else self.stopbits
        return f"{self.baudrate} {self.bytesize}{self.parity}{stop}"

    def serial_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `serial.serial_for_url`."""
        return {
            "baudrate": self.baudrate,
            "bytesize": self.bytesize,
            "parity": self.parity,
            "stopbits": self.stopbits,
            "xonxoff": self.xonxoff,
            "rtscts": self.rtscts,
            "exclusive": self.exclusive,
        }


_BYTE_KEYS = ("prefix", "suffix", "stop_command")
_FIELDS = {f.name: f for f in dataclasses.fields(ReaderConfig) if f.name != "options"}


def parse_bytes(text: str) -> bytes:
    """Bytes written in a config file: `hex:1B 40`, or text with `\\xNN`, `\\r`, `\\n`, `\\t`
    and `\\\\` escapes (TOML's own `\\u0013` works too)."""
    if text.startswith("hex:"):
        digits = text[4:].replace(" ", "")
        try:
            return bytes.fromhex(digits)
        except ValueError:
            raise ValueError(f"{text!r} is not hex bytes (e.g. 'hex:13' or 'hex:1B 40')") from None
    try:
        raw = text.encode("latin-1")
    except UnicodeEncodeError:
        raise ValueError(f"{text!r} has characters that are not single bytes") from None
    try:
        return raw.decode("unicode_escape").encode("latin-1")
    except (UnicodeDecodeError, UnicodeEncodeError):
        escapes = "\\xNN, \\r, \\n, \\t"
        raise ValueError(f"{text!r} has a bad backslash escape (use {escapes})") from None


def from_mapping(mapping: Mapping[str, Any], table: str = "reader") -> ReaderConfig:
    """A validated `ReaderConfig` from the `[reader]` table of the configuration file."""
    from drivers import driver_names

    drivers = driver_names()
    values: dict[str, Any] = {}
    options: dict[str, Mapping[str, Any]] = {}
    for key, value in mapping.items():
        where = f"[{table}] {key}"
        if key in drivers and key != "serial" and isinstance(value, Mapping):
            options[key] = dict(value)
        elif key not in _FIELDS:
            allowed = ", ".join([*_FIELDS, *(f"[{table}.{d}]" for d in drivers if d != "serial")])
            raise ConfigError(f"{where}: unknown key; the keys are {allowed}")
        else:
            values[key] = _check(key, value, where)
    config = ReaderConfig(**values, options=options)
    _check_whole(config, table, drivers)
    return config


def _check(key: str, value: Any, where: str) -> Any:
    default = _FIELDS[key].default
    if key in _BYTE_KEYS:
        if value is None and key == "stop_command":
            return None
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string such as 'hex:13' or '\\x13'")
        try:
            decoded = parse_bytes(value)
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        return decoded if decoded or key != "stop_command" else None
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if isinstance(default, int) and key != "stopbits":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected a whole number, got {value!r}")
        return value
    if isinstance(default, float) or key == "stopbits":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {value!r}")
    return value


def _check_whole(config: ReaderConfig, table: str, drivers: tuple[str, ...]) -> None:
    def fail(key: str, message: str) -> ConfigError:
        return ConfigError(f"[{table}] {key}: {message}")

    def one_of(key: str, allowed: tuple[Any, ...]) -> None:
        value = getattr(config, key)
        if value not in allowed:
            choices = ", ".join(f"{a:g}" if isinstance(a, float) else str(a) for a in allowed)
            raise fail(key, f"{value!r} is not allowed; choose one of {choices}")

    one_of("driver", drivers)
    if config.baudrate < 1:
        raise fail("baudrate", f"must be positive, e.g. 9600; got {config.baudrate}")
    one_of("bytesize", BYTESIZES)
    one_of("parity", PARITIES)
    one_of("stopbits", STOPBITS)
    one_of("framing", FRAMINGS)
    if config.max_frame < 1:
        raise fail("max_frame", f"must be at least 1 byte, got {config.max_frame}")
    for key in ("frame_timeout", "reconnect_min"):
        if getattr(config, key) <= 0:
            raise fail(key, f"must be more than 0 seconds, got {getattr(config, key)}")
    if config.reconnect_max < config.reconnect_min:
        raise fail("reconnect_max", f"must be at least reconnect_min ({config.reconnect_min} s)")
    if config.framing == "line":
        for key in ("prefix", "suffix"):
            if any(b in getattr(config, key) for b in b"\r\n"):
                raise fail(key, "a line's prefix or suffix cannot hold CR or LF (they end lines)")
    if not config.url:
        raise fail("url", "give the port, e.g. /dev/baccarat-shoe or socket://host:port")
    try:
        codec = make_codec(config.codec)
    except CodecError as exc:
        raise fail("codec", str(exc)) from None
    for key in ("no_read", "cut_card"):
        token = getattr(config, key)
        if not token.strip():
            raise fail(key, "cannot be empty (an empty line would then be a read)")
        card = codec.decode(token)
        if card is not None:
            raise fail(key, f"{token!r} reads as {card} with codec {config.codec!r}; pick another")
    if config.no_read.strip() == config.cut_card.strip():
        raise fail("cut_card", f"must differ from no_read ({config.no_read!r})")
