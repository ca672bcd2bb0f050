"""The `[reader]` table of the station's configuration: typed models, validated once.

A typo in a port setting should stop the station with a message naming the key, not
show up at the table as a stream of unreadable cards. Every key is a field of a frozen
pydantic model with its default, its bounds and its meaning (`description`) in one
place: `ReaderConfig` for `[reader]` (the serial settings and what every driver shares),
`CameraSettings` for `[reader.camera]` (`PassageSettings`, the passage detector's
thresholds, are keys of the same table) and `SimSettings` for `[reader.sim]`. Unknown
keys are refused, types are strict (no "8" for 8, no 1 for true), and `describe` turns
pydantic's errors into the project's messages: `[reader] baudrate: must be positive`.

Relative paths (a `table:FILE` codec, the camera model, a camera source that is a file)
are resolved against the folder given as the validation context `{"base": folder}`
(the config file's folder: `station.live.config.load` passes it); without it they stay
relative to the working directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import (
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from drivers.codecs import CodecError, make_codec
from drivers.cut_depth import DEFAULT_CUT_DEPTH, MIN_CUT_DEPTH
from drivers.framing import FRAMINGS
from station.shared.sections import (
    ConfigError,
    Problem,
    Section,
    bounds,
    describe,
    one_of,
)

PARITIES = ("N", "E", "O", "M", "S")
BYTESIZES = (5, 6, 7, 8)
STOPBITS = (1, 1.5, 2)
RECOGNISERS = ("rank-suit", "barcode")
#: The fastest baud rate a serial adapter offers; more is a typo.
MAX_BAUDRATE = 4_000_000
#: An hour: no wait, timeout or pace of the station is meant to be longer.
HOUR = 3600.0


def _resolve(path: str, info: ValidationInfo) -> str:
    """`path` against the config file's folder (the validation context), if relative."""
    base = (info.context or {}).get("base") if isinstance(info.context, Mapping) else None
    if base is None or not path or Path(path).is_absolute():
        return path
    return os.path.normpath(Path(base) / path)


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


def parse_roi(value: object, where: str) -> tuple[int, int, int, int] | None:
    """`[x, y, width, height]` in pixels, `"x,y,w,h"`, or empty/None for the whole frame."""
    if value is None or value == "" or value == [] or value == ():
        return None
    if isinstance(value, str):
        parts: list[object] = [p.strip() for p in value.split(",")]
        try:
            parts = [int(str(p)) for p in parts]
        except ValueError:
            parts = []
    elif isinstance(value, list | tuple):
        parts = list(value)
    else:
        parts = []
    if len(parts) != 4 or not all(isinstance(p, int) and not isinstance(p, bool) for p in parts):
        raise ConfigError(f"{where}: expected [x, y, width, height] in pixels, got {value!r}")
    x, y, w, h = (int(str(p)) for p in parts)
    if x < 0 or y < 0 or w < 16 or h < 16:
        raise ConfigError(
            f"{where}: x and y must be >= 0 and the size at least 16 x 16, got {value!r}"
        )
    return (x, y, w, h)


class PassageSettings(Section):
    """The card-passage detector's thresholds (`drivers.recognition.passage`), keys of
    `[reader.camera]`; found or checked by `station calibrate clip`."""

    level: int = Field(
        110,
        ge=0,
        le=255,
        json_schema_extra=bounds(say="expected"),
        description="darkest-channel level of card stock (0-255)",
    )
    presence: float = Field(
        0.03,
        ge=0,
        le=1,
        json_schema_extra=bounds(say="expected"),
        description="share of the region covered by card stock: a card is there",
    )
    motion: float = Field(
        0.004,
        ge=0,
        le=1,
        json_schema_extra=bounds(say="expected"),
        description="share of pixels changing by more than `change` in an empty view: "
        "`station calibrate clip` warns when the light flickers near it",
    )
    change: int = Field(
        24,
        ge=0,
        le=255,
        json_schema_extra=bounds(say="expected"),
        description="brightness change (0-255) that counts as a pixel moving",
    )
    rest_time: float = Field(
        0.03,
        ge=0,
        le=10,
        json_schema_extra=bounds("second", say="expected"),
        description="seconds the card must stay still before a reading",
    )
    rest_pixels: float = Field(
        3.0,
        ge=0,
        le=100,
        json_schema_extra=bounds(say="expected"),
        description="pixels the card may move on the cloth (the picture's shake taken "
        "out) and still be at rest",
    )
    read_frames: int = Field(
        3,
        ge=1,
        le=1000,
        json_schema_extra=bounds(say="expected"),
        description="tries at an unsure card before it is reported unreadable",
    )
    gone_frames: int = Field(
        2,
        ge=0,
        le=1000,
        json_schema_extra=bounds(say="expected"),
        description="frames without the card before the next one counts",
    )
    edge: float = Field(
        0.02,
        ge=0,
        le=1,
        json_schema_extra=bounds(say="expected"),
        description="share of the region's edge the card may touch",
    )


