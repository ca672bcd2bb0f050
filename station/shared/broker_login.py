"""How to reach and log in to the floor broker: the keys a station's `[floor]` and the
floor service's `[broker]` share.

Secrets (a password or token) come from the environment (`"env:NAME"`) or a NATS
credentials file, never from the config itself, and are kept out of the model's fields,
so they are never printed, journaled or dumped with the config. They are read only for
the commands that connect: a config loaded with the validation context `secrets=False`
(`station token`, `station journal`, `station key`) checks how they are given, not the
environment.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from station.shared.messages import STREAM, check_token
from station.shared.sections import Problem, Section

URL_SCHEMES = ("nats://", "tls://")


def _resolve(path: Path | None, info: ValidationInfo) -> Path | None:
    """`path` against the config file's folder (the validation context), if relative."""
    base = info.context.get("base") if isinstance(info.context, Mapping) else None
    if path is None or base is None or path.is_absolute():
        return path
    return Path(os.path.normpath(Path(base) / path))


def reads_secrets(info: ValidationInfo) -> bool:
    """Whether this validation reads secrets (the context's `secrets`, True by default)."""
    return not isinstance(info.context, Mapping) or info.context.get("secrets", True) is not False


def _from_env(key: str, value: str, read: bool = True) -> str:
    """The secret named by `value` ("env:NAME"), read from the environment (`read`: else
    only the form is checked, and "" returned)."""
    name = value.removeprefix("env:")
    if not value.startswith("env:") or not name:
        raise Problem(
            key,
            f'write {key} = "env:NAME" (the {key} itself belongs in the environment, '
            "never in the config)",
        )
    if not read:
        return ""
    if name not in os.environ:
        raise Problem(key, f"the environment variable {name} is not set")
    return os.environ[name]


class BrokerLogin(Section):
    """How to reach and log in to the floor broker: the keys a station's `[floor]` and
    the floor service's `[broker]` share (each names its own `url` default and words)."""

    #: False: an empty `url` means no broker (a station without a floor).
    URL_REQUIRED: ClassVar[bool] = True

    url: str = Field(
        "",
        description="the floor broker, nats://HOST:PORT or tls://HOST:PORT (several, "
        "comma-separated, for a cluster)",
    )
    site: str = Field(
        "site-1",
        description="the site (casino floor) in the floor subjects floor.<site>.<table>.* "
        "(letters, digits, - and _)",
    )
    stream: str = Field(STREAM, description="the JetStream stream the floor keeps the rows in")
    user: str = Field("", description="the broker user (with password)")
    password: str = Field(
        "", description='"env:NAME": the password is the environment variable NAME'
    )
    token: str = Field("", description='"env:NAME": a broker token instead of user and password')
    creds_file: Path | None = Field(
        None,
        strict=False,
        description="a NATS credentials file (JWT and nkey seed) instead of a password; "
        "relative to the config file's folder",
    )
    ca_file: Path | None = Field(
        None,
        strict=False,
        description="tls:// only: the CA that signed the broker's certificate (default: "
        "the system's); relative to the config file's folder",
    )
    cert_file: Path | None = Field(
        None,
        strict=False,
        description="tls:// only: a client certificate, when the broker verifies clients "
        "(with key_file)",
    )
    key_file: Path | None = Field(
        None, strict=False, description="tls:// only: the client certificate's key"
    )
    _password: str = PrivateAttr("")
    _token: str = PrivateAttr("")
    _secrets_read: bool = PrivateAttr(True)

    @property
    def servers(self) -> list[str]:
        return [u.strip() for u in self.url.split(",") if u.strip()]

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value and not cls.URL_REQUIRED:
            return value
        for url in (u.strip() for u in value.split(",")):
            if not (url.startswith(URL_SCHEMES) and len(url) > len("tls://")):
                also = "" if cls.URL_REQUIRED else " (leave url empty for no floor)"
                raise ValueError(f"expected nats://HOST:PORT or tls://HOST:PORT, got {url!r}{also}")
        return value

    @field_validator("site", "stream")
    @classmethod
    def _subject_token(cls, value: str, info: ValidationInfo) -> str:
        return check_token(value, f"the {info.field_name}")

    @field_validator("creds_file", "ca_file", "cert_file", "key_file")
    @classmethod
    def _paths(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is not None and (not str(value).strip() or str(value) == "."):
            raise ValueError("must not be empty")
        return _resolve(value, info)

    @model_validator(mode="after")
    def _credentials(self, info: ValidationInfo) -> Self:
        ways = [bool(self.password or self.user), bool(self.token), self.creds_file is not None]
        if sum(ways) > 1:
            raise Problem("user", "give one way to log in: user and password, token, or creds_file")
        if bool(self.user) != bool(self.password):
            raise Problem("password" if self.user else "user", "give user and password together")
        if (self.cert_file is None) != (self.key_file is None):
            raise Problem("cert_file", "give cert_file and key_file together")
        read = self._secrets_read = reads_secrets(info)
        if self.password:
            self._password = _from_env("password", self.password, read)
        if self.token:
            self._token = _from_env("token", self.token, read)
        if self.creds_file is not None and not self.creds_file.is_file():
            raise Problem("creds_file", f"cannot read {self.creds_file}: no such file")
        return self

    @property
    def secret_password(self) -> str:
        return self._password

    @property
    def secret_token(self) -> str:
        return self._token

    def connect_options(self) -> dict[str, Any]:
        """What `nats.connect` needs to log in (and TLS for tls:// URLs)."""
        if not self._secrets_read:
            raise RuntimeError("this config was loaded without its secrets: load it to connect")
        options: dict[str, Any] = {}
        if self.user:
            options.update(user=self.user, password=self._password)
        elif self.token:
            options["token"] = self._token
        elif self.creds_file is not None:
            options["user_credentials"] = str(self.creds_file)
        if any(u.startswith("tls://") for u in self.servers):
            ca = None if self.ca_file is None else str(self.ca_file)
            ctx = ssl.create_default_context(cafile=ca)
            if self.cert_file is not None and self.key_file is not None:
                ctx.load_cert_chain(str(self.cert_file), str(self.key_file))
            options["tls"] = ctx
        return options
