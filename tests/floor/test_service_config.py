"""The floor service's config file: the example shows every key with its default, and a
bad file is refused with a message that names the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from station.floor.config import (
    ArchiveConfig,
    BrokerConfig,
    ConfigError,
    FloorApiConfig,
    FloorProtectionConfig,
    FloorServiceConfig,
    FloorSettings,
    FloorTableConfig,
    load,
)
from station.shared.config import LogConfig
from tests.conftest import ROOT
from tests.service.test_config import example_keys

EXAMPLE = ROOT / "config" / "floor.example.toml"
SECTION_MODELS: dict[str, type[BaseModel]] = {
    "broker": BrokerConfig,
    "archive": ArchiveConfig,
    "floor": FloorSettings,
    "api": FloorApiConfig,
    "log": LogConfig,
    "protection": FloorProtectionConfig,
    "table": FloorTableConfig,
}
#: Keys whose example value is not the default: where a production install keeps them.
NOT_THE_DEFAULT = {("archive", "path"), ("api", "token_file")} | {
    ("table", key)
    for key in FloorTableConfig.model_fields  # an example table
}


def test_the_example_shows_every_key_with_its_default() -> None:
    shown = example_keys(EXAMPLE.read_text())
    expected = {(s, k) for s, model in SECTION_MODELS.items() for k in model.model_fields}
    assert set(shown) == expected, (
        f"missing from the example: {sorted(expected - set(shown))}; "
        f"not in the model: {sorted(set(shown) - expected)}"
    )
    for (section, key), value in shown.items():
        field = SECTION_MODELS[section].model_fields[key]
        if (section, key) in NOT_THE_DEFAULT or field.is_required() or field.default is None:
            continue
        default = field.get_default(call_default_factory=True)
        default = list(default) if isinstance(default, tuple) else default
        default = str(default) if isinstance(default, Path) else default
        assert value == default and type(value) is type(default), (section, key, value)
    example = load(EXAMPLE)
    assert example.archive.path == Path("/var/lib/baccarat-floor/floor.db")
    assert example.api.token_file == Path("/var/lib/baccarat-station/tokens.toml")
    assert (
        example.model_copy(
            update={"archive": ArchiveConfig(), "api": FloorApiConfig(), "source": "(defaults)"}
        )
        == FloorServiceConfig()
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[broker]\nsite = 'a.b'\n", "[broker] site: the site 'a.b' cannot be part of a floor"),
        ("[broker]\nurl = 'http://x:4222'\n", "[broker] url: expected nats://HOST:PORT"),
        ("[broker]\npassword = 'hunter2'\nuser = 'floor'\n", 'write password = "env:NAME"'),
        ("[floor]\noffline_after = 0\n", "[floor] offline_after: must be more than 0"),
        ("[[table]]\nid = 't1'\n[[table]]\nid = 't1'\n", "table 't1' is listed twice"),
        ("[table]\nid = 't1'\n", "[table]"),
        ("[reader]\ndriver = 'sim'\n", "unknown section [reader]"),
    ],
)
def test_a_bad_config_names_the_key(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "floor.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load(path)
    assert words in str(caught.value)


def test_relative_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "etc"
    folder.mkdir()
    (folder / "floor.toml").write_text('[archive]\npath = "../var/floor.db"\n')
    assert load(folder / "floor.toml").archive.path == tmp_path / "var" / "floor.db"
