"""The game server's side: signed webhooks from a live station, checked by the manual's
example verifier (examples/verify_webhook.py) on 127.0.0.1, and the table's paytable
driving the live odds."""

from __future__ import annotations

import importlib.util
import logging
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import orjson
import pytest

from station.core.paytables import load as load_paytable
from station.core.settlement import settle
from station.core.table import Table
from station.live.config import (
    WEBHOOK_EVENTS,
    ConfigError,
    SignalsConfig,
    StationConfig,
    TableConfig,
    WebhookConfig,
    load,
)
from station.live.signals import (
    DELIVERY_HEADER,
    SIGNATURE_HEADER,
    STOP_GRACE,
    sign,
    table_events,
)
from tests.conftest import run_station
from tests.service.kit import Running, make_config, serve

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
BURN = [{"type": "card", "card": c} for c in ("2H", "KS", "QD")]
# Round 1: player 9S KH (9, a natural), banker 2D 5C (7): the player wins.
ROUND_1 = [{"type": "close_bets"}] + [{"type": "card", "card": c} for c in ("9S", "2D", "KH", "5C")]


def example() -> ModuleType:
    """examples/verify_webhook.py, imported from its file as a game server would copy it."""
    spec = importlib.util.spec_from_file_location(
        "verify_webhook", ROOT / "examples" / "verify_webhook.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


VERIFY = example()


def wait_for(ready: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes


@dataclass
class Recorder:
    """A game server that keeps every POST as it came (headers, exact bytes)."""

    url: str = ""
    deliveries: list[Delivery] = field(default_factory=list)
    fail_first: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def events(self) -> list[dict[str, Any]]:
        with self.lock:
            return [orjson.loads(d.body) for d in self.deliveries[self.fail_first :]]


@contextmanager
def recorder(fail_first: int = 0, port: int = 0) -> Iterator[Recorder]:
    import http.server

    rec = Recorder(fail_first=fail_first)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with rec.lock:
                rec.deliveries.append(Delivery(dict(self.headers.items()), body))
                failing = len(rec.deliveries) <= rec.fail_first
            self.send_response(500 if failing else 204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    rec.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield rec
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def example_receiver(secret: bytes) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The example's own receiver on 127.0.0.1: the events it accepted, in order."""
    accepted: list[dict[str, Any]] = []
    server = VERIFY.make_server("127.0.0.1", 0, secret, accepted.append)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/station", accepted
    finally:
        server.shutdown()
        server.server_close()


def secret_file(tmp_path: Path, name: str) -> tuple[Path, bytes]:
    """A secret file as an operator makes one (`openssl rand -hex 32 > FILE`)."""
    secret = secrets.token_hex(32)
    path = tmp_path / name
    path.write_text(secret + "\n")
    return path, secret.encode()


def endpoint(url: str, path: Path, *events: str) -> WebhookConfig:
    return WebhookConfig(url=url, secret_file=path, events=events or WEBHOOK_EVENTS)


def station_config(
    tmp_path: Path, *hooks: WebhookConfig, **signals: Any
) -> tuple[StationConfig, dict[str, str]]:
    config, tokens = make_config(tmp_path, allow_rig=True)
    signals = {"webhook_backoff": 0.01, **signals}
    return config.model_copy(update={"signals": SignalsConfig(webhook=hooks, **signals)}), tokens


def post(live: Running, event: dict[str, Any], role: str = "rig") -> dict[str, Any]:
    answer = live.post(event, role)
    answer.raise_for_status()
    verdict: dict[str, Any] = answer.json()
    return verdict


def id_prefix(live: Running) -> str:
    """What every event id of this station begins with: its table, its journal and the
    journal's epoch (the row's seq and the event's type follow)."""
    journal = live.station.journal
    assert journal is not None
    return f"t-test:{journal.epoch.journal}:{journal.epoch.mark}"


def journal(live: Running) -> dict[int, dict[str, Any]]:
    rows = httpx.get(f"{live.url}/api/journal", headers=live.headers("viewer")).json()["events"]
    return {r["seq"]: r for r in rows}


def test_every_event_reaches_the_game_server_signed_after_its_row(tmp_path: Path) -> None:
    all_path, all_secret = secret_file(tmp_path, "all.secret")
    raw_path, raw_secret = secret_file(tmp_path, "raw.secret")
    rounds_path, _ = secret_file(tmp_path, "rounds.secret")
    with (
        example_receiver(all_secret) as (url, accepted),
        recorder() as raw,
        recorder() as rounds_only,
    ):
        config, tokens = station_config(
            tmp_path,
            endpoint(url, all_path),
            endpoint(raw.url, raw_path),
            endpoint(rounds_only.url, rounds_path, "round_result", "round_voided"),
        )
        with serve(config, tokens) as live:
            shoe = post(live, {"type": "shoe"}, "dealer")
            for e in BURN + ROUND_1[:-1]:
                post(live, e)
            result = post(live, ROUND_1[-1])
            post(live, {"type": "close_bets"}, "dealer")
            unreadable = post(live, {"type": "card", "card": "??"})
            void = post(live, {"type": "void"}, "supervisor")
            post(live, {"type": "close_bets"}, "dealer")
            post(live, {"type": "card", "card": "AS"})
            fault = post(live, {"type": "fault", "detail": "cable"})
            resume = post(live, {"type": "resume"}, "supervisor")
            end = post(live, {"type": "end_shoe"}, "supervisor")
            wait_for(lambda: len(accepted) == 9 and len(raw.events) == 9, "9 events")
            wait_for(lambda: len(rounds_only.events) == 3, "the rounds")
            rows = journal(live)
            prefix = id_prefix(live)
    expected = [
        ("shoe_started", shoe),
        ("round_result", result),
        ("suspended", unreadable),
        ("resumed", void),
        ("round_voided", void),
        ("suspended", fault),
        ("resumed", resume),
        ("round_voided", end),
        ("shoe_finished", end),
    ]
    # The example accepted them all (genuine, fresh), in journal order.
    assert [(e["type"], e["seq"]) for e in accepted] == [(t, v["seq"]) for t, v in expected]
    assert raw.events == accepted  # the same bodies to every endpoint that wants them
    for delivery, event in zip(raw.deliveries, accepted, strict=True):
        header = delivery.headers["X-Station-Signature"]
        assert VERIFY.verify(delivery.body, header, raw_secret)
        assert not VERIFY.verify(delivery.body, header, all_secret)  # per-endpoint secrets
        assert delivery.headers["X-Station-Event"] == event["type"]
        assert delivery.headers["X-Station-Delivery"] == event["id"]
        assert event["id"] == f"{prefix}:{event['seq']}:{event['type']}"
        row = rows[event["seq"]]  # the row it follows is in the journal, as sent
        assert (event["event"], event["ts"], event["actor"]) == (
            row["event"],
            row["ts"],
            row["actor"],
        )
        assert event["table"] == "t-test"
    by_type: dict[str, list[dict[str, Any]]] = {}
    for e in accepted:
        by_type.setdefault(e["type"], []).append(e)
    started = by_type["shoe_started"][0]
    assert (started["shoe"], started["decks"], started["paytable"]) == (1, 8, "traditional")
    # round_result: everything settlement needs, the paytable named.
    (won,) = by_type["round_result"]
    assert won["result"] == result["result"] and won["round"] == 1 and won["shoe"] == 1
    assert won["result"]["winner"] == "player" and won["result"]["player_natural"]
    paid = settle(
        load_paytable(won["paytable"]),
        won["round"],
        won["result"],
        [{"bet": "player", "stake": "10"}, {"bet": "banker", "stake": "10"}],
    )
    assert [(s.outcome, str(s.returned)) for s in paid] == [("win", "20"), ("loss", "0")]
    # round_voided: the stakes of the round go back.
    voided = by_type["round_voided"]
    assert [(v["round"], v["result"]) for v in voided] == [(2, None), (3, None)]
    assert all(v["refund"] == "all" and v["paytable"] == "traditional" for v in voided)
    refunds = settle(load_paytable("traditional"), 2, None, [{"bet": "tie", "stake": "5"}])
    assert refunds[0].outcome == "refund"
    suspended = by_type["suspended"]
    assert [(s["code"], s["round"]) for s in suspended] == [
        ("UNREADABLE_CARD", 2),
        ("SCANNER_FAULT", 3),
    ]
    assert all(s["explanation"] for s in suspended)
    assert [r["voided_round"] for r in by_type["resumed"]] == [2, None]
    (finished,) = by_type["shoe_finished"]
    assert finished["reason"] == "end_shoe" and finished["shoe"] == 1
    assert (finished["rounds_completed"], finished["rounds_voided"]) == (1, 2)
    assert finished["voided_rounds"] == [2, 3]
    # The filtered endpoint got its two kinds only, the same bodies.
    assert rounds_only.events == [e for e in accepted if e["type"].startswith("round_")]


def test_a_shoe_finished_by_its_last_round() -> None:
    """The cut card between rounds 1 and 2: round 2 is the last, its card ends the shoe."""
    table = Table(decks=1, gated=False)
    seen = []
    cards = ("9S", "2D", "KH", "5C")
    events = [{"type": "shoe"}, *BURN, *({"type": "card", "card": c} for c in cards)]
    events += [{"type": "cut"}]
    events += [{"type": "card", "card": c} for c in ("4S", "4D", "4H", "4C")]
    for e in events:
        was = table.in_play
        d = table.decide(e)
        seen += table_events(table, e, d.verdict, was, d.cleared, d.began)
    assert [t for t, _ in seen] == [
        "shoe_started",
        "round_result",
        "round_result",
        "shoe_finished",
    ]
    finished = seen[-1][1]
    assert finished["reason"] == "last_round" and finished["rounds_completed"] == 2
    assert finished["voided_rounds"] == [] and finished["cards_out"] == 11


def test_retries_after_a_500_send_the_same_id_and_body(tmp_path: Path) -> None:
    path, secret = secret_file(tmp_path, "hook.secret")
    with recorder(fail_first=2) as rec:
        config, tokens = station_config(tmp_path, endpoint(rec.url, path, "shoe_started"))
        with serve(config, tokens) as live:
            post(live, {"type": "shoe"}, "dealer")
            wait_for(lambda: len(rec.deliveries) == 3, "three attempts")
            time.sleep(0.2)  # no fourth attempt after the success
    assert len(rec.deliveries) == 3
    assert len({d.body for d in rec.deliveries}) == 1
    assert len({d.headers["X-Station-Delivery"] for d in rec.deliveries}) == 1
    assert all(
        VERIFY.verify(d.body, d.headers["X-Station-Signature"], secret) for d in rec.deliveries
    )
    assert rec.events[0]["type"] == "shoe_started"


def test_a_dead_game_server_neither_delays_verdicts_nor_the_stop(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Nothing listens: verdicts come at once, and the stop waits only its grace, then
    logs what was not sent."""
    path, secret = secret_file(tmp_path, "hook.secret")
    with recorder() as rec:
        dead = rec.url
    config, tokens = station_config(
        tmp_path, endpoint(dead, path), webhook_attempts=100, webhook_backoff=1.0
    )
    with caplog.at_level(logging.WARNING):
        with serve(config, tokens) as live:
            began = time.monotonic()
            shoe = post(live, {"type": "shoe"}, "dealer")
            for e in BURN + ROUND_1:
                post(live, e)
            assert time.monotonic() - began < 2.0
            prefix = id_prefix(live)
            stopping = time.monotonic()
        stopped = time.monotonic()
    # The stop waited its grace (2 s) for the game server, not the 100 attempts' backoff.
    assert stopped - stopping < STOP_GRACE + 2.0
    assert f"2 event(s) not sent at stop, from {prefix}:{shoe['seq']}:shoe_started" in caplog.text
    assert "ConnectError" in caplog.text and secret.decode() not in caplog.text


def test_a_tampered_body_or_an_old_signature_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, secret = secret_file(tmp_path, "hook.secret")
    with recorder() as rec, example_receiver(secret) as (url, accepted):
        config, tokens = station_config(
            tmp_path, endpoint(rec.url, path), endpoint(url, path), webhook_attempts=2
        )
        with serve(config, tokens) as live:
            post(live, {"type": "shoe"}, "dealer")
            wait_for(lambda: len(rec.deliveries) == 1 and len(accepted) == 1, "the shoe")
            genuine = rec.deliveries[0]
            header = genuine.headers["X-Station-Signature"]
            tampered = genuine.body.replace(b'"shoe":1', b'"shoe":2')
            assert tampered != genuine.body
            assert not VERIFY.verify(tampered, header, secret)
            refused = httpx.post(url, content=tampered, headers={"X-Station-Signature": header})
            assert refused.status_code == 400
            # A genuine delivery replayed later is refused once out of the window.
            assert VERIFY.verify(genuine.body, header, secret, tolerance=300)
            time.sleep(1.1)
            assert not VERIFY.verify(genuine.body, header, secret, tolerance=0)
            # A station whose clock is 10 minutes behind signs stale deliveries: the
            # example refuses them, the station retries and then journals that it gave up.
            with caplog.at_level(logging.DEBUG):
                live.station.outbox.webhooks._clock = lambda: time.time() - 600
                fault = post(live, {"type": "fault", "detail": "cable"})
                wait_for(
                    lambda: any(
                        r["event"].get("message") == "webhook gave up" and r["event"]["url"] == url
                        for r in journal(live).values()
                    ),
                    "the give-up notice",
                )
            rows = journal(live)
            prefix = id_prefix(live)
    assert [e["type"] for e in accepted] == ["shoe_started"]
    gave_up = [r for r in rows.values() if r["event"].get("message") == "webhook gave up"]
    assert gave_up[0]["event"]["notice_id"] == f"{prefix}:{fault['seq']}:suspended"
    assert gave_up[0]["event"]["error"] == "HTTP 400"
    # The secret is in no journal row and no log line.
    assert secret.decode() not in orjson.dumps(list(rows.values())).decode()
    assert secret.decode() not in caplog.text
    assert secret.decode() not in repr(config)


def test_the_old_webhooks_list_still_gets_unsigned_suspensions(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with recorder() as rec:
        config, tokens = make_config(tmp_path, allow_rig=True)
        config = config.model_copy(
            update={"signals": SignalsConfig(webhooks=(rec.url,), webhook_backoff=0.01)}
        )
        with caplog.at_level(logging.WARNING), serve(config, tokens) as live:
            post(live, {"type": "shoe"}, "dealer")
            for e in BURN + ROUND_1:
                post(live, e)
            post(live, {"type": "fault"})
            post(live, {"type": "resume"}, "supervisor")
            wait_for(lambda: len(rec.events) == 2, "the suspension and the resume")
            time.sleep(0.2)
    assert [e["type"] for e in rec.events] == ["suspended", "resumed"]
    assert all("X-Station-Signature" not in d.headers for d in rec.deliveries)
    assert "[signals] webhooks = [...] is deprecated" in caplog.text


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "station.toml"
    path.write_text(text)
    return path


HOOK = '[[signals.webhook]]\nurl = "http://127.0.0.1:9/hook"\n'


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (HOOK, "[signals] webhook[0].secret_file: give the signing secret as secret_file"),
        (HOOK + 'secret_file = "short.secret"', "is 9 bytes; it must be at least 32"),
        (HOOK + 'secret_file = "none.secret"', "secret_file: cannot read"),
        (
            HOOK + 'secret = "not-an-env-reference-but-a-real-secret-0123456789"',
            'write secret = "env:NAME"',
        ),
        (
            HOOK + 'secret = "env:STATION_TEST_UNSET"',
            "the environment variable STATION_TEST_UNSET is not set",
        ),
        (HOOK + 'secret = "env:STATION_TEST_SHORT"', "is 5 bytes; it must be at least 32"),
        (
            HOOK + 'secret = "env:STATION_TEST_SHORT"\nsecret_file = "short.secret"',
            "one of the two",
        ),
        (
            HOOK + 'secret_file = "long.secret"\nevents = ["round_over"]',
            "events: must be among round_result",
        ),
        (HOOK + 'secret_file = "long.secret"\nevents = []', "events: must name at least one event"),
        (
            '[[signals.webhook]]\nurl = "ftp://x"\nsecret_file = "long.secret"',
            "expected an http://",
        ),
        ('[table]\npaytable = "house.toml"', "[table] paytable: no paytable"),
    ],
)
def test_a_bad_webhook_or_paytable_config_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, words: str
) -> None:
    (tmp_path / "short.secret").write_text("too-short\n")
    (tmp_path / "long.secret").write_text("x" * 40)
    monkeypatch.setenv("STATION_TEST_SHORT", "short")
    monkeypatch.delenv("STATION_TEST_UNSET", raising=False)
    with pytest.raises(ConfigError) as err:
        load(write_config(tmp_path, text))
    assert words in str(err.value)
    assert "too-short" not in str(err.value) and "real-secret" not in str(err.value)


def test_a_secret_from_the_environment_signs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secret = secrets.token_hex(32)
    monkeypatch.setenv("STATION_TEST_SECRET", secret)
    config = load(write_config(tmp_path, HOOK + 'secret = "env:STATION_TEST_SECRET"'))
    (hook,) = config.signals.webhook
    assert hook.key == secret.encode() and hook.events == WEBHOOK_EVENTS
    assert secret not in repr(config) and secret not in str(config.model_dump())
    body = b'{"id":"t:1:shoe_started"}'
    now = int(time.time())
    assert VERIFY.verify(body, sign(hook.key, body, now), secret.encode())


def test_the_paytable_file_is_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "tie_nine.toml").write_text(
        'name = "tie_nine"\nextends = "traditional"\n'
        '[bets.tie]\nrule = "tie"\npays = { tie = "9:1" }\n'
    )
    config = load(write_config(tmp_path, '[table]\npaytable = "tie_nine.toml"\n'))
    assert config.table.paytable == str(tmp_path / "tie_nine.toml")
    assert config.table.load_paytable().name == "tie_nine"
    full = run_station("odds", "--config", str(tmp_path / "station.toml"))
    assert full.returncode == 0 and b"paytable tie_nine" in full.stdout


def test_the_odds_follow_the_tables_paytable(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, allow_rig=True)
    config = config.model_copy(update={"table": TableConfig(id="t-test", paytable="no_commission")})
    events = [{"type": "shoe"}, *BURN, *ROUND_1]
    table = Table()
    for e in events:
        table.apply(e)
    composition = orjson.dumps(table.remaining())
    with serve(config, tokens) as live:
        for e in events:
            post(live, e)
        viewer = live.headers("viewer")
        answer = httpx.get(f"{live.url}/api/odds", headers=viewer).json()
        traditional = httpx.get(f"{live.url}/api/odds?paytable=traditional", headers=viewer).json()
        restart = journal(live)[2]
    assert restart["event"] == {"type": "restart", "paytable": "no_commission"}
    assert answer["paytable"] == "no_commission" and traditional["paytable"] == "traditional"
    cli = run_station(
        "odds", "--paytable", "no_commission", "--remaining", "-", "--json", stdin=composition
    )
    assert cli.returncode == 0, cli.stderr
    expected = orjson.loads(cli.stdout)
    odds = answer["odds"]
    assert odds["outcomes"] == expected["outcomes"]
    assert odds["house_edge"] == {k: v["house_edge"] for k, v in expected["bets"].items()}
    assert odds["house_edge"]["banker"] != traditional["odds"]["house_edge"]["banker"]
    # `station odds` and `station replay --odds` take it from --config too.
    path = write_config(tmp_path, '[table]\npaytable = "no_commission"\n')
    by_config = run_station(
        "odds", "--config", str(path), "--remaining", "-", "--json", stdin=composition
    )
    assert by_config.stdout == cli.stdout
    lines = b"".join(orjson.dumps(e) + b"\n" for e in events)
    replayed = run_station("replay", "--odds", "--config", str(path), stdin=lines)
    named = run_station("replay", "--odds", "--paytable", "no_commission", stdin=lines)
    plain = run_station("replay", "--odds", stdin=lines)
    assert replayed.returncode == 0 and replayed.stdout == named.stdout != plain.stdout
    assert orjson.loads(replayed.stdout.splitlines()[-1])["odds"] == odds


def owed(journal_path: Path) -> list[str]:
    """The ids in the journal's webhook outbox, read as another program would."""
    db = sqlite3.connect(f"{journal_path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [i for (i,) in db.execute("SELECT id FROM outbox ORDER BY seq, rowid")]
    finally:
        db.close()


def test_events_a_stop_left_unsent_go_at_the_next_start_and_only_then(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The game server is down: each event is owed in the journal file from its row's
    commit (a crash could not lose it), the stop's grace runs out, and the next start
    sends them, same ids and bodies, in order; once taken, they are owed no more."""
    path, secret = secret_file(tmp_path, "hook.secret")
    with recorder() as rec:
        url = rec.url
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    config, tokens = station_config(
        tmp_path, endpoint(url, path), webhook_attempts=100, webhook_backoff=1.0
    )
    with serve(config, tokens) as live:
        shoe = post(live, {"type": "shoe"}, "dealer")
        for e in BURN + ROUND_1:
            post(live, e)
        result_seq = live.station.snapshot.seq
        end = post(live, {"type": "end_shoe"}, "supervisor")
        prefix = id_prefix(live)
        ids = [
            f"{prefix}:{shoe['seq']}:shoe_started",
            f"{prefix}:{result_seq}:round_result",
            f"{prefix}:{end['seq']}:shoe_finished",
        ]
        assert owed(config.journal.path) == ids  # committed with their rows
    assert owed(config.journal.path) == ids
    with caplog.at_level(logging.WARNING), recorder(port=port) as game_server:
        config, tokens = station_config(tmp_path, endpoint(url, path))
        with serve(config, tokens) as live:
            wait_for(lambda: len(game_server.events) == 3, "the events owed")
            got = [(d.headers[DELIVERY_HEADER], d) for d in game_server.deliveries]
        assert [i for i, _ in got] == ids
        for _, delivery in got:
            assert VERIFY.verify(delivery.body, delivery.headers[SIGNATURE_HEADER], secret)
        assert game_server.events[1]["round"] == 1 and game_server.events[1]["result"]
        assert "3 webhook event(s) the last run did not deliver are sent again" in caplog.text
        assert owed(config.journal.path) == []  # settled by the stop (else the next commit)
        with serve(config, tokens):  # nothing owed: nothing sent again
            time.sleep(0.3)
        assert len(game_server.deliveries) == 3


def test_events_owed_to_an_endpoint_no_longer_configured_are_dropped_and_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, _ = secret_file(tmp_path, "hook.secret")
    with recorder() as rec:
        dead = rec.url
    config, tokens = station_config(tmp_path, endpoint(dead, path), webhook_attempts=100)
    with serve(config, tokens) as live:
        post(live, {"type": "shoe"}, "dealer")
    assert len(owed(config.journal.path)) == 1
    config, tokens = station_config(tmp_path)
    with caplog.at_level(logging.WARNING), serve(config, tokens):
        pass
    assert "1 webhook event(s) owed to an endpoint no longer in [signals]" in caplog.text
    assert owed(config.journal.path) == []


def test_delivered_events_leave_the_outbox_with_the_next_commit(tmp_path: Path) -> None:
    path, _ = secret_file(tmp_path, "hook.secret")
    with recorder() as game_server:
        config, tokens = station_config(tmp_path, endpoint(game_server.url, path))
        with serve(config, tokens) as live:
            shoe = post(live, {"type": "shoe"}, "dealer")
            wait_for(lambda: len(game_server.events) == 1, "shoe_started")
            assert owed(config.journal.path) == [f"{id_prefix(live)}:{shoe['seq']}:shoe_started"]
            post(live, BURN[0])  # no disk write of its own: it goes with this commit
            assert owed(config.journal.path) == []
