"""What an operator sees of the station besides its journal: log lines and metrics.

Why after the commit, in one call per batch: the journal is the record, so a log line
or a counter follows the row it is about and never tells of a row that is not on disk;
and the writer pays one call per batch, not a hook per event. Only the rows that matter
get a log line (notices, faults, suspensions, resumes, voids, refused events; round
results at DEBUG), never a plain card, so the writer is not slowed by its own log.

The metrics live in a registry of each station (not prometheus-client's global one),
so tests that run several stations in one process do not collide. What the station
already counts elsewhere (the reader's frames, the webhooks' failures, the WebSocket
clients, the journal's size) is read when Prometheus scrapes, by `StationCollector`,
rather than counted twice on the hot path.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol
from wsgiref.simple_server import WSGIServer

import orjson
from prometheus_client import (
    CollectorRegistry,
    Counter,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    start_http_server,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from station.core.events import EVENT_TYPES
from station.core.verdicts import (
    BAD_INPUT,
    NO_ACTIVE_SHOE,
    NOT_SUSPENDED,
    SHOE_ACTIVE,
    SUSPENDED,
)
from station.core.words import EXPLANATIONS
from station.shared.rows import Row

__all__ = ["Observer", "StationCollector"]

#: The logger of the table's noteworthy rows (`journalctl -u baccarat-station`).
log = logging.getLogger("station.table")

#: Seconds from an event queued for the writer to its commit returning.
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
#: Seconds a suspension lasted (a supervisor walks over: tens of seconds to minutes).
SUSPENSION_BUCKETS = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
#: Notices that need someone: a warning (the rest are information).
WARNING_NOTICES = ("shoe command not sent",)
#: Notices that mean something was lost on the way out: an error.
ERROR_NOTICES = ("webhook gave up",)
#: Refusals that are someone's request out of turn (information); the others are the
#: cards' and the reader's troubles during a suspension (a warning).
REQUEST_REFUSALS = frozenset({NO_ACTIVE_SHOE, SHOE_ACTIVE, SUSPENDED, NOT_SUSPENDED, BAD_INPUT})
_KINDS = frozenset(EVENT_TYPES) | {"notice"}
_BARE = re.compile(r"[^\s\"'=]+")


class Queued(Protocol):
    """A writer's item: when it was put on the queue (`time.perf_counter`)."""

    queued: float


def words(fields: Mapping[str, Any], skip: tuple[str, ...] = ()) -> str:
    """`key=value ...` of the set fields, a value quoted only if it needs it."""
    parts = []
    for key, value in fields.items():
        if value is None or key in skip:
            continue
        text = value if isinstance(value, str) else orjson.dumps(value).decode()
        if not _BARE.fullmatch(text):
            text = orjson.dumps(text).decode()
        parts.append(f"{key}={text}")
    return " ".join(parts)


