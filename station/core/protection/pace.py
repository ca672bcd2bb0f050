"""Game pace and dealer performance (issue 15, part 4), from the journal's rows.

Counted per shoe, per dealer and per table: rounds completed and voided, rounds per hour
(3600 / the mean round cycle: from the end of the round before, or the shoe's start, to
this round's result, suspensions included: the pace a player sees), seconds per round,
the time from bets closed to the result, suspensions by code and per 100 rounds, and the
time to resolve a suspension. The dealer of a round is the actor (the token's name) of
the `close_bets` that opened it ("(ungated)" on a table without betting gates); a
suspension counts for the dealer of the round in progress, else the last dealer of the
shoe. The rows are decided again by a `Table` (as the journal's replay does) to know
where suspensions begin and end; a row counts if its time is in [start, end).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from station.core.table import Table

UNGATED = "(ungated)"
NOBODY = "(none)"


def parse_ts(text: str) -> datetime:
    """A journal time (`2026-12-01T03:55:27.123456Z`) as an aware datetime."""
    return datetime.fromisoformat(text)


@dataclass(slots=True)
class Tally:
    """The figures of one group (a shoe, a dealer, a table)."""

    rounds: int = 0
    voided: int = 0
    cycles: list[float] = field(default_factory=list)  # seconds per completed round
    close_to_result: list[float] = field(default_factory=list)
    suspensions: dict[str, int] = field(default_factory=dict)
    resolve: list[float] = field(default_factory=list)  # seconds to clear a suspension

    def as_dict(self) -> dict[str, Any]:
        cycle = sum(self.cycles)
        suspended = sum(self.suspensions.values())
        return {
            "rounds": self.rounds,
            "voided_rounds": self.voided,
            "rounds_per_hour": round(3600 * len(self.cycles) / cycle, 1) if cycle > 0 else None,
            "seconds_per_round": _mean(self.cycles),
            "close_to_result_seconds": _mean(self.close_to_result),
            "close_to_result_median": _median(self.close_to_result),
            "suspensions": suspended,
            "suspensions_by_code": dict(sorted(self.suspensions.items())),
            "suspensions_per_100_rounds": round(100 * suspended / self.rounds, 2)
            if self.rounds
            else None,
            "suspensions_per_100_rounds_by_code": {
                code: round(100 * n / self.rounds, 2)
                for code, n in sorted(self.suspensions.items())
            }
            if self.rounds
            else {},
            "resolve_seconds": _mean(self.resolve),
            "resolve_seconds_max": round(max(self.resolve), 1) if self.resolve else None,
        }


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 1) if values else None


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


@dataclass(slots=True)
class _Shoe:
    number: int
    started: str
    tally: Tally = field(default_factory=Tally)
    dealers: set[str] = field(default_factory=set)


class Pace:
    """Feed every event row of a journal in order (`row`); read `report()`."""

    def __init__(
        self,
        table: Table,
        table_id: str,
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> None:
        self.table = table
        self.table_id = table_id
        self.start, self.end = start, end
        self.total = Tally()
        self.dealers: dict[str, Tally] = {}
        self.shoes: list[_Shoe] = []
        self._shoe: _Shoe | None = None
        self._cycle_from: datetime | None = None  # the last round's end, or the shoe's start
        self._closed_at: datetime | None = None
        self._round_dealer: str | None = None
        self._last_dealer: str | None = None
        self._suspended: tuple[datetime, str] | None = None  # since, dealer
        self.first: datetime | None = None
        self.last: datetime | None = None

    def _in_range(self, when: datetime) -> bool:
        return (self.start is None or when >= self.start) and (self.end is None or when < self.end)

    def _groups(self, dealer: str) -> list[Tally]:
        groups = [self.total, self.dealers.setdefault(dealer, Tally())]
        if self._shoe is not None:
            groups.append(self._shoe.tally)
            self._shoe.dealers.add(dealer)
        return groups

    def row(self, ts: str, actor: str, event: Mapping[str, Any]) -> None:
        """One event row (not a notice) with its time and actor."""
        when = parse_ts(ts)
        decision = self.table.decide(dict(event))
        verdict = decision.verdict
        counted = self._in_range(when)
        if counted:
            self.first = self.first or when
            self.last = when
        kind = event.get("type")
        if kind == "shoe" and verdict["ok"]:
            number = len(self.shoes) + 1
            self._shoe = _Shoe(number, ts)
            self.shoes.append(self._shoe)  # reported if something in range counted for it
            self._cycle_from, self._round_dealer, self._last_dealer = when, None, None
        if decision.cleared and self._suspended is not None:
            since, dealer = self._suspended
            self._suspended = None
            if counted:
                for tally in self._groups(dealer):
                    tally.resolve.append((when - since).total_seconds())
        if kind == "close_bets" and verdict["ok"] and verdict["round"] is not None:
            self._round_dealer = self._last_dealer = actor
            self._closed_at = when
        elif verdict["round"] is not None and self._round_dealer is None and not self.table.gated:
            self._round_dealer = self._last_dealer = UNGATED
        if decision.began:
            dealer = self._round_dealer or self._last_dealer or NOBODY
            self._suspended = (when, dealer)
            code = verdict["error"] or "?"
            if counted:
                for tally in self._groups(dealer):
                    tally.suspensions[code] = tally.suspensions.get(code, 0) + 1
        if verdict["result"] is not None:
            dealer = self._round_dealer or NOBODY
            if counted:
                for tally in self._groups(dealer):
                    tally.rounds += 1
                    if self._cycle_from is not None:
                        tally.cycles.append((when - self._cycle_from).total_seconds())
                    if self._closed_at is not None:
                        tally.close_to_result.append((when - self._closed_at).total_seconds())
            self._cycle_from, self._closed_at, self._round_dealer = when, None, None
        if verdict["voided_round"] is not None:
            dealer = self._round_dealer or self._last_dealer or NOBODY
            if counted:
                for tally in self._groups(dealer):
                    tally.voided += 1
            self._cycle_from, self._closed_at, self._round_dealer = when, None, None

    def report(self) -> dict[str, Any]:
        """Everything counted, as JSON-ready data (what `station report --format json` prints)."""
        shoes = [
            {
                "shoe": s.number,
                "started": s.started,
                "dealers": sorted(s.dealers),
                **s.tally.as_dict(),
            }
            for s in self.shoes
            if s.tally.rounds or s.tally.voided or s.tally.suspensions
        ]
        return {
            "table": self.table_id,
            "from": _stamp(self.start),
            "to": _stamp(self.end),
            "first_row": _stamp(self.first),
            "last_row": _stamp(self.last),
            "totals": self.total.as_dict(),
            "dealers": {name: t.as_dict() for name, t in sorted(self.dealers.items())},
            "shoes": shoes,
        }


def _stamp(moment: datetime | None) -> str | None:
    """A time as the journal writes its rows' (UTC, microseconds, `Z`), so the report's
    times and the rows' read alike."""
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
