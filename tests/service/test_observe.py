"""What an operator sees besides the journal: the metrics (`/metrics`, or a listener of
their own) and the process log's lines for the rows that matter (caplog here; real
`station run` processes in test_observe_run.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.sync.client import connect

from drivers import create_reader
from drivers.config import from_mapping
from station.live.config import SignalsConfig
from tests.netkit import free_port
from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server

#: A gated round with an unreadable card in it, resumed by a supervisor with the card.
ROUND = [
    ({"type": "shoe"}, "dealer"),
    ({"type": "card", "card": "2H"}, "rig"),  # the burn: its reveal and two cards
    ({"type": "card", "card": "KS"}, "rig"),
    ({"type": "card", "card": "QD"}, "rig"),
    ({"type": "close_bets"}, "dealer"),
    ({"type": "card", "card": "9S"}, "rig"),
    ({"type": "card", "card": None, "raw": "4e52"}, "rig"),  # UNREADABLE_CARD: suspends
    ({"type": "resume", "card": "2D"}, "supervisor"),
    ({"type": "card", "card": "KH"}, "rig"),
    ({"type": "card", "card": "5C"}, "rig"),  # the round's result
]

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(text: str) -> Samples:
    """Every sample of a Prometheus text page, by (name, sorted labels)."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def metrics(live: Running, role: str = "viewer") -> Samples:
    r = httpx.get(f"{live.url}/metrics", headers=live.headers(role))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return scrape(r.text)


def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def table_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "station.table"]


def test_metrics_count_a_round_with_an_error_and_a_resume(
    live: Running, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="station.table")
    answers = [live.post(event, role).json() for event, role in ROUND]
    unreadable, resumed, last = answers[6], answers[7], answers[9]
    assert unreadable["error"] == "UNREADABLE_CARD" and resumed["ok"] and last["result"]
    with connect(f"{live.ws_url}?after=0&token={live.tokens['viewer']}") as ws:
        ws.recv(timeout=10)  # hello: the station counts this client now
        m = metrics(live)
        assert m[("station_websocket_clients", ())] == 1
    assert m[("station_verdicts_total", (("code", "UNREADABLE_CARD"),))] == 1
    assert m[("station_verdicts_total", (("code", "ok"),))] == 10  # restart and 9 of ROUND
    assert m[("station_suspensions_total", (("code", "UNREADABLE_CARD"),))] == 1
    assert m[("station_suspension_duration_seconds_count", ())] == 1
    assert 0 < m[("station_suspension_duration_seconds_sum", ())] < 60
    assert m[("station_verdict_latency_seconds_count", ())] == 11
    assert m[("station_verdict_latency_seconds_bucket", (("le", "+Inf"),))] == 11
    assert m[("station_journal_rows_total", (("kind", "card"),))] == 7
    assert m[("station_journal_rows_total", (("kind", "resume"),))] == 1
    assert m[("station_journal_rows_total", (("kind", "restart"),))] == 1
    journal = live.station.config.journal.path
    assert m[("station_journal_bytes", ())] >= journal.stat().st_size > 0
    assert m[("station_webhook_attempts_failed_total", ())] == 0
    assert m[("station_webhooks_given_up_total", ())] == 0
    assert ("station_reader_frames_total", (("driver", "serial"),)) not in m  # no reader
    assert any(name.startswith("process_") for name, _ in m)
    assert any(name.startswith("python_") for name, _ in m)

    records = {r.seq: r for r in table_records(caplog)}
    suspended = records[unreadable["seq"]]
    assert suspended.levelno == logging.WARNING
    assert suspended.getMessage() == (
        f"t-test row {unreadable['seq']}: SUSPENDED UNREADABLE_CARD "
        "(the reader could not identify the card) raw=4e52"
    )
    assert (suspended.table, suspended.code, suspended.actor) == (
        "t-test",
        "UNREADABLE_CARD",
        "test-rig",
    )
    resume = records[resumed["seq"]]
    assert resume.levelno == logging.INFO and resume.actor == "test-supervisor"
    assert "RESUMED by test-supervisor (suspended " in resume.getMessage()
    assert resume.since_seq == unreadable["seq"]
    result = records[last["seq"]]
    assert result.levelno == logging.DEBUG and "round 1 PLAYER" in result.getMessage()
    # a plain card is not logged: the writer does not pay for a line per card
    assert not {a["seq"] for a in answers[1:6]} & set(records)


