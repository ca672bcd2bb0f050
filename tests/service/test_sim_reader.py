"""The demo's `sim` driver: a dealer bot and supervisor that follow the station's state."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from drivers import create_reader
from drivers.base import ReaderSink, TableViewSink
from drivers.config import from_mapping
from drivers.sim.bot import SimReader, SimSettings
from station.core.snapshot import TableSnapshot, take
from station.core.table import Table
from station.live.config import TableConfig
from station.live.journal import Journal
from station.shared.sections import ConfigError
from tests.service.kit import make_config, serve

FAST = SimSettings(
    seed=3,
    card_interval=0.5,
    betting_time=2.0,
    shuffle_time=5.0,
    fault_chance=0.1,
    supervisor_after=4.0,
)
EXPECTED_ERRORS = {"UNREADABLE_CARD", "SCANNER_FAULT"}


class TableSink:
    """The station in miniature: each event straight into a real `Table`, snapshot after."""

    def __init__(self, decks: int = 1, game: str = "punto_banco") -> None:
        self.table = Table(game=game, decks=decks)
        self.log: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.since: int | None = None
        self.snap = take(self.table, 0, "t", None)

    def event(self, event: dict[str, Any]) -> None:
        verdict, cleared, began = self.table.decide(event)
        self.log.append((event, dict(verdict)))
        if began:
            self.since = len(self.log)
        elif cleared:
            self.since = None
        self.snap = take(self.table, len(self.log), "t", self.since, self.snap)

    def notice(self, message: str, /, **details: Any) -> None:
        pass

    def view(self) -> TableSnapshot:
        return self.snap

    def settled(self, timeout: float) -> bool:
        return True


def play(bot: SimReader, sink: TableSink, seconds: float) -> None:
    """Run the bot on a virtual clock (no sleeping)."""
    now = 0.0
    while now < seconds:
        now += max(bot.step(sink, sink.view(), now), 0.001)


def test_the_bot_deals_shoes_by_the_rules() -> None:
    sink, bot = TableSink(decks=1), SimReader(settings=FAST)
    play(bot, sink, 600)
    errors = [v["error"] for _, v in sink.log if v["error"]]
    assert set(errors) <= EXPECTED_ERRORS, errors
    assert "UNREADABLE_CARD" in errors and "SCANNER_FAULT" in errors
    assert sink.table.shoes_started >= 3
    types = [e["type"] for e, _ in sink.log]
    assert types.count("cut") >= 2 and types.count("close_bets") > 10
    actors = {e.get("actor") for e, _ in sink.log if e["type"] in ("resume", "void")}
    assert actors == {"demo-supervisor"}
    resumed_cards = [e for e, v in sink.log if e["type"] == "resume" and "card" in e]
    assert all(v["ok"] for e, v in sink.log if e["type"] in ("resume", "void"))
    assert resumed_cards  # an unreadable card read by eye


@pytest.mark.parametrize("game", ["chemin_de_fer", "baccarat_banque"])
def test_the_bot_deals_the_cercle_games_and_takes_the_options(game: str) -> None:
    sink, bot = TableSink(decks=1, game=game), SimReader(settings=FAST)
    play(bot, sink, 600)
    errors = [v["error"] for _, v in sink.log if v["error"]]
    assert set(errors) <= EXPECTED_ERRORS, errors
    assert (
        sink.table.shoes_started >= 2
        and len(sink.table.results) + len(sink.table.previous_results) > 5
    )
    decisions = [(e, v) for e, v in sink.log if e["type"] == "decision"]
    assert decisions and all(v["ok"] for _, v in decisions)
    assert {e["draw"] for e, _ in decisions} == {True, False}
    assert {e["actor"] for e, _ in decisions} == {"demo-dealer"}
    roles = {v["role"] for e, v in sink.log if e["type"] == "card" and v["ok"]}
    assert ("T1.1" in roles) == (game == "baccarat_banque") and "burn" not in roles


def test_the_supervisor_waits_and_lets_others_act_first() -> None:
    sink, bot = TableSink(decks=1), SimReader(settings=FAST.model_copy(update={"fault_chance": 0}))
    play(bot, sink, 3)  # shoe, burn reveal...
    sink.event({"type": "fault", "detail": "pulled cable"})
    now = 10.0
    assert bot.step(sink, sink.view(), now) > 0  # the supervisor is on his way
    sink.event({"type": "resume", "actor": "a real supervisor"})  # someone acted first
    before = len(sink.log)
    bot.step(sink, sink.view(), now + 100)
    assert all(e["type"] != "resume" for e, _ in sink.log[before:])
    sink.event({"type": "fault"})
    bot.step(sink, sink.view(), now + 200)
    bot.step(sink, sink.view(), now + 200 + FAST.supervisor_after)
    assert sink.log[-1][0] == {"type": "resume", "actor": "demo-supervisor"}
    assert sink.log[-1][1]["ok"]


def test_the_bots_status_says_when_its_reader_dropped_off() -> None:
    """A simulated reader outage shows in `status()` as a real one does (the dashboard's
    reader field), from its `fault` until the table resumes."""
    sink, bot = TableSink(decks=1), SimReader(settings=FAST)
    statuses: list[tuple[str, bool]] = []  # (the last event's type, connected) per step
    now = 0.0
    while now < 600:
        now += max(bot.step(sink, sink.view(), now), 0.001)
        statuses.append((sink.log[-1][0]["type"] if sink.log else "", bot.status()["connected"]))
    faults = sum(e["type"] == "fault" for e, _ in sink.log)
    assert faults >= 2
    # disconnected exactly after each fault, until a resume or void
    assert {connected for kind, connected in statuses if kind == "fault"} == {False}
    assert {c for kind, c in statuses if kind in ("resume", "void", "card", "shoe")} == {True}


def test_after_a_restart_the_shoe_is_ended() -> None:
    sink = TableSink(decks=1)
    play(SimReader(settings=FAST), sink, 20)
    sink.event({"type": "restart"})
    bot = SimReader(settings=FAST)  # a new process: its shoe is gone
    play(bot, sink, 20)
    ended = [e for e, v in sink.log if e["type"] == "end_shoe"]
    assert ended and ended[0]["actor"] == "demo-supervisor"
    assert sink.table.shoes_started >= 2


def shoes_cards(sink: TableSink) -> list[list[str]]:
    """The cards of each shoe the bot dealt, in order."""
    shoes: list[list[str]] = []
    for event, _ in sink.log:
        if event["type"] == "shoe":
            shoes.append([])
        elif event["type"] == "card" and event.get("card") and shoes:
            shoes[-1].append(event["card"])
    return shoes


def test_a_restarted_bot_does_not_deal_its_first_shoe_again() -> None:
    """The same seed after a restart would shuffle the same shoes again: the station's game
    protection would then see a repeated shoe (SHOE_SEQUENCE) at every demo restart."""
    sink = TableSink(decks=1)
    play(SimReader(settings=FAST), sink, 20)
    sink.event({"type": "restart"})
    play(SimReader(settings=FAST), sink, 60)  # a new process, the same [reader.sim] seed
    first, *later = shoes_cards(sink)
    assert later and all(shoe[:8] != first[:8] for shoe in later if len(shoe) >= 8)
    again = TableSink(decks=1)  # a new journal: the seed deals the same shoes as before
    play(SimReader(settings=FAST), again, 20)
    assert shoes_cards(again)[0][:8] == first[:8]


def test_settings_are_checked() -> None:
    # Checked with the rest of the config, before any reader is made.
    with pytest.raises(
        ConfigError,
        match=r"\[reader.sim\] card_interval: expected a number "
        r"from 0 to 3600, got -1",
    ):
        create_reader(from_mapping({"driver": "sim", "sim": {"card_interval": -1}}))
    with pytest.raises(
        ConfigError,
        match=r"\[reader.sim\] speed: unknown key; the keys are "
        r"seed, card_interval",
    ):
        create_reader(from_mapping({"driver": "sim", "sim": {"speed": 2}}))
    with pytest.raises(
        ConfigError,
        match=r"\[reader.sim\] fault_chance: expected a number "
        r"from 0 to 1, got 1.5",
    ):
        create_reader(from_mapping({"driver": "sim", "sim": {"fault_chance": 1.5}}))
    with pytest.raises(
        ConfigError,
        match=r"\[reader.sim\] seed: expected a whole number, "
        r"got '7'",
    ):
        create_reader(from_mapping({"driver": "sim", "sim": {"seed": "7"}}))
    # Too shallow a cut is refused at start, not by the bot's thread at every shuffle.
    with pytest.raises(ConfigError, match=r"\[reader.sim\] cut_depth: at least 16"):
        create_reader(from_mapping({"driver": "sim", "sim": {"cut_depth": 3}}))


@pytest.mark.server
def test_the_live_demo_plays_through_the_service(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path, public_read=True)
    reader_config = from_mapping(
        {
            "driver": "sim",
            "sim": {
                "card_interval": 0.002,
                "betting_time": 0.002,
                "shuffle_time": 0.01,
                "fault_chance": 0.05,
                "supervisor_after": 0.02,
                "seed": 5,
            },
        }
    )
    config = config.model_copy(
        update={"table": TableConfig(id="t-test", decks=1), "reader": reader_config}
    )
    with serve(config, tokens, reader=create_reader(reader_config)) as live:
        deadline = time.monotonic() + 30
        while live.station.snapshot.shoes_started < 2:
            assert time.monotonic() < deadline, live.station.snapshot
            time.sleep(0.05)
        state = httpx.get(f"{live.url}/api/state").json()
    assert state["reader"]["driver"] == "sim" and state["reader"]["connected"]
    with Journal(config.journal.path) as journal:
        assert journal.verify().ok
        rows = list(journal.rows())
    actors = {r.actor for r in rows if r.source == "reader"}
    assert {"demo-dealer", "sim"} <= actors
    errors = {r.verdict["error"] for r in rows if r.verdict and r.verdict["error"]}
    assert errors <= EXPECTED_ERRORS, errors


class WatchedBot(SimReader):
    """The sim bot, noting for each step the state it acted on and what it sent."""

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.acts: list[tuple[int, int, int]] = []  # (snapshot seq, sent before, after)

    def step(self, sink: ReaderSink, snap: TableSnapshot, now: float) -> float:
        before = self.sent
        wait = super().step(sink, snap, now)
        if self.sent > before:
            self.acts.append((snap.seq, before, self.sent))
        return wait


def test_the_bot_never_acts_twice_on_one_state(tmp_path: Path) -> None:
    """Through the live service: every time the bot acts, the state it looks at already
    has the row of the last event it sent (`settled` waits for the writer's publication)."""
    config, tokens = make_config(tmp_path)
    reader_config = from_mapping(
        {
            "driver": "sim",
            "sim": {
                "card_interval": 0,
                "betting_time": 0,
                "shuffle_time": 0,
                "fault_chance": 0.05,
                "supervisor_after": 0,
                "seed": 8,
            },
        }
    )
    config = config.model_copy(
        update={"table": TableConfig(id="t-test", decks=1), "reader": reader_config}
    )
    bot = WatchedBot(reader_config)
    with serve(config, tokens, reader=bot) as live:
        deadline = time.monotonic() + 30
        while len(bot.acts) < 300:
            assert time.monotonic() < deadline, (len(bot.acts), live.station.snapshot)
            time.sleep(0.05)
    with Journal(config.journal.path) as journal:
        sent_rows = [r.seq for r in journal.rows() if r.source == "reader" and r.kind == "event"]
    acts = [a for a in bot.acts if a[2] <= len(sent_rows)]
    assert len(acts) >= 300
    seen = [seq for seq, _, _ in acts]
    assert seen == sorted(set(seen))  # one action per state, states only move forward
    for seq, before, _ in acts:
        if before:
            assert sent_rows[before - 1] <= seq  # the bot's last event is in what it saw


def test_settled_wakes_when_the_writer_publishes(tmp_path: Path) -> None:
    """A reader that waits for each of its events: woken by the commit, not a poll."""

    class Waiter:
        name = "waiter"

        def __init__(self) -> None:
            self.seen: list[tuple[bool, int, float]] = []
            self.done = threading.Event()

        def run(self, sink: ReaderSink, stop: threading.Event) -> None:
            assert isinstance(sink, TableViewSink)
            assert sink.settled(0)  # nothing sent yet
            for i in range(50):
                sink.event({"type": "fault", "detail": f"probe {i}"})
                started = time.monotonic()
                settled = sink.settled(5)
                self.seen.append((settled, sink.view().seq, time.monotonic() - started))
            self.done.set()
            stop.wait()

        def status(self) -> dict[str, Any]:
            return {"driver": self.name, "connected": True, "detail": ""}

        def send(self, data: bytes) -> bool:
            return True  # (a card stop "sent": no notice row comes in between)

    config, tokens = make_config(tmp_path)
    waiter = Waiter()
    with serve(config, tokens, reader=waiter):
        assert waiter.done.wait(30)
    with Journal(config.journal.path) as journal:
        faults = [r.seq for r in journal.rows() if r.source == "reader"]
    assert len(faults) == 50
    assert all(settled for settled, _, _ in waiter.seen)
    assert [seq for _, seq, _ in waiter.seen] == faults  # each one's own row, at once
    assert sorted(took for _, _, took in waiter.seen)[25] < 0.5


def test_the_bot_refuses_a_sink_that_cannot_show_the_table() -> None:
    class Collector:
        def event(self, event: dict[str, Any]) -> None:
            raise AssertionError("nothing may be sent")

        def notice(self, message: str, /, **details: Any) -> None:
            raise AssertionError("nothing may be sent")

    with pytest.raises(TypeError, match=r"needs a sink that shows it .*got Collector"):
        SimReader(settings=FAST).run(Collector(), threading.Event())
