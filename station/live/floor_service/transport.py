"""What the floor service needs of the broker's layout: the subjects it reads and the
stream it reads from (the publisher's shared definitions, `station.live.floor`)."""

from __future__ import annotations

STREAM = "FLOOR"


def journal_filter(site: str) -> str:
    """Every table's journal rows of `site`."""
    return f"floor.{site}.*.journal"


def heartbeat_filter(site: str) -> str:
    """Every table's heartbeats of `site` (core NATS: not kept)."""
    return f"floor.{site}.*.heartbeat"


def table_of(subject: str) -> str:
    """The table a subject `floor.<site>.<table>.<kind>` names."""
    parts = subject.split(".")
    return parts[2] if len(parts) == 4 else subject


def stream_subjects() -> list[str]:
    return ["floor.*.*.journal"]