def test_metrics_need_a_token(live: Running) -> None:
    r = httpx.get(f"{live.url}/metrics")
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    bad = httpx.get(f"{live.url}/metrics", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401
    for role in ("viewer", "dealer", "supervisor"):
        assert ("station_verdicts_total", (("code", "ok"),)) in metrics(live, role)


def test_metrics_on_a_listener_of_their_own_need_no_token(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, allow_rig=True, metrics_bind="127.0.0.1:0")
    with serve(config, tokens) as live:
        port = live.station.observer.port
        assert port is not None
        live.post({"type": "shoe"}, "dealer")
        r = httpx.get(f"http://127.0.0.1:{port}/metrics")
        assert r.status_code == 200
        m = scrape(r.text)
        assert m[("station_journal_rows_total", (("kind", "shoe"),))] == 1
        assert m[("station_verdicts_total", (("code", "ok"),))] == 2
    with pytest.raises(httpx.TransportError):  # closed with the station
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2)


def test_a_busy_metrics_port_stops_the_station_with_the_key(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, metrics_bind="127.0.0.1:0")
    with serve(config, tokens) as first:
        taken = first.station.observer.port
        config = config.model_copy(
            update={"api": config.api.model_copy(update={"metrics_bind": f"127.0.0.1:{taken}"})}
        )
        with serve(config, tokens, wait_ready=False) as second:
            until(lambda: second.station.fatal is not None)
    assert f"[api] metrics_bind 127.0.0.1:{taken}: cannot listen there" in str(second.station.fatal)


def test_a_webhook_given_up_is_counted_journaled_and_logged_as_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="station.table")
    dead = f"http://127.0.0.1:{free_port()}/hook"  # nothing listens there
    config, tokens = make_config(tmp_path, allow_rig=True)
    signals = SignalsConfig(webhooks=(dead,), webhook_attempts=2, webhook_backoff=0.0)
    with serve(config.model_copy(update={"signals": signals}), tokens) as live:
        live.post({"type": "shoe"}, "dealer")
        live.post({"type": "fault", "detail": "test"})
        until(lambda: any(r.levelno == logging.ERROR for r in table_records(caplog)))
        m = metrics(live)
    assert m[("station_webhook_attempts_failed_total", ())] == 2
    assert m[("station_webhooks_given_up_total", ())] == 1
    (gave_up,) = [r for r in table_records(caplog) if r.levelno == logging.ERROR]
    assert "station station: webhook gave up" in gave_up.getMessage()
    assert gave_up.notice == "webhook gave up" and gave_up.seq > 4


def test_a_missing_port_reaches_the_log(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A new user's first trouble: the shoe's port is not there. The log says so (a
    warning), not only the journal; and the reader's counters are in the metrics."""
    caplog.set_level(logging.INFO, logger="station.table")
    config, tokens = make_config(tmp_path)
    reader = create_reader(from_mapping({"driver": "serial", "url": str(tmp_path / "ttyNONE")}))
    with serve(config, tokens, reader) as live:
        until(lambda: len([r for r in table_records(caplog) if r.levelno >= logging.WARNING]) >= 2)
        m = metrics(live)
    warnings = [r for r in table_records(caplog) if r.levelno == logging.WARNING]
    # no shoe in play yet: a fault, not a suspension
    assert warnings[0].getMessage().startswith('t-test row 3: FAULT detail="cannot open the')
    assert warnings[0].event == "fault" and warnings[0].actor == "reader"
    assert "reader serial: reader port " in warnings[1].getMessage()
    assert "ttyNONE not open; retrying in 0.5 s" in warnings[1].getMessage()
    assert m[("station_reader_frames_total", (("driver", "serial"),))] == 0
    assert m[("station_reader_connected", (("driver", "serial"),))] == 0
    assert m[("station_reader_faults_total", (("driver", "serial"),))] == 1