#: `[reader.camera]` keys that are gone, and what to write instead.
RETIRED_CAMERA_KEYS = {
    "stable_frames": "no longer a key: the rest is a time now; write rest_time = 0.03 "
    "(seconds the card must stay still) instead",
}

SOURCE_HINT = "a device index (0), a video file, an image pattern (frames/%04d.png) or a stream URL"


class CameraSettings(PassageSettings):
    """`[reader.camera]`: where the frames come from and how cards are read (and the
    passage detector's thresholds, inherited from `PassageSettings`)."""

    RETIRED_KEYS: ClassVar[dict[str, str]] = RETIRED_CAMERA_KEYS

    source: str = Field(
        description=f"{SOURCE_HINT}; a relative file is relative to the config file's folder",
        json_schema_extra={"required": SOURCE_HINT},
    )
    recogniser: str = Field(
        "rank-suit",
        description='"rank-suit" or "barcode" (printed codes, decoded by [reader] codec)',
    )
    model: str = Field(
        "",
        description="the rank-suit model, made by `station calibrate "
        "camera`; relative to the config file's folder",
    )
    roi: tuple[int, int, int, int] | None = Field(
        None,
        strict=False,
        description="x, y, width, height of the region of interest; leave out for the whole frame",
    )
    min_confidence: float | None = Field(
        None,
        ge=0,
        le=1,
        json_schema_extra=bounds(say="expected"),
        description="below it a card is unreadable (default: the model's own threshold)",
    )
    realtime: bool = Field(
        False,
        description="play a video file at its own frame rate (as a "
        "camera would) instead of at once",
    )

    @field_validator("source", mode="before")
    @classmethod
    def _source(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)  # source = 0: the first camera
        if isinstance(value, str) and not value.isdigit() and "://" not in value:
            return _resolve(value, info)  # a file or an image pattern
        return value

    @field_validator("model")
    @classmethod
    def _model(cls, value: str, info: ValidationInfo) -> str:
        return _resolve(value, info)

    @field_validator("roi", mode="before")
    @classmethod
    def _roi(cls, value: Any) -> Any:
        try:
            return parse_roi(value, "roi")
        except ConfigError as exc:
            raise ValueError(str(exc).removeprefix("roi: ")) from None

    @field_validator("recogniser")
    @classmethod
    def _recogniser(cls, value: str) -> str:
        return str(one_of(value, RECOGNISERS))

    @model_validator(mode="after")
    def _needs_a_model(self) -> CameraSettings:
        if not self.source:
            raise Problem("source", f"required: {SOURCE_HINT}")
        if self.recogniser == "rank-suit" and not self.model:
            raise Problem(
                "model",
                "required for the rank-suit recogniser; make one with "
                "`station calibrate camera --reference DIR --out MODEL`",
            )
        return self

    @property
    def passage(self) -> PassageSettings:
        """The passage detector's thresholds alone."""
        return PassageSettings(**{k: getattr(self, k) for k in PassageSettings.model_fields})


