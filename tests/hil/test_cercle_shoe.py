"""`station sim-shoe --game`: a chemin de fer and a baccarat banque shoe played into a real
pty with the shoe's decision buttons (issue 10). The serial driver reads the cards and the
decision payloads; the dealer's and supervisor's other events come through the HTTP API;
every event gets the verdict the simulated dealer expects, the options' decisions
included (those on the line reach the hand whose turn it is, with no hand named)."""

from __future__ import annotations

from pathlib import Path

import pytest

from drivers.config import ReaderConfig
from drivers.serial_reader import SerialReader
from drivers.sim.rig import ShoeEncoder, parse_rig_faults, rig_events
from station.core.table import Table
from tests.hil.rigkit import (
    TOKEN,
    FakeStationApi,
    TableSink,
    config_for,
    journal_export,
    play_against_station,
    play_into,
    sim_shoe,
)
from tests.netkit import free_port

BUTTONS = {"decision_draw": "CARTE", "decision_stand": "NON"}
FAULTS = {
    "chemin_de_fer": "unreadable=0.04,garbled=0.05,decision_missing=0.3,refused_decision=0.3,"
    "missing_third=0.1,early_card=0.05",
    "baccarat_banque": "unreadable=0.04,garbled=0.05,decision_missing=0.3,"
    "refused_decision=0.3,extra_third=0.1,foreign=0.1",
}
ROUNDS = 14


@pytest.mark.parametrize(("game", "seed"), [("chemin_de_fer", 31), ("baccarat_banque", 1)])
def test_a_cercle_shoe_through_a_pty_with_decision_buttons(
    tmp_path: Path, game: str, seed: int
) -> None:
    faults = parse_rig_faults(FAULTS[game], True, game)
    stream = list(rig_events(seed, faults, rounds=ROUNDS, game=game))
    encoder = ShoeEncoder(ReaderConfig(**BUTTONS))
    decisions = [e for e in stream if e["type"] == "decision"]
    on_the_line = [e for e in decisions if encoder.on_the_line(e)]
    assert on_the_line, "pick a seed whose shoe has options"
    assert {e["draw"] for e in on_the_line} == {True, False}, "both buttons"
    injected = {e.get("fault") for e in stream}
    assert {"decision_missing", "refused_decision", "garbled"} <= injected, injected
    link = tmp_path / "shoe"
    (tmp_path / "station.toml").write_text(
        f'[table]\ngame = "{game}"\n'
        '[reader]\nurl = "/dev/baccarat-shoe"\nframing = "stx-etx"\n'
        'decision_draw = "CARTE"\ndecision_stand = "NON"\n'
    )
    reader = SerialReader(config_for(link, framing="stx-etx", **BUTTONS))
    table = Table(game=game)
    sink = TableSink(table)
    api = FakeStationApi(sink, stream, encoder.on_the_line)
    command = sim_shoe(
        link,
        pace=0.002,
        seed=seed,
        rounds=ROUNDS,
        faults=FAULTS[game],
        config=tmp_path / "station.toml",
        station=api.url,
    )
    on_line = sum(encoder.on_the_line(e) for e in stream)
    rows, _ = play_into([*command, f"--token={TOKEN}"], link, reader, sink, on_line, api)
    assert [r["event"] for r in rows] == stream
    vias = [(r["event"]["type"], r["via"]) for r in rows]
    assert ("decision", "serial") in vias and ("decision", "api") in vias
    judged = sink.judged[: len(stream)]
    assert [e["type"] for _, e, _ in sink.judged[len(stream) :]] == ["fault"]  # the pty closing
    for (source, event, verdict), planned in zip(judged, stream, strict=True):
        where = f"{planned} -> {event}, {verdict}"
        assert event["type"] == planned["type"], where
        assert source == ("reader" if encoder.on_the_line(planned) else "api"), where
        if source == "reader" and planned["type"] == "decision":
            assert "hand" not in event and event["draw"] == planned["draw"], where
        assert verdict["error"] == planned.get("expect"), where
    results = [v["result"] for _, _, v in judged if v["result"]]
    assert len(results) >= ROUNDS // 2, "rounds were completed"
    completed_by_decision = [
        v for (_, e, v) in judged if e["type"] == "decision" and v["result"] is not None
    ]
    assert completed_by_decision, "a decision completed a round"
    if game == "baccarat_banque":
        assert all("tableau1_outcome" in r for r in results)
    else:
        assert all(r["winner"] in ("player", "banker", "tie") for r in results)


@pytest.mark.slow
def test_a_banque_shoe_against_the_real_station(tmp_path: Path) -> None:
    """Nothing faked: `station run` at a baccarat banque table reads the pty with the
    serial driver, decision payloads included; the journal holds, in order, the verdicts
    the dealer expects."""
    pytest.importorskip("uvicorn", reason="the API's dependencies are not installed")
    game, seed, rounds = "baccarat_banque", 17, 6
    faults = "decision_missing=0.3,refused_decision=0.3,unreadable=0.05"
    stream = list(rig_events(seed, parse_rig_faults(faults, True, game), rounds=rounds, game=game))
    encoder = ShoeEncoder(ReaderConfig(**BUTTONS))
    assert any(e["type"] == "decision" and encoder.on_the_line(e) for e in stream)
    link = tmp_path / "shoe"
    port = free_port()
    config = tmp_path / "station.toml"
    config.write_text(f"""
[table]
game = "{game}"
[reader]
url = "{link}"
decision_draw = "CARTE"
decision_stand = "NON"
reconnect_min = 0.02
reconnect_max = 0.2
[journal]
path = "{tmp_path / "journal.db"}"
[api]
bind = "127.0.0.1:{port}"
demo_tokens = true
""")
    rig = sim_shoe(
        link,
        pace=0.1,  # the dealer's events go by the API: the reader has this long for each card
        seed=seed,
        rounds=rounds,
        faults=faults,
        config=config,
        station=f"http://127.0.0.1:{port}",
    )
    rows = play_against_station(config, rig)
    assert ("decision", "serial") in [(r["event"]["type"], r["via"]) for r in rows]
    _, journal = journal_export(config)
    assert len(journal) >= len(stream)
    for planned, row in zip(stream, journal, strict=False):
        where = f"{planned} -> {row}"
        assert row["type"] == planned["type"], where
        if planned["type"] == "decision" and encoder.on_the_line(planned):
            assert row["journal"]["source"] == "reader" and "hand" not in row, where
        assert row["verdict"]["error"] == planned.get("expect"), where
    assert [e["type"] for e in journal[len(stream) :]] in ([], ["fault"])
    results = [e["verdict"]["result"] for e in journal if e["verdict"]["result"]]
    assert results and all("tableau1_outcome" in r for r in results)
