"""`[protection]`: the game-protection checks of the live station (issue 15)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field, ValidationInfo, field_validator

from station.core.protection import ALERT_CODES, DEFAULT_THRESHOLD, FALSE_ALARM_BUDGET
from station.shared.sections import Section


class ProtectionConfig(Section):
    """`[protection]`: repeated or pre-arranged shoes and weak shuffles (docs/protection.md).
    Alerts are journaled notices; they stop nothing unless `suspend_on`."""

    enabled: bool = Field(True, description="run the checks on every committed card")
    index: str = Field(
        "",
        description="the index of earlier shoes (SQLite), relative to the config file's "
        "folder; stations of a floor may share one file; empty: beside the journal "
        "(<journal path>.protection)",
    )
    false_alarm: float = Field(
        FALSE_ALARM_BUDGET,
        gt=0,
        le=0.01,
        description="the chance a fairly shuffled shoe raises SHOE_SEQUENCE, which sets "
        "the run length k from the history's size",
    )
    weak_below: float = Field(
        DEFAULT_THRESHOLD,
        gt=0,
        le=0.01,
        description="a shoe whose neighbour-pair probability under a fair shuffle is "
        "below this is a WEAK_SHUFFLE",
    )
    suspend_on: tuple[str, ...] = Field(
        (),
        strict=False,
        description=f"the alerts that also suspend the table, any of {', '.join(ALERT_CODES)}",
    )

    @field_validator("suspend_on")
    @classmethod
    def _codes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for code in value:
            if code not in ALERT_CODES:
                raise ValueError(f"must be among {', '.join(ALERT_CODES)}, got {code!r}")
        return value

    @field_validator("index")
    @classmethod
    def _index(cls, value: str, info: ValidationInfo) -> str:
        base = info.context.get("base") if isinstance(info.context, Mapping) else None
        if not value.strip() or base is None or Path(value).is_absolute():
            return value.strip()
        return os.path.normpath(Path(base) / value)

    def index_path(self, journal: Path) -> Path:
        """Where the index is: `index`, or beside the journal."""
        return Path(self.index) if self.index else journal.with_name(journal.name + ".protection")
