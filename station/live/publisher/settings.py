"""`[floor]`: where this station publishes its journal (off by default).

A station with no `url` runs exactly as one without a floor: no publisher, no thread, no
connection. Secrets (a password or token) come from the environment (`"env:NAME"`) or a
NATS credentials file, never from the config itself, and are kept out of the model's
fields, so they are never printed, journaled or dumped with the config.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import Field

from station.shared.broker_login import BrokerLogin
from station.shared.messages import HEARTBEAT_INTERVAL, STREAM
from station.shared.sections import bounds
from station.shared.signing import SigningKey


class FloorConfig(BrokerLogin):
    """`[floor]`: the NATS broker this station publishes its journal rows and heartbeats
    to (see docs/floor-publishing.md)."""

    URL_REQUIRED: ClassVar[bool] = False

    url: str = Field(
        "",
        description="the floor broker, nats://HOST:PORT or tls://HOST:PORT (several, "
        "comma-separated, for a cluster); empty: no floor, the station runs without one",
    )
    site: str = Field(
        "site-1",
        description="this casino's name in the floor subjects floor.<site>.<table>.* "
        "(letters, digits, - and _)",
    )
    stream: str = Field(
        STREAM,
        description="the JetStream stream the floor keeps the rows in (its subjects must "
        "cover floor.<site>.<table>.journal; the floor service creates it)",
    )
    user: str = Field("", description="the station's broker user (with password)")
    heartbeat_interval: float = Field(
        HEARTBEAT_INTERVAL,
        ge=1,
        le=60,
        json_schema_extra=bounds("second"),
        description="seconds between two heartbeats (the floor shows a table offline "
        "after three missed)",
    )
    timeout: float = Field(
        5.0,
        gt=0,
        le=60,
        json_schema_extra=bounds("second"),
        description="seconds the broker has to acknowledge a row before the publisher "
        "asks the stream what it holds and tries again",
    )

    @property
    def enabled(self) -> bool:
        return bool(self.url)


class KeySection(Protocol):
    """What names the station's key: its `[journal]` section."""

    @property
    def signing_key(self) -> Path | None: ...

    @property
    def signing_key_credential(self) -> str: ...


@dataclass(frozen=True, slots=True)
class KeyFile:
    """Where the station's signing key is, for the publisher's process to read it itself
    (a key never crosses a process boundary): `[journal] signing_key` and the systemd
    credential that holds it under the installed unit (`signing_key_credential`), read as
    the station reads them (`JournalConfig.load_key`): the credential if systemd handed it
    over (`$CREDENTIALS_DIRECTORY`, which the publisher inherits), else the file."""

    path: Path | None
    credential: str = ""

    @classmethod
    def of(cls, journal: KeySection) -> KeyFile:
        """From the station's `[journal]` section (its `signing_key` and
        `signing_key_credential`)."""
        return cls(journal.signing_key, journal.signing_key_credential)

    def to_dict(self) -> dict[str, str | None]:
        return {
            "path": None if self.path is None else str(self.path),
            "credential": self.credential,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KeyFile:
        path = data.get("path")
        return cls(None if path is None else Path(path), str(data.get("credential", "")))

    def load(self, environ: Mapping[str, str] = os.environ) -> SigningKey | None:
        """The key (None: the station has none); SigningError says why it cannot be read."""
        if self.path is None:
            return None
        return SigningKey.load_handed_over(self.path, self.credential, environ)
