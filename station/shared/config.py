"""Config sections both programs read the same way: `[log]`, a `[[token]]` entry, a
HOST:PORT bind address, and paths relative to the config file's folder.

Each is a frozen pydantic model (`station.shared.sections.Section`: strict types, unknown keys
refused) whose fields carry their default and meaning; each program composes them into
its own config tree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field, ValidationInfo, field_validator

from station.shared.sections import ConfigError, Section

#: Lowest first (`station.shared.tokens.RANK`); `display` reads only the table display's data.
ROLES = ("display", "viewer", "dealer", "supervisor", "rig")
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")


def resolve(path: Path, info: ValidationInfo) -> Path:
    """`path` against the config file's folder (the validation context), if relative."""
    base = info.context.get("base") if isinstance(info.context, Mapping) else None
    if base is None or path.is_absolute():
        return path
    return Path(os.path.normpath(Path(base) / path))


def parse_bind(text: str) -> str:
    """`text` if it is HOST:PORT with a port from 0 to 65535 (ConfigError otherwise)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(
            f"expected HOST:PORT (e.g. 127.0.0.1:8000) with a port from 0 to 65535, got {text!r}"
        )
    return text


class TokenEntry(Section):
    """One API token, by hash only (see `station.shared.tokens`)."""

    name: str = Field(description="who holds it, e.g. game-server or alice")
    role: str = Field(description=f"one of {', '.join(ROLES)}")
    sha256: str = Field(
        description="the token's sha256, 64 lower-case hex digits (the output "
        "of `station token add`)"
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("role")
    @classmethod
    def _role(cls, value: str) -> str:
        if value not in ROLES:
            raise ValueError(f"must be one of {', '.join(ROLES)}, got {value!r}")
        return value

    @field_validator("sha256")
    @classmethod
    def _sha256(cls, value: str) -> str:
        if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise ValueError(
                "expected 64 lower-case hex digits (the output of `station token add`)"
            )
        return value


class LogConfig(Section):
    """`[log]`: how `station run` writes its log (stderr; journald under systemd)."""

    format: str = Field(
        "text",
        description='"text" (lines for a person) or "json" (one JSON object a line, '
        "for a log collector)",
    )
    level: str = Field(
        "info",
        description='the least level logged: "debug", "info", "warning" or "error" '
        "(`station run --log-level` wins)",
    )

    @field_validator("format")
    @classmethod
    def _format(cls, value: str) -> str:
        if value not in LOG_FORMATS:
            raise ValueError(f"must be one of {', '.join(LOG_FORMATS)}, got {value!r}")
        return value

    @field_validator("level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value not in LOG_LEVELS:
            raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}, got {value!r}")
        return value