class Observer:
    """The station's log lines and metrics for committed rows; and its metrics listener."""

    def __init__(self, table_id: str, collector: Collector | None = None) -> None:
        self.table_id = table_id
        self.registry = CollectorRegistry()
        r = self.registry
        self.verdicts = Counter(
            "station_verdicts",
            "Events decided, by verdict: code is the error, or ok",
            ["code"],
            registry=r,
        )
        self.latency = Histogram(
            "station_verdict_latency_seconds",
            "From an event put on the writer's queue to its journal commit returning",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.suspensions = Counter(
            "station_suspensions", "Suspensions begun, by code", ["code"], registry=r
        )
        self.suspension_seconds = Histogram(
            "station_suspension_duration_seconds",
            "How long a suspension lasted, observed at the resume or void that ended it",
            buckets=SUSPENSION_BUCKETS,
            registry=r,
        )
        self.rows = Counter(
            "station_journal_rows",
            "Rows journaled, by kind: the event's type, or notice",
            ["kind"],
            registry=r,
        )
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        GCCollector(registry=r)
        if collector is not None:
            r.register(collector)
        self._verdict: dict[str, Any] = {}  # the counters' children, by label
        self._kind: dict[str, Any] = {}
        #: The suspension in progress: (its row, when it was committed), if this process
        #: saw it begin (one from before a restart has no known start: no duration).
        self._suspended: tuple[int, float] | None = None
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    # -- the writer's one call -----------------------------------------------------------

    def committed(
        self,
        items: Sequence[Queued],
        rows: Sequence[Row],
        changes: Sequence[tuple[int, str]],
        done: float,
    ) -> None:
        """A batch is on disk (`done`: `perf_counter()` when the commit returned): count
        it, and log its noteworthy rows in journal order. A bug here is logged, never
        the writer's failure (the rows are committed and published already)."""
        try:
            self._committed(items, rows, changes, done)
        except Exception:
            log.exception("rows %d to %d: not counted or logged", rows[0].seq, rows[-1].seq)

    def _committed(
        self,
        items: Sequence[Queued],
        rows: Sequence[Row],
        changes: Sequence[tuple[int, str]],
        done: float,
    ) -> None:
        observe = self.latency.observe
        for item in items:
            observe(done - item.queued)
        began = {i for i, what in changes if what == "suspended"}
        cleared = {i for i, what in changes if what == "resumed"}
        debug = log.isEnabledFor(logging.DEBUG)
        for i, row in enumerate(rows):
            verdict = row.verdict
            kind = str(row.event.get("type"))
            kind = kind if kind in _KINDS else "other"
            counter = self._kind.get(kind)
            if counter is None:
                counter = self._kind[kind] = self.rows.labels(kind)
            counter.inc()
            if verdict is None:
                self._notice(row)
                continue
            code = verdict["error"] or "ok"
            counter = self._verdict.get(code)
            if counter is None:
                counter = self._verdict[code] = self.verdicts.labels(code)
            counter.inc()
            if i in cleared:
                self._ended(row, kind, done)
            if i in began:
                self._began(row, code, done)
            elif kind == "fault":
                why = "" if code == "ok" else f" {self._why(code)}"  # ok: no shoe in play
                self._say(logging.WARNING, row, f"FAULT{why}", code=code)
            elif kind == "restart":  # mid-shoe and suspended already: said, not refused
                level = logging.INFO if code == "ok" else logging.WARNING
                why = "" if code == "ok" else f" {self._why(code)}"
                self._say(level, row, f"{self._acted(row, kind)}{why}", code=code)
            elif code != "ok" and i not in cleared:
                level = logging.INFO if code in REQUEST_REFUSALS else logging.WARNING
                self._say(level, row, f"{kind} REFUSED {self._why(code)}", code=code)
            elif kind in ("resume", "void") and i not in cleared:
                self._say(logging.INFO, row, self._acted(row, kind), code=code)
            if debug and verdict.get("result"):
                self._result(row, verdict["result"])

    # -- the log lines ---------------------------------------------------------------------

    @staticmethod
    def _why(code: str) -> str:
        explanation = EXPLANATIONS.get(code)
        return f"{code} ({explanation})" if explanation else code

    def _say(self, level: int, row: Row, text: str, **fields: Any) -> None:
        details = words(row.event, skip=("type", "message", "actor"))
        log.log(
            level,
            "%s row %d: %s%s",
            self.table_id,
            row.seq,
            text,
            f" {details}" if details else "",
            extra={
                "table": self.table_id,
                "seq": row.seq,
                "event": row.event.get("type"),
                "source": row.source,
                "actor": row.actor,
                **fields,
            },
        )

    @staticmethod
    def _acted(row: Row, kind: str) -> str:
        if kind == "restart":
            return "RESTART (the station started)"
        if kind == "void":
            voided = (row.verdict or {}).get("voided_round")
            return f"VOIDED round {voided} by {row.actor}" if voided else f"VOIDED by {row.actor}"
        return f"RESUMED by {row.actor}"

    def _began(self, row: Row, code: str, now: float) -> None:
        self.suspensions.labels(code).inc()
        self._suspended = (row.seq, now)
        self._say(logging.WARNING, row, f"SUSPENDED {self._why(code)}", code=code)

    def _ended(self, row: Row, kind: str, now: float) -> None:
        text = self._acted(row, kind)
        fields: dict[str, Any] = {"code": (row.verdict or {}).get("error") or "ok"}
        if self._suspended is not None:
            since, at = self._suspended
            seconds = now - at
            self.suspension_seconds.observe(seconds)
            text += f" (suspended {seconds:.1f} s, since row {since})"
            fields.update(suspended_seconds=round(seconds, 3), since_seq=since)
        else:
            text += " (the suspension began before this process started)"
        self._suspended = None
        self._say(logging.INFO, row, text, **fields)

    def _notice(self, row: Row) -> None:
        message = str(row.event.get("message", ""))
        if message in ERROR_NOTICES:
            level = logging.ERROR
        elif message in WARNING_NOTICES or "error" in row.event or "not applied" in message:
            level = logging.WARNING  # e.g. the reader's port cannot be opened
        else:
            level = logging.INFO
        self._say(level, row, f"{row.source} {row.actor}: {message}", notice=message)

    def _result(self, row: Row, result: Mapping[str, Any]) -> None:
        if "tableau1_outcome" in result:  # baccarat banque: each tableau against the banker
            log.debug(
                "%s row %d: round %s, tableau 1 %s %s (%s), tableau 2 %s %s (%s), banker %s (%s)"
                "; naturals: %s (a natural beats a drawn hand of the same points)",
                self.table_id,
                row.seq,
                result.get("round"),
                str(result.get("tableau1_outcome", "")).upper(),
                result.get("tableau1_total"),
                " ".join(result.get("tableau1", ())),
                str(result.get("tableau2_outcome", "")).upper(),
                result.get("tableau2_total"),
                " ".join(result.get("tableau2", ())),
                result.get("banker_total"),
                " ".join(result.get("banker", ())),
                ", ".join(result.get("naturals", ())) or "none",
                extra={"table": self.table_id, "seq": row.seq, "round": result.get("round")},
            )
            return
        log.debug(
            "%s row %d: round %s %s, player %s (%s) banker %s (%s)",
            self.table_id,
            row.seq,
            result.get("round"),
            str(result.get("winner", "")).upper(),
            result.get("player_total"),
            " ".join(result.get("player", ())),
            result.get("banker_total"),
            " ".join(result.get("banker", ())),
            extra={
                "table": self.table_id,
                "seq": row.seq,
                "round": result.get("round"),
                "winner": result.get("winner"),
            },
        )

    # -- the metrics listener ------------------------------------------------------------

    def serve(self, address: tuple[str, int] | None) -> None:
        """Serve the metrics at `address` without a token (`[api] metrics_bind`)."""
        if address is None:
            return
        host, port = address
        try:
            self._server, self._thread = start_http_server(port, host, registry=self.registry)
        except OSError as exc:
            raise OSError(
                f"[api] metrics_bind {host}:{port}: cannot listen there ({exc.strerror}); "
                "choose another port, or leave metrics_bind empty for GET /metrics"
            ) from exc
        log.info("metrics at http://%s:%d/metrics (no token)", host, self.port or port)

    @property
    def port(self) -> int | None:
        """The metrics listener's port (port 0 in the config: the one the system chose)."""
        return None if self._server is None else int(self._server.server_address[1])

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None


class StationCollector(Collector):
    """What others already count, read at scrape time: the reader's `status()`, the
    WebSocket clients, the webhooks' failures, the journal's size on disk."""

    def __init__(
        self,
        reader_status: Callable[[], Mapping[str, Any]] | None,
        clients: Callable[[], int],
        webhook_failures: Callable[[], tuple[int, int]],
        journal_path: Path,
    ) -> None:
        self.reader_status = reader_status
        self.clients = clients
        self.webhook_failures = webhook_failures
        self.journal_path = journal_path

    def collect(self) -> Iterator[Metric]:
        yield from self._reader()
        yield GaugeMetricFamily(
            "station_websocket_clients", "WebSocket clients of /api/live now", self.clients()
        )
        failed, given_up = self.webhook_failures()
        yield CounterMetricFamily(
            "station_webhook_attempts_failed", "Webhook POSTs that failed (retried)", failed
        )
        yield CounterMetricFamily(
            "station_webhooks_given_up", "Webhook notices given up after every attempt", given_up
        )
        size = 0
        for path in (self.journal_path, Path(f"{self.journal_path}-wal")):
            with contextlib.suppress(OSError):  # no WAL yet, or the journal not created
                size += os.stat(path).st_size
        yield GaugeMetricFamily(
            "station_journal_bytes", "The journal's size on disk: the database and its WAL", size
        )

    def _reader(self) -> Iterator[Metric]:
        if self.reader_status is None:
            return
        status = self.reader_status()
        driver = str(status.get("driver", "?"))
        counters = (
            ("frames", "station_reader_frames", "Frames the reader read (serial: card frames)"),
            ("unreadable", "station_reader_unreadable", "Cards the reader could not identify"),
            ("faults", "station_reader_faults", "Faults the reader reported"),
            ("reconnects", "station_reader_reconnects", "Times the reader reconnected"),
        )
        for key, name, help_text in counters:
            value = status.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                family = CounterMetricFamily(name, help_text, labels=["driver"])
                family.add_metric([driver], value)
                yield family
        gauge = GaugeMetricFamily(
            "station_reader_connected", "1 if the reader is connected", labels=["driver"]
        )
        gauge.add_metric([driver], 1.0 if status.get("connected") else 0.0)
        yield gauge

    def describe(self) -> Iterator[Metric]:
        return iter(())  # no fixed set: collected at each scrape, never at registration