class SimSettings(Section):
    """`[reader.sim]`: the demo's pace and mishaps (seconds, and a chance per card)."""

    seed: int = Field(1, description="seed of the shuffles and the faults")
    card_interval: float = Field(
        1.0,
        ge=0,
        le=HOUR,
        json_schema_extra=bounds(say="expected"),
        description="seconds between cards",
    )
    betting_time: float = Field(
        4.0,
        ge=0,
        le=HOUR,
        json_schema_extra=bounds(say="expected"),
        description="seconds betting stays open before the bot closes it",
    )
    shuffle_time: float = Field(
        6.0,
        ge=0,
        le=HOUR,
        json_schema_extra=bounds(say="expected"),
        description="seconds between shoes",
    )
    fault_chance: float = Field(
        0.02,
        ge=0,
        le=1,
        json_schema_extra=bounds(say="expected"),
        description="chance per card of an unreadable card or a reader drop-out",
    )
    supervisor_after: float = Field(
        5.0,
        ge=0,
        le=HOUR,
        json_schema_extra=bounds(say="expected"),
        description="the demo supervisor resolves a suspension after this many seconds",
    )
    cut_depth: int = Field(
        DEFAULT_CUT_DEPTH,
        le=52 * 16,
        json_schema_extra=bounds(say="expected"),
        description="cards behind the cut card",
    )

    @field_validator("cut_depth")
    @classmethod
    def _cut_depth(cls, value: int) -> int:
        if value < MIN_CUT_DEPTH:
            raise ValueError(
                f"at least {MIN_CUT_DEPTH} cards must stay behind the cut card "
                f"(a round may follow it), got {value}"
            )
        return value


