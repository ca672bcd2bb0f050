"""`make floor-demo` writes configs the station and the floor service accept, naming the
same site, broker and tables (the demo itself runs by hand: it serves until Ctrl-C)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from scripts.floor_demo import GAMES, SITE, TABLES, floor_config, station_config
from station.floor.config import load
from station.live.config import from_mapping


def test_the_demo_configs_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLOOR_PASSWORD", "demo")
    broker = "nats://127.0.0.1:4222"
    ports = {t: 8101 + i for i, t in enumerate(TABLES)}
    for i, table in enumerate(TABLES):
        text = station_config(table, i, ports[table], broker)
        station = from_mapping(tomllib.loads(text), base=tmp_path)
        assert station.table.id == table and station.reader is not None
        assert station.table.game == GAMES[table]
        assert (station.floor.url, station.floor.site, station.floor.user) == (broker, SITE, table)
        assert station.api.bind == f"127.0.0.1:{ports[table]}"
    path = tmp_path / "floor.toml"
    path.write_text(floor_config(8100, broker, ports))
    floor = load(path)
    assert (floor.broker.url, floor.broker.site, floor.broker.user) == (broker, SITE, "floor")
    assert [t.id for t in floor.table] == list(TABLES)
    assert floor.table[0].dashboard == "http://127.0.0.1:8101/"
    assert floor.api.demo_tokens and floor.archive.path == tmp_path / "floor.db"
    # Every game is on the demo floor.
    assert set(GAMES.values()) == {"punto_banco", "chemin_de_fer", "baccarat_banque"}
