"""The floor's view of its tables: each table's state replayed from its archived rows by
the station's own core, and whether it is online (its heartbeats).

Why replay rather than trust a summary: the journal is the record, so the floor shows
what the archived rows say (game, shoe, round, suspended and why, the shoe's results),
decided by the same `Table` that decided them at the table. The heartbeats (core NATS,
not kept) say only what a row cannot: that the station is alive now, how far its journal
is ahead of the archive (rows behind) and where its own dashboard is.

At start each table is replayed from its latest shoe only (`Archive.tips`: a shoe resets
all the board shows but the shoe count), so the start does not grow with the archive.
Where a supervisor let a table go on past a gap or a broken chain, the rows before it are
missing or of another journal: the floor cannot know the table's state (a replay without
them would show false suspensions), so it shows none, says why, and starts the table
afresh at its next shoe (the station's heartbeat still says whether it is suspended).

The board lives in the service's event loop: the consumer hands it each commit's result
after the commit (`committed`), the heartbeat subscription each heartbeat, and the API
reads `tables()`. A table is offline once `offline_after` seconds pass without a
heartbeat (15 s by default; the clock is injectable for tests).

One table, one line: when two stations claim a table, the second one's publisher is
refused (the stream holds the first one's rows), but both send heartbeats. The line
takes only the heartbeats of the station whose journal the floor holds: a heartbeat whose
publisher says `refused`, or that names an archived row by another hash (while its
publisher has not yet checked its journal against the stream), is not the table's; it is
counted on the table's conflict alert instead (`Refused`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from station.core.snapshot import TableSnapshot, take
from station.core.table import Table
from station.core.words import EXPLANATIONS
from station.floor.alerts import Alert
from station.floor.archive import Archive, Committed
from station.floor.arrival import FloorRow
from station.floor.config import FloorServiceConfig
from station.floor.decisions import Decision
from station.floor.said import Said
from station.floor.tip import Tip
from station.floor.witness import Witness
from station.shared.messages import Alert as StationAlert
from station.shared.messages import Heartbeat
from station.shared.rows import CREATED

log = logging.getLogger("station.floor")

#: Longest dashboard URL the floor keeps from a heartbeat.
FIELD_TEXT = 300
#: Longest words of a journal that cannot be written it keeps (a station's are a few
#: hundred characters: a deleted journal's gives the command that restores it).
JOURNAL_TEXT = 1000
#: The code shown as a table's suspension while its station cannot write its journal (it
#: refuses every event: the table cannot be dealt at). Not a rules code: no row has it.
JOURNAL_UNWRITABLE = "JOURNAL_UNWRITABLE"
#: What a station said on its alert subject, kept per table (the latest).
STATION_ALERTS_KEPT = 5
#: The code of a station's alert when two journals claim its table (the publisher's).
CONFLICT = "conflict"
#: The publisher's state once it has found its journal's last row in the stream: its
#: journal is the one the stream (and so the archive) follows.
PUBLISHING = "publishing"
#: The publisher's state when the stream holds another journal's rows of its table.
REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Beat:
    """The last heartbeat of a table: when it came (the board's clock) and what it said."""

    received: float
    heartbeat: Heartbeat
    dashboard: str | None


@dataclass(slots=True)
class Refused:
    """The heartbeats of a table that were not its station's (another journal claims the
    table): how many, why the floor refused them, and the last one."""

    why: str
    heartbeat: Heartbeat
    count: int = 0
    #: Why, language-free: "publisher" (its publisher is refused) or "journal" (its
    #: journal is not the archived one).
    code: str = "journal"


class TableView:
    """One table as the archive has it: its `Table` replayed row by row."""

    def __init__(self, table_id: str) -> None:
        self.id = table_id
        self.seq = 0
        #: The hash of row `seq` (None: not known, e.g. before the first row).
        self.hash: str | None = None
        #: Why the table's state is not known (rows accepted as missing, a new chain)
        #: until its next shoe starts it afresh; None: replayed from every row.
        self.unsure: Said | None = None
        self.settings: dict[str, Any] | None = None
        self.table: Table | None = None
        self.suspended_since: int | None = None
        #: Why the floor cannot follow this table's state (its rows are archived anyway).
        self.problem: Said | None = None
        self._snapshot: TableSnapshot | None = None

    def load(self, archive: Archive, tip: Tip) -> None:
        """At start: the table as its rows from its latest shoe on leave it (the settings
        from its journal's first row), its shoes counted by the tip."""
        first = tip.replay_from
        created = tip.created_seq
        if created is not None and created < first:
            settings = archive.row(self.id, created)
            if settings is not None:
                self.apply(settings)
        start = archive.row(self.id, first)
        if start is not None:
            self.seq, self.hash = first - 1, start.prev_hash  # what the archive vouched for
        for row in archive.rows(self.id, after=first - 1):
            self.apply(row)
        if self.table is not None:
            self.table.shoes_started += tip.shoes_before

    def apply(self, row: FloorRow) -> None:
        """The next archived row of this table (in order: the archive vouches for it)."""
        if self.seq and (row.seq != self.seq + 1 or row.prev_hash != self.hash):
            self._jumped(row)
        self.seq, self.hash = row.seq, row.hash
        event = orjson.loads(row.event)
        if row.kind == "notice":
            if event.get("message") == CREATED and isinstance(event.get("table"), dict):
                self._start(event["table"])
            return
        if self.table is None:
            return
        if self.unsure is not None:
            if event.get("type") != "shoe" or not _ok(row.verdict):
                return  # not known until the next shoe: no state guessed without the rows
            self._afresh()
        decided = self.table.decide(event)
        verdict = dict(decided.verdict)
        if (
            self.problem is None
            and self.unsure is None
            and row.verdict is not None
            and orjson.loads(row.verdict) != verdict
        ):
            words = (
                f"row {row.seq}: the floor's rules decide {orjson.dumps(verdict).decode()} but "
                f"the station decided {row.verdict}: the station and the floor service run "
                "different versions (the rows are archived as the station sent them); "
                "upgrade the older one"
            )
            self.problem = Said("problem_rules", words, {"seq": row.seq})
            log.warning("table %s: %s", self.id, words)
        if decided.began:
            self.suspended_since = row.seq
        elif decided.cleared:
            self.suspended_since = None

    def _jumped(self, row: FloorRow) -> None:
        """A row a supervisor let the archive take without its chain: after a gap
        accepted as missing, the first of a new chain, or of a new epoch (a restored
        journal: its rows number again from the backup's end)."""
        figures: dict[str, Any] = {"seq": row.seq}
        if row.seq <= self.seq:
            code, what = (
                "unsure_epoch",
                f"a new epoch accepted from row {row.seq} (a restored journal)",
            )
        elif row.seq == self.seq + 2:
            code, what = "unsure_row", f"row {self.seq + 1} accepted as missing"
            figures = {"missing": self.seq + 1}
        elif row.seq != self.seq + 1:
            code, what = "unsure_rows", f"rows {self.seq + 1}-{row.seq - 1} accepted as missing"
            figures = {"from": self.seq + 1, "to": row.seq - 1}
        else:
            code, what = "unsure_chain", f"a new chain accepted from row {row.seq}"
        words = (
            f"{what}: the table's state is not known without the rows before it; it shows "
            "again from the table's next shoe"
        )
        self.unsure = Said(code, words, figures)
        log.warning("table %s: %s", self.id, words)

    def _afresh(self) -> None:
        """A shoe the station accepted after rows the floor lacks: the table starts afresh
        (a shoe resets all the floor shows but the shoe count, which goes on)."""
        assert self.table is not None and self.settings is not None
        shoes = self.table.shoes_started
        self._start(self.settings)
        if self.table is not None:
            self.table.shoes_started = shoes
        self.suspended_since = None
        self.unsure = None

    def _start(self, settings: dict[str, Any]) -> None:
        """A journal's first row: the table's settings, so the floor deals the same table."""
        self.settings = settings
        try:
            self.table = Table(**{k: v for k, v in settings.items() if k != "id"})
            self.problem = None
        except (TypeError, ValueError) as exc:
            self.table = None
            words = (
                f"this station's table settings {settings} are not known here ({exc}): its "
                "rows are archived, but the floor cannot show its state; upgrade the floor "
                "service"
            )
            self.problem = Said("problem_settings", words, {"detail": str(exc)})
            log.warning("table %s: %s", self.id, words)

    def snapshot(self) -> TableSnapshot | None:
        """The table's snapshot after its last archived row (taken once per row)."""
        if self.table is None:
            return None
        if self._snapshot is None or self._snapshot.seq != self.seq:
            self._snapshot = take(
                self.table, self.seq, self.id, self.suspended_since, self._snapshot
            )
        return self._snapshot


def _refusal(view: TableView, beat: Heartbeat, archived: str | None) -> str | None:
    """Why `beat` is not the heartbeat of the table's station, or None if it is: its
    publisher was refused (the stream holds another journal's rows of the table), or,
    before its publisher has checked its journal against the stream, it names a row the
    archive holds by another hash."""
    if beat.floor == REFUSED:
        return (
            "its station's publisher is refused (the stream holds another journal's rows of "
            "this table): not this table's station"
        )
    if beat.floor == PUBLISHING or not 0 < beat.seq <= view.seq:
        return None  # vouched for, or ahead of the archive: nothing to check it against
    known = view.hash if beat.seq == view.seq else archived
    if known is None or known == beat.hash:
        return None
    return (
        "its station's journal is not the archived one (another hash at a row the archive "
        "holds): not this table's station"
    )


def _problem(said: Said | None) -> dict[str, Any]:
    """Why the floor cannot show the table's state, in English (`problem`) and as a code
    and figures the floor view says in its own words."""
    if said is None:
        return {"problem": None, "problem_code": None, "problem_params": {}}
    code = said.code if said.fits() else None  # figures its words do not take: its message
    return {"problem": said.message, "problem_code": code, "problem_params": dict(said.params)}


def _said(
    code: str, message: str, ts: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A station's alert as the table's line shows it (no heartbeat ignored yet)."""
    return {
        "code": code,
        "message": message,
        "params": dict(params or {}),
        "ts": ts,
        "heartbeats_ignored": 0,
        "ignored_seq": None,
    }


def _ok(verdict: str | None) -> bool:
    return verdict is not None and bool(orjson.loads(verdict).get("ok"))


def _short(value: object, longest: int = FIELD_TEXT) -> str | None:
    return value[:longest] if isinstance(value, str) and value else None


def _game(snap: TableSnapshot | None, settings: Mapping[str, Any]) -> str | None:
    """The table's game: its snapshot's, else its journal's settings' (a journal of
    before the cercle games is punto banco); None before its first row."""
    if snap is None and not settings:
        return None
    game = getattr(snap, "game", None) or settings.get("game", "punto_banco")
    return str(game)


def compact_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A round's result as the floor shows it: its number, the winner (null for a game
    without one winner, e.g. baccarat banque's two tableaux) and each hand's total."""
    totals = {
        k.removesuffix("_total"): v
        for k, v in result.items()
        if k.endswith("_total") and isinstance(v, int)
    }
    outcomes = {k.removesuffix("_outcome"): v for k, v in result.items() if k.endswith("_outcome")}
    compact = {"round": result.get("round"), "winner": result.get("winner"), "totals": totals}
    if outcomes:
        compact["outcomes"] = outcomes
    return compact


class Board:
    """Every table the floor knows: the config's, and any the broker brings."""

    def __init__(
        self,
        config: FloorServiceConfig,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.clock = clock
        self.views: dict[str, TableView] = {}
        self.heartbeats: dict[str, Beat] = {}
        self.station_alerts: dict[str, list[StationAlert]] = {}
        #: Per table: the heartbeats refused for its line (another journal's station).
        self.refused: dict[str, Refused] = {}
        self.held: dict[str, int] = {}
        #: Per table: rows not kept, its bound of held rows full (`[floor] held_rows`).
        self.dropped: dict[str, int] = {}
        self.alerts: list[Alert] = []
        #: Per table: its first row held behind a gap, and for a broken chain.
        self.waiting: dict[str, tuple[int | None, int | None]] = {}
        #: Each table's accepted gaps and chains (shown on its line), oldest first.
        self.decisions: dict[str, list[Decision]] = {}
        #: The broker as the consumer last found it, in words (shown on the floor view).
        self.broker = "not connected yet"
        self.broker_up = False
        self.configured = {t.id: t for t in config.table}
        #: Each table's key, and what came in its name unsigned (`witness`).
        settings = config.floor
        window = settings.offline_after + settings.heartbeat_skew
        self.witness = Witness(clock, wall, window, settings.heartbeat_skew)
        for table_id in self.configured:
            self.view(table_id)

    def view(self, table_id: str) -> TableView:
        found = self.views.get(table_id)
        if found is None:
            found = self.views[table_id] = TableView(table_id)
        return found

    def load(self, archive: Archive) -> None:
        """Each table from its latest shoe on (at start, before the consumer runs), once
        the config's keys are the archive's (`Witness.load`)."""
        self.witness.load(archive, self.configured)
        for table_id in archive.tables():
            view = self.view(table_id)
            tip = archive.tips.get(table_id)
            if tip is not None:
                view.load(archive, tip)
        self.held = archive.held_counts()
        self.dropped = archive.dropped_counts()
        self.waiting = archive.waiting()
        self.alerts = archive.alerts()
        for decision in archive.decisions():
            self._decided(decision)

    def committed(self, done: Committed) -> None:
        """A commit's result (or a supervisor's decision's): its rows to their tables,
        the held rows and alerts now."""
        for row in done.accepted:
            self.view(row.table).apply(row)
        self.held = done.held_counts
        self.dropped = done.dropped
        self.waiting = done.waiting
        self.alerts = done.alerts
        self.witness.committed(done)
        for alert in done.raised:
            self.view(alert.table)
        if done.decision is not None:
            self._decided(done.decision)

    def _decided(self, decision: Decision) -> None:
        if decision.kind != "acknowledge":
            self.decisions.setdefault(decision.table, []).append(decision)

    def checked_alerts(self, alerts: list[Alert]) -> None:
        """The archive's alert list after the floor-wide protection check raised some
        (unless a commit brought a newer list meanwhile)."""
        newest = max((a.id for a in self.alerts), default=0)
        if max((a.id for a in alerts), default=0) >= newest:
            self.alerts = alerts
        for alert in alerts:
            self.view(alert.table)

    def unchecked(self, beat: Heartbeat) -> bool:
        """Whether `beat` names a row before the table's last archived one while its
        publisher has not vouched for its journal: the service then reads the archive's
        hash of that row for `heartbeat` (the last row's the board knows itself)."""
        view = self.views.get(beat.table)
        return (
            view is not None and beat.floor not in (PUBLISHING, REFUSED) and 0 < beat.seq < view.seq
        )

    def heartbeat(
        self, beat: Heartbeat, dashboard: object = None, archived: str | None = None
    ) -> bool:
        """A station's heartbeat: it is online now, unless it is not the table's station
        (then counted on the table's conflict alert). `dashboard`: the URL of its own
        dashboard, if the heartbeat names one (else the config's). `archived`: the hash of
        the archive's row `beat.seq`, when `unchecked` asked for it. Returns whether the
        heartbeat is the table's. One its station did not sign, when the floor knows the
        table's key, changes nothing (`Witness.vouches`); a dashboard is shown only from
        a signed one, and a signed one counts only if it is newer than the last one
        believed and of now (`Witness.fresh`: not a replay)."""
        view = self.view(beat.table)
        signed = self.witness.vouches(beat.table, beat, "heartbeat")
        if signed is False or (signed and not self.witness.fresh(beat.table, beat)):
            return False
        why = _refusal(view, beat, archived)
        if why is not None and signed and beat.floor == REFUSED:
            # The table's own key says its journal is not the one the stream (and the
            # archive) holds: rolled back or cut without `journal restore` (a restore's
            # publisher goes on after the stream's rows), or a second station with its
            # key. Its rows never reach the floor, so the floor says it (issue 32).
            self.witness.diverged(beat.table, beat, view.seq)
        if why is not None:
            refused = self.refused.get(beat.table)
            if refused is None or refused.why != why:
                log.warning("table %s: a heartbeat ignored: %s", beat.table, why)
                code = "publisher" if beat.floor == REFUSED else "journal"
                refused = Refused(why, beat, refused.count if refused else 0, code)
                self.refused[beat.table] = refused
            refused.heartbeat = beat
            refused.count += 1
            return False
        url = _short(dashboard) if signed else None
        if url is not None and not url.startswith(("http://", "https://")):
            url = None
        if signed:
            self.witness.believe(beat.table, beat)
        self.heartbeats[beat.table] = Beat(self.clock(), beat, url)
        return True

    def station_alert(self, table_id: str, alert: StationAlert) -> bool:
        """What a station said the floor must see (kept in memory: the latest few), if its
        station signed it (`Witness.vouches`); returns whether it is kept."""
        if self.witness.vouches(table_id, alert, "alert") is False:
            return False
        self.view(table_id)
        kept = self.station_alerts.setdefault(table_id, [])
        kept.append(alert)
        del kept[:-STATION_ALERTS_KEPT]
        return True

    def online(self, table_id: str) -> bool:
        beat = self.heartbeats.get(table_id)
        return beat is not None and self.clock() - beat.received < self.config.floor.offline_after

    def tables(self) -> list[dict[str, Any]]:
        """Every table at a glance, the configured ones first (in the config's order)."""
        order = list(self.configured) + sorted(set(self.views) - set(self.configured))
        return [self.table(table_id) for table_id in order]

    def _decidable(self, table_id: str, seq: int) -> dict[str, Any]:
        """What a supervisor may accept on this table now: its gap (the rows missing
        before the first row held behind it) and the row held for a broken chain."""
        gap_at, chain_at = self.waiting.get(table_id, (None, None))
        gap = None
        if gap_at is not None and gap_at > seq + 1:
            gap = {"from_seq": seq + 1, "to_seq": gap_at - 1}
        return {"gap": gap, "broken_chain": chain_at if chain_at == seq + 1 else None}

    def table(self, table_id: str) -> dict[str, Any]:
        view = self.view(table_id)
        configured = self.configured.get(table_id)
        beat = self.heartbeats.get(table_id)
        now = self.clock()
        snap = None if view.unsure else view.snapshot()
        shoes = view.table.shoes_started if view.unsure and view.table else None
        settings = view.settings or {}
        dashboard = (configured.dashboard if configured else "") or (beat and beat.dashboard)
        online = beat is not None and now - beat.received < self.config.floor.offline_after
        station_seq = beat.heartbeat.seq if beat is not None else None
        suspension = None
        if snap is not None and snap.suspension is not None:
            s = snap.suspension
            suspension = {
                "code": s["code"],
                "explanation": s["explanation"],
                "since_seq": s["since_seq"],
                "source": "archive",
            }
        elif (
            beat is not None
            and online
            and beat.heartbeat.suspended
            and (beat.heartbeat.seq > view.seq or view.unsure)
        ):
            # The station is ahead of the archive (or the floor cannot know the table's
            # state): its heartbeat says it is suspended now.
            code = beat.heartbeat.code or "suspended"
            suspension = {
                "code": code,
                "explanation": EXPLANATIONS.get(code, code),
                "since_seq": None,
                "source": "heartbeat",
            }
        journal = _short(beat.heartbeat.journal, JOURNAL_TEXT) if beat and online else None
        if journal is not None:  # the station refuses every event: the first thing to know
            suspension = {
                "code": JOURNAL_UNWRITABLE,
                "explanation": journal,
                "since_seq": None,
                "source": "heartbeat",
            }
        results = []
        shown = self.config.floor.results_shown
        if snap is not None and shown:
            results = [compact_result(r) for r in snap.results[-shown:]]
        return {
            "id": table_id,
            "name": (configured.name if configured else "") or table_id,
            "dashboard": dashboard or None,
            "online": online,
            "silent_for": None if beat is None else round(now - beat.received, 1),
            "game": _game(snap, settings),
            "decks": settings.get("decks"),
            "shoe": snap.shoes_started if snap is not None else shoes,
            "in_play": snap.in_play if snap is not None else False,
            "round": (snap.round or {}).get("number") if snap is not None else None,
            "rounds": snap.rounds_complete if snap is not None else 0,
            "expecting": snap.expecting if snap is not None else None,
            # The same as codes, for the floor view to say in its reader's language.
            "due": snap.due if snap is not None else None,
            "burns_due": snap.burns_due if snap is not None else None,
            "option": snap.option if snap is not None else None,
            "suspended": suspension is not None,
            "suspension": suspension,
            # Why the station's journal cannot be written now, as its heartbeat says (null:
            # it can, or the station is offline or too old to say).
            "journal_down": journal,
            "results": results,
            "archived_seq": view.seq,
            "station_seq": station_seq,
            "rows_behind": None if station_seq is None else max(0, station_seq - view.seq),
            "held": self.held.get(table_id, 0),
            "dropped": self.dropped.get(table_id, 0),
            **self._decidable(table_id, view.seq),
            "alerts": [a.to_api() for a in self.alerts if a.table == table_id and not a.resolved],
            **_problem(view.problem or view.unsure),
            "state_known": view.unsure is None,
            "accepted": [d.to_api() for d in self.decisions.get(table_id, [])],
            "publisher": beat.heartbeat.floor if beat is not None else None,
            "station_alerts": self._station_alerts(table_id),
            **self.witness.table(table_id, self.decisions.get(table_id, [])),
        }

    def _station_alerts(self, table_id: str) -> list[dict[str, Any]]:
        """What the table's stations said, the heartbeats refused for its line counted on
        its latest conflict alert (one made from them if no station said so: the alert
        is not kept by the broker, a floor started later has not heard it)."""
        said = [
            _said(a.code, a.message, a.ts, a.params) for a in self.station_alerts.get(table_id, [])
        ]
        refused = self.refused.get(table_id)
        if refused is None:
            return said
        conflict = next((a for a in reversed(said) if a["code"] == CONFLICT), None)
        if conflict is None:
            conflict = _said(CONFLICT, refused.why, refused.heartbeat.ts, {"why": refused.code})
            said.append(conflict)
        conflict["heartbeats_ignored"] = refused.count
        conflict["ignored_seq"] = refused.heartbeat.seq
        return said
