"""`[floor]`: where this station publishes its journal (off by default).

A station with no `url` runs exactly as one without a floor: no publisher, no thread, no
connection. Secrets (a password or token) come from the environment (`"env:NAME"`) or a
NATS credentials file, never from the config itself, and are kept out of the model's
fields, so they are never printed, journaled or dumped with the config.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from station.shared.broker_login import BrokerLogin
from station.shared.messages import HEARTBEAT_INTERVAL, STREAM
from station.shared.sections import bounds


class FloorConfig(BrokerLogin):
    """`[floor]`: the NATS broker this station publishes its journal rows and heartbeats
    to (see the README, "The floor: publishing")."""

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