class ReaderConfig(Section):
    """`[reader]`: which driver reads the cards, and how the shoe talks (serial keys).
    Byte-valued keys are already decoded."""

    #: Sub-tables of `[reader]`: each is a driver's own settings.
    SUB_TABLES: ClassVar[tuple[str, ...]] = ("camera", "sim")

    driver: str = Field(
        "serial",
        description='"serial" (a shoe on a serial port), "camera" '
        '([reader.camera]) or "sim" (the demo\'s dealer '
        "bot, [reader.sim])",
    )
    url: str = Field(
        "/dev/baccarat-shoe",
        description="any pyserial URL: a device, socket://host:port, rfc2217://host:port, loop://",
    )
    baudrate: int = Field(9600, description=f"bits per second (1 to {MAX_BAUDRATE})")
    bytesize: int = Field(8, description="5, 6, 7 or 8")
    parity: str = Field("N", description="N, E, O, M or S")
    stopbits: float = Field(1, description="1, 1.5 or 2")
    xonxoff: bool = Field(False, description="software flow control")
    rtscts: bool = Field(False, description="hardware flow control")
    exclusive: bool = Field(
        True, description="lock the device (flock) so a second program cannot steal its bytes"
    )
    framing: str = Field(
        "line", description='"line" (one read per line) or "stx-etx" (STX payload ETX frames)'
    )
    prefix: bytes = Field(
        b"", description='bytes before each payload: text with \\xNN escapes, or "hex:02"'
    )
    suffix: bytes = Field(b"", description="bytes after each payload (as prefix)")
    codec: str = Field(
        "text",
        description='how payloads map to cards: "text", '
        '"suit-rank-4", "index52" or "table:FILE" (FILE '
        "relative to the config file's folder)",
    )
    no_read: str = Field("NR", description="what the shoe sends for a card it could not read")
    cut_card: str = Field("CUT", description="what the shoe sends for the cut card")
    decision_draw: str | None = Field(
        None,
        description="what the shoe sends when the hand whose option waits draws (its "
        '"card" button, e.g. "CARTE"), for chemin de fer and baccarat banque; none: '
        "decisions come only through the API",
    )
    decision_stand: str | None = Field(
        None,
        description='what the shoe sends when that hand stands (e.g. "NON"); set with '
        "decision_draw",
    )
    max_frame: int = Field(
        64,
        ge=1,
        le=4096,
        json_schema_extra=bounds("byte"),
        description="longest payload in bytes; a longer line or frame is "
        "cut and reported unreadable",
    )
    frame_timeout: float = Field(
        0.5,
        gt=0,
        le=60,
        json_schema_extra=bounds("second"),
        description="silence (s) after which a frame cut short, or noise, is reported",
    )
    stop_command: bytes | None = Field(
        None,
        description="written to the shoe when the table "
        "suspends (shoes with a card stop); "
        "[signals] stop_command wins",
    )
    reconnect_min: float = Field(
        0.5,
        gt=0,
        le=HOUR,
        json_schema_extra=bounds("second"),
        description="reconnect backoff (s): the first wait, doubled after each failed attempt",
    )
    reconnect_max: float = Field(
        10.0,
        gt=0,
        le=HOUR,
        json_schema_extra=bounds("second"),
        description="reconnect backoff (s): the longest wait",
    )
    camera: CameraSettings | None = Field(
        None, description="[reader.camera]: the camera driver's settings"
    )
    sim: SimSettings = Field(
        default_factory=SimSettings, description="[reader.sim]: the demo bot's settings"
    )

    @field_validator("driver")
    @classmethod
    def _driver(cls, value: str) -> str:
        from drivers import driver_names

        return str(one_of(value, driver_names()))

    @field_validator("baudrate")
    @classmethod
    def _baudrate(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"must be positive, e.g. 9600; got {value}")
        if value > MAX_BAUDRATE:
            raise ValueError(f"must be at most {MAX_BAUDRATE}, e.g. 9600; got {value}")
        return value

    @field_validator("bytesize")
    @classmethod
    def _bytesize(cls, value: int) -> int:
        return int(one_of(value, BYTESIZES))

    @field_validator("parity")
    @classmethod
    def _parity(cls, value: str) -> str:
        return str(one_of(value, PARITIES))

    @field_validator("stopbits")
    @classmethod
    def _stopbits(cls, value: float) -> float:
        return float(one_of(value, STOPBITS))

    @field_validator("framing")
    @classmethod
    def _framing(cls, value: str) -> str:
        return str(one_of(value, FRAMINGS))

    @field_validator("prefix", "suffix", "stop_command", mode="before")
    @classmethod
    def _bytes(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bytes) or (value is None and info.field_name == "stop_command"):
            return value
        if not isinstance(value, str):
            raise ValueError("expected a string such as 'hex:13' or '\\x13'")
        decoded = parse_bytes(value)
        return decoded if decoded or info.field_name != "stop_command" else None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value:
            raise ValueError("give the port, e.g. /dev/baccarat-shoe or socket://host:port")
        return value

    @field_validator("codec")
    @classmethod
    def _codec(cls, value: str, info: ValidationInfo) -> str:
        if value.startswith("table:"):
            value = "table:" + _resolve(value.removeprefix("table:"), info)
        try:
            make_codec(value)
        except CodecError as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ReaderConfig:
        if self.driver == "camera" and self.camera is None:
            raise Problem(
                "camera",
                "required: the camera driver reads its settings there (see config/example.toml)",
            )
        if self.reconnect_max < self.reconnect_min:
            raise Problem(
                "reconnect_max", f"must be at least reconnect_min ({self.reconnect_min} s)"
            )
        if self.framing == "line":
            for key in ("prefix", "suffix"):
                if any(b in getattr(self, key) for b in b"\r\n"):
                    raise Problem(
                        key, "a line's prefix or suffix cannot hold CR or LF (they end lines)"
                    )
        codec = make_codec(self.codec)
        for key in ("no_read", "cut_card"):
            token = getattr(self, key)
            if not token.strip():
                raise Problem(key, "cannot be empty (an empty line would then be a read)")
            card = codec.decode(token)
            if card is not None:
                raise Problem(
                    key, f"{token!r} reads as {card} with codec {self.codec!r}; pick another"
                )
        if self.no_read.strip() == self.cut_card.strip():
            raise Problem("cut_card", f"must differ from no_read ({self.no_read!r})")
        if (self.decision_draw is None) != (self.decision_stand is None):
            missing = "decision_stand" if self.decision_stand is None else "decision_draw"
            raise Problem(
                missing,
                "set decision_draw and decision_stand together (what the shoe sends for "
                '"card" and for "no card"), or neither',
            )
        taken = {"no_read": self.no_read.strip(), "cut_card": self.cut_card.strip()}
        for key in ("decision_draw", "decision_stand"):
            token = getattr(self, key)
            if token is None:
                continue
            if not token.strip():
                raise Problem(key, "cannot be empty (an empty line would then be a decision)")
            card = codec.decode(token.strip())
            if card is not None:
                raise Problem(
                    key, f"{token!r} reads as {card} with codec {self.codec!r}; pick another"
                )
            for other, value in taken.items():
                if token.strip() == value:
                    raise Problem(key, f"must differ from {other} ({value!r})")
            taken[key] = token.strip()
        return self

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


def from_mapping(mapping: Mapping[str, Any], base: Path | None = None) -> ReaderConfig:
    """A validated `ReaderConfig` from the `[reader]` table of a configuration file
    (relative paths against `base`, the file's folder); ConfigError names the key."""
    try:
        return ReaderConfig.model_validate(mapping, context={"base": base})
    except ValidationError as exc:
        raise ConfigError(describe(exc, ReaderConfig, ("reader",))) from None
