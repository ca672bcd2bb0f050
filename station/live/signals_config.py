"""`[signals]` of the station's config: the game server's signed webhooks (each
`[[signals.webhook]]` with its secret, read at load and never shown), the deprecated plain
webhooks, and what the shoe is told on a suspension (`station.live.config` composes it
into the file)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import (
    Field,
    PrivateAttr,
    StrictStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from drivers.config import parse_bytes
from station.shared.broker_login import reads_secrets
from station.shared.config import resolve as _resolve
from station.shared.sections import Problem, Section, bounds

#: What a game server can hear of (`[[signals.webhook]] events`), in docs/game-server.md's order.
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
    def _read_secret(self, info: ValidationInfo) -> WebhookConfig:
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
            if not reads_secrets(info):  # a command that sends nothing (`station token`)
                return self
            if name not in os.environ:
                raise Problem("secret", f"the environment variable {name} is not set")
            key = os.environ[name].strip().encode()
            where = f"the environment variable {name}"
        else:
            assert self.secret_file is not None
            if not reads_secrets(info):
                return self
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
        if not self._key:
            raise RuntimeError("this config was loaded without its secrets: load it to send")
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
