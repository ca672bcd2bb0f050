"""The TOML config: defaults, and errors that name the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from drivers.config import ReaderConfig
from drivers.sim.bot import SimSettings
from station.live.config import ConfigError, StationConfig, load

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "station.toml"
    path.write_text(text)
    return path


def test_defaults_without_a_file() -> None:
    config = load(None)
    assert config == StationConfig()
    assert (config.table.decks, config.table.gated, config.table.cut_policy) == (8, True,
                                                                                 "one_more")
    assert config.api.bind == "127.0.0.1:8000" and config.api.public_read is False
    assert config.reader is None
    assert str(config.journal.path) == "var/journal.db"


def test_shipped_configs_load() -> None:
    demo = load(ROOT / "config" / "demo.toml")
    assert demo.reader is not None and demo.reader.driver == "sim"
    assert demo.api.public_read and demo.api.demo_tokens
    # relative to the file's folder: the demo's journal is in var/ of the checkout
    assert demo.journal.path == ROOT / "var" / "demo-journal.db"
    assert demo.api.token_file == ROOT / "var" / "demo-tokens.toml"
    example = load(ROOT / "config" / "example.toml")
    # the annotated example shows every default, so it loads as the defaults
    assert example == StationConfig(reader=example.reader, source=example.source)
    assert example.reader is not None
    assert dataclasses.replace(example.reader, options={}) == ReaderConfig()
    assert SimSettings.from_mapping(example.reader.options["sim"]) == SimSettings()


def test_values_are_read(tmp_path: Path) -> None:
    config = load(write(tmp_path, """
[table]
id = "baccarat-7"
decks = 6
gated = false
cut_policy = "last_round"
[api]
bind = "0.0.0.0:9000"
tokens = [{name = "gs", role = "dealer", sha256 = "%s"}]
[signals]
webhooks = ["http://127.0.0.1:5000/hook"]
stop_command = "hex:13"
""" % ("ab" * 32)))
    assert (config.table.id, config.table.decks, config.table.gated) == ("baccarat-7", 6, False)
    assert config.api.port == 9000 and config.api.host == "0.0.0.0"
    assert config.api.tokens[0].role == "dealer"
    assert config.stop_command == b"\x13"


@pytest.mark.parametrize(("text", "words"), [
    ("[tabel]\nid = 'x'", "unknown section [tabel]"),
    ("[table]\ndeck = 6", "table.deck: unknown key"),
    ("[table]\ndecks = 'six'", "table.decks: expected a whole number"),
    ("[table]\ndecks = 0", "table.decks: must be at least 1"),
    ("[table]\ngated = 1", "table.gated: expected true or false"),
    ("[table]\ncut_policy = 'never'", "table.cut_policy: must be one of"),
    ("[api]\nbind = '8000'", "api.bind: expected HOST:PORT"),
    ("[api]\npublic_read = 'yes'", "api.public_read: expected true or false"),
    ("[api]\ntokens = [{name = 'a', role = 'boss', sha256 = '%s'}]" % ("0" * 64),
     "api.tokens[0].role: must be one of"),
    ("[api]\ntokens = [{name = 'a', role = 'dealer', sha256 = 'abc'}]", "api.tokens[0].sha256"),
    ("[signals]\nwebhooks = ['ftp://x']", "signals.webhooks[0]: expected an http"),
    ("[signals]\nstop_command = 'hex:zz'", "signals.stop_command"),
    ("[reader]\ndriver = 'carrier-pigeon'", "[reader] driver"),
    ("[reader]\nbaud = 9600", "[reader] baud: unknown key"),
    ("table = 3", "[table]: expected a table"),
    ("[table\n", "not valid TOML"),
])  # fmt: skip
def test_errors_name_the_key(tmp_path: Path, text: str, words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load(path)
    assert words in str(err.value)
    assert str(path) in str(err.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the config"):
        load(tmp_path / "nope.toml")
