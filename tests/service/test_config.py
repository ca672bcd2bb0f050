"""The TOML config: defaults, and errors that name the key."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from drivers.config import CameraSettings, PassageSettings, ReaderConfig, SimSettings
from station.cli import main
from station.live.config import (
    ApiConfig,
    ConfigError,
    DashboardConfig,
    DisplayConfig,
    FloorConfig,
    JournalConfig,
    SignalsConfig,
    StationConfig,
    TableConfig,
    WebhookConfig,
    load,
)
from station.live.protection.config import ProtectionConfig
from station.shared.config import LogConfig, TokenEntry
from station.shared.tokens import read_token_file

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "station.toml"
    path.write_text(text)
    return path


def test_defaults_without_a_file() -> None:
    config = load(None)
    assert config == StationConfig()
    assert (config.table.decks, config.table.gated, config.table.cut_policy) == (
        8,
        True,
        "one_more",
    )
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
    # the annotated example shows every default, but for the production install's paths
    assert example.journal.path == Path("/var/lib/baccarat-station/journal.db")
    assert example.api.token_file == Path("/var/lib/baccarat-station/tokens.toml")
    assert (
        example.model_copy(
            update={
                "journal": JournalConfig(),
                "reader": None,
                "source": "(defaults)",
                "api": example.api.model_copy(update={"token_file": ApiConfig().token_file}),
            }
        )
        == StationConfig()
    )
    assert example.reader == ReaderConfig()
    assert example.reader.sim == SimSettings()


def test_values_are_read(tmp_path: Path) -> None:
    config = load(
        write(
            tmp_path,
            """
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
"""
            % ("ab" * 32),
        )
    )
    assert (config.table.id, config.table.decks, config.table.gated) == ("baccarat-7", 6, False)
    assert config.api.port == 9000 and config.api.host == "0.0.0.0"
    assert config.api.tokens[0].role == "dealer"
    assert config.stop_command == b"\x13"
    assert config.api.metrics_address is None and config.log.format == "text"


@pytest.mark.parametrize(
    ("value", "address"),
    [("9101", ("127.0.0.1", 9101)), ("0.0.0.0:9101", ("0.0.0.0", 9101)), ("[::1]:0", ("::1", 0))],
)
def test_metrics_bind_a_port_alone_is_on_localhost(
    tmp_path: Path, value: str, address: tuple[str, int]
) -> None:
    config = load(write(tmp_path, f"[api]\nmetrics_bind = '{value}'\n[log]\nformat = 'json'"))
    assert config.api.metrics_address == address and config.log.format == "json"


def test_trusted_proxies_are_addresses_or_networks(tmp_path: Path) -> None:
    text = "[api]\ntrusted_proxies = [' 127.0.0.1', '0:0:0:0:0:0:0:1', '10.0.0.0/24']"
    config = load(write(tmp_path, text))
    assert config.api.trusted_proxies == ("127.0.0.1", "::1", "10.0.0.0/24")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[tabel]\nid = 'x'", "unknown section [tabel]"),
        ("[table]\ndeck = 6", "[table] deck: unknown key"),
        ("[table]\ndecks = 'six'", "[table] decks: expected a whole number"),
        ("[table]\ndecks = 0", "[table] decks: must be at least 1"),
        ("[table]\ngated = 1", "[table] gated: expected true or false"),
        ("[table]\ncut_policy = 'never'", "[table] cut_policy: must be one of"),
        ("[api]\nbind = '8000'", "[api] bind: expected HOST:PORT"),
        ("[api]\npublic_read = 'yes'", "[api] public_read: expected true or false"),
        (
            "[api]\ntokens = [{name = 'a', role = 'boss', sha256 = '%s'}]" % ("0" * 64),
            "[api] tokens[0].role: must be one of",
        ),
        (
            "[api]\ntokens = [{name = 'a', role = 'dealer', sha256 = 'abc'}]",
            "[api] tokens[0].sha256",
        ),
        ("[signals]\nwebhooks = ['ftp://x']", "[signals] webhooks[0]: expected an http"),
        ("[signals]\nstop_command = 'hex:zz'", "[signals] stop_command"),
        ("[reader]\ndriver = 'carrier-pigeon'", "[reader] driver"),
        ("[reader]\nbaud = 9600", "[reader] baud: unknown key"),
        # an unknown key in every section
        ("[journal]\npaht = 'j.db'", "[journal] paht: unknown key; the keys are path"),
        ("[api]\nport = 8000", "[api] port: unknown key; the keys are bind, public_read"),
        (
            "[api]\ntokens = [{name = 'a', role = 'dealer', sha256 = '%s', note = 'x'}]"
            % ("0" * 64),
            "[api] tokens[0].note: unknown key; the keys are name, role, sha256",
        ),
        (
            "[signals]\nwebhook = ['http://x']",
            "[signals] webhook[0]: expected a [[signals.webhook]] table",
        ),
        ("[reader.sim]\nspeed = 2", "[reader.sim] speed: unknown key; the keys are seed"),
        (
            "[reader]\ndriver = 'camera'\n[reader.camera]\nsource = 'x.avi'\nmodel = 'm'\nzoom = 2",
            "[reader.camera] zoom: unknown key; the keys are level, presence",
        ),
        ("[reader.pigeon]\nseed = 2", "[reader] pigeon: unknown key; the keys are driver, url"),
        ("source = 'x'", "unknown section [source]"),
        # strict types: no "8" for 8, no 1 for true, no 1.5 for a whole number
        ("[table]\ndecks = '8'", "[table] decks: expected a whole number, got '8'"),
        ("[table]\ndecks = 6.0", "[table] decks: expected a whole number, got 6.0"),
        ("[table]\ngated = 'true'", "[table] gated: expected true or false, got 'true'"),
        ("[table]\nid = 7", "[table] id: expected a string, got 7"),
        ("[api]\nallow_rig = 0", "[api] allow_rig: expected true or false, got 0"),
        ("[api]\ntokens = 'abc'", "[api] tokens: expected a list"),
        ("[api]\ntokens = ['abc']", "[api] tokens[0]: expected a table like"),
        ("[api]\ntokens = [{name = 'a', role = 'dealer'}]", "[api] tokens[0].sha256: required"),
        ("[journal]\npath = 3", "[journal] path: expected a path string, got 3"),
        ("[journal]\npath = ''", "[journal] path: must not be empty"),
        ("[signals]\nwebhooks = 'http://x'", "[signals] webhooks: expected a list"),
        (
            "[signals]\nwebhook_attempts = true",
            "[signals] webhook_attempts: expected a whole number",
        ),
        (
            "[signals]\nwebhook_timeout = '2'",
            "[signals] webhook_timeout: expected a number, got '2'",
        ),
        ("[reader]\nexclusive = 'no'", "[reader] exclusive: expected true or false, got 'no'"),
        ("[reader.sim]\nseed = 1.5", "[reader.sim] seed: expected a whole number, got 1.5"),
        ("[reader.sim]\ncut_depth = 3", "[reader.sim] cut_depth: at least 16 cards must stay"),
        (
            "[reader]\ndriver = 'camera'\n[reader.camera]\nsource = 'x.avi'\nmodel = 'm'\n"
            "realtime = 1",
            "[reader.camera] realtime: expected true or false, got 1",
        ),
        (
            "[reader]\ndriver = 'camera'\n[reader.camera]\nsource = 'x.avi'\nmodel = 'm'\n"
            "level = '110'",
            "[reader.camera] level: expected a whole number, got '110'",
        ),
        ("[reader]\ndriver = 'camera'", "[reader.camera]: required: the camera driver reads"),
        ("[reader]\nsim = 3", "[reader.sim]: expected a table of keys, got int"),
        # bounds, said in the message
        ("[table]\ndecks = 17", "[table] decks: must be at least 1 and at most 16, got 17"),
        (
            "[api]\nbind = '127.0.0.1:70000'",
            "[api] bind: expected HOST:PORT (e.g. 127.0.0.1:8000) "
            "with a port from 0 to 65535, got '127.0.0.1:70000'",
        ),
        (
            "[signals]\nwebhook_timeout = 0",
            "[signals] webhook_timeout: must be more than 0 seconds and at most 300 seconds, got 0",
        ),
        ("[signals]\nwebhook_timeout = 1e9", "[signals] webhook_timeout: must be more than 0"),
        (
            "[reader]\nframe_timeout = nan",
            "[reader] frame_timeout: must be more than 0 seconds and at most 60 seconds, got nan",
        ),
        (
            "[signals]\nwebhook_attempts = 0",
            "[signals] webhook_attempts: must be at least 1 and at most 100, got 0",
        ),
        (
            "[signals]\nwebhook_backoff = -1",
            "[signals] webhook_backoff: must be at least 0 seconds",
        ),
        ("[reader]\nbaudrate = 9600000", "[reader] baudrate: must be at most 4000000"),
        (
            "[reader]\nmax_frame = 100000",
            "[reader] max_frame: must be at least 1 byte and at most 4096 bytes, got 100000",
        ),
        (
            "[reader]\nreconnect_max = 86400",
            "[reader] reconnect_max: must be more than 0 seconds "
            "and at most 3600 seconds, got 86400",
        ),
        (
            "[reader.sim]\nfault_chance = 2",
            "[reader.sim] fault_chance: expected a number from 0 to 1, got 2",
        ),
        (
            "[reader]\ndriver = 'camera'\n[reader.camera]\nsource = 'x.avi'\nmodel = 'm'\n"
            "level = 300",
            "[reader.camera] level: expected a whole number from 0 to 255, got 300",
        ),
        # checks across keys
        (
            "[api]\ntokens = [{name = 'a', role = 'dealer', sha256 = '" + "0" * 64 + "'}, "
            "{name = 'a', role = 'viewer', sha256 = '" + "1" * 64 + "'}]",
            "[api] tokens[1].name: 'a' is used twice",
        ),
        (
            "[reader]\nreconnect_min = 5.0\nreconnect_max = 1.0",
            "[reader] reconnect_max: must be at least reconnect_min (5.0 s)",
        ),
        ("[log]\nformat = 'xml'", "[log] format: must be one of text, json, got 'xml'"),
        ("[log]\nlevel = 'INFO'", "[log] level: must be one of debug, info, warning, error"),
        ("[api]\nmetrics_bind = '9101x'", "[api] metrics_bind: expected HOST:PORT"),
        ("[api]\nmetrics_bind = '70000'", "[api] metrics_bind: expected HOST:PORT"),
        (
            "[api]\ntrusted_proxies = ['127.0.0.1', 'proxy.pit']",
            "[api] trusted_proxies: 'proxy.pit' is not an IP address or network",
        ),
        (
            "[api]\ntrusted_proxies = ['10.0.0.1/24']",
            "[api] trusted_proxies: '10.0.0.1/24' has host bits set: write '10.0.0.0/24'",
        ),
        ("[api]\ntrusted_proxies = ['*']", "[api] trusted_proxies: '*' is not an IP address"),
        ("[api]\ntrusted_proxies = '127.0.0.1'", "[api] trusted_proxies: expected"),
        ("table = 3", "[table]: expected a table"),
        ("[table\n", "not valid TOML"),
    ],
)
def test_errors_name_the_key(tmp_path: Path, text: str, words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load(path)
    assert words in str(err.value)
    assert str(path) in str(err.value)


def test_every_problem_is_listed(tmp_path: Path) -> None:
    path = write(tmp_path, "[table]\ndecks = 0\n[reader]\nbaudrate = '9600'\nparity = 3\n")
    with pytest.raises(ConfigError) as err:
        load(path)
    assert str(err.value).splitlines() == [
        f"{path}: [table] decks: must be at least 1 and at most 16, got 0",
        f"{path}: [reader] baudrate: expected a whole number, got '9600'",
        f"{path}: [reader] parity: expected a string, got 3",
    ]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the config"):
        load(tmp_path / "nope.toml")


def test_every_key_is_documented() -> None:
    """Each key's meaning is in the model (`Field(description=...)`), next to its default."""
    models: list[type[BaseModel]] = [
        StationConfig,
        TableConfig,
        JournalConfig,
        ApiConfig,
        TokenEntry,
        SignalsConfig,
        LogConfig,
        ReaderConfig,
        CameraSettings,
        PassageSettings,
        SimSettings,
    ]
    for model in models:
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"


#: The config file's sections and the model of each (the example is checked against them).
SECTION_MODELS: dict[str, type[BaseModel]] = {
    "table": TableConfig,
    "reader": ReaderConfig,
    "reader.sim": SimSettings,
    "reader.camera": CameraSettings,
    "journal": JournalConfig,
    "api": ApiConfig,
    "signals": SignalsConfig,
    "signals.webhook": WebhookConfig,
    "protection": ProtectionConfig,
    "log": LogConfig,
    "floor": FloorConfig,
    "display": DisplayConfig,
    "dashboard": DashboardConfig,
}
#: Keys whose example value is not the default: where a production install keeps its
#: files, and the camera's model (a file the operator makes; the default is none).
NOT_THE_DEFAULT = {("journal", "path"), ("api", "token_file"), ("reader.camera", "model")}


def example_keys(text: str) -> dict[tuple[str, str], Any]:
    """Every `key = value` of the example, commented out or not, by (section, key)."""
    found: dict[tuple[str, str], Any] = {}
    section = ""
    for line in text.splitlines():
        bare = line.removeprefix("# ").strip()
        if bare.startswith("[") and bare.endswith("]") and "=" not in bare:
            section = bare.strip("[]")
            continue
        if "=" in bare and bare.split("=", 1)[0].strip().isidentifier():
            try:
                parsed = tomllib.loads(bare)
            except tomllib.TOMLDecodeError:
                continue  # prose with an = in it
            ((key, value),) = parsed.items()
            assert (section, key) not in found, f"[{section}] {key} is shown twice"
            found[(section, key)] = value
    return found


def test_the_example_shows_every_key_with_its_default() -> None:
    """config/example.toml and the model say the same: a key added to a model but not to
    the example (or shown with another default) fails here."""
    shown = example_keys((ROOT / "config" / "example.toml").read_text())
    expected = {
        (section, key)
        for section, model in SECTION_MODELS.items()
        for key in model.model_fields
        if not (model is ReaderConfig and key in ReaderConfig.SUB_TABLES)
    }
    assert set(shown) == expected, (
        f"missing from the example: {sorted(expected - set(shown))}; "
        f"not in the model: {sorted(set(shown) - expected)}"
    )
    for (section, key), value in shown.items():
        field = SECTION_MODELS[section].model_fields[key]
        if (section, key) in NOT_THE_DEFAULT or field.is_required() or field.default is None:
            continue  # TOML has no null: such a key is shown with an example value
        default = field.get_default(call_default_factory=True)
        if isinstance(default, Path):
            default = str(default)
        elif isinstance(default, bytes):
            default = default.decode("latin-1")
        elif isinstance(default, tuple):
            default = list(default)
        assert value == default and type(value) is type(default), (
            f"[{section}] {key}: the example shows {value!r}, the default is {default!r}"
        )
    for section, key in NOT_THE_DEFAULT:
        default = SECTION_MODELS[section].model_fields[key].default
        assert str(default) in (ROOT / "config" / "example.toml").read_text() or not default


def test_relative_paths_are_relative_to_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "etc" / "station"
    folder.mkdir(parents=True)
    (folder / "codes.csv").write_text("7,AS\n8,KD\n")
    path = folder / "station.toml"
    path.write_text("""
[reader]
driver = "camera"
codec = "table:codes.csv"
[reader.camera]
source = "clips/shoe.avi"
model = "../models/deck.npz"
[journal]
path = "var/journal.db"
[api]
token_file = "/srv/tokens.toml"
""")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    for given in (path, Path("../etc/station/station.toml")):
        config = load(given)
        assert config.journal.path == folder / "var" / "journal.db"
        assert config.api.token_file == Path("/srv/tokens.toml")  # absolute: as it is
        assert config.reader is not None and config.reader.camera is not None
        assert config.reader.codec == f"table:{folder / 'codes.csv'}"
        assert config.reader.camera.source == str(folder / "clips" / "shoe.avi")
        assert config.reader.camera.model == str(tmp_path / "etc" / "models" / "deck.npz")
    # a device index and a URL are not paths
    for source in ("0", "rtsp://127.0.0.1:9/cam"):
        path.write_text(f'[reader.camera]\nsource = "{source}"\nrecogniser = "barcode"\n')
        camera = load(path).reader.camera  # type: ignore[union-attr]
        assert camera is not None and camera.source == source
    # without a file they stay relative to the working directory
    assert load(None).journal.path == Path("var/journal.db")


def test_token_add_writes_where_the_station_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`station token add --config sub/dir/station.toml` from another directory writes the
    token file next to the config, where the station (started anywhere) reads it."""
    config = tmp_path / "sub" / "dir" / "station.toml"
    (config.parent / "state").mkdir(parents=True)  # the service's state folder, as it makes it
    config.write_text('[api]\ntoken_file = "state/tokens.toml"\n')
    monkeypatch.chdir(tmp_path)
    argv = ["token", "add", "--role", "dealer", "--name", "gs", "--config"]
    assert main([*argv, "sub/dir/station.toml"]) == 0
    assert (tmp_path / "sub" / "dir" / "state" / "tokens.toml").is_file()
    assert not (tmp_path / "state").exists()
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    station = load(config)
    assert [e.name for e in read_token_file(station.api.token_file)] == ["gs"]
    assert main(["token", "list", "--config", str(config)]) == 0
    assert "gs\tdealer" in capsys.readouterr().out


def test_models_are_frozen_and_strict_in_code() -> None:
    config = load(None)
    with pytest.raises(ValueError, match="frozen"):
        config.table.decks = 6  # type: ignore[misc]
    with pytest.raises(ValueError, match="decks"):
        TableConfig(decks="6")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="extra"):
        ReaderConfig(baud=9600)  # type: ignore[call-arg]


def test_sim_shoe_reads_the_reader_through_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`station sim-shoe --config` checks the file as `station run` does (no TOML of its own)."""
    path = write(tmp_path, "[reader]\nframing = 'slip'\n")
    assert main(["sim-shoe", "--config", str(path)]) == 2
    assert f"{path}: [reader] framing: 'slip' is not allowed" in capsys.readouterr().err
    path = write(tmp_path, "[reader]\nmax_frame = 64\n[reader.sim]\nspeed = 2\n")
    assert main(["sim-shoe", "--config", str(path)]) == 2
    assert f"{path}: [reader.sim] speed: unknown key" in capsys.readouterr().err
    # the flags are checked by the same model
    assert main(["sim-shoe", "--prefix", "\\r", "--suffix", "x"]) == 2
    assert "[reader] prefix: a line's prefix or suffix cannot hold CR or LF" in (
        capsys.readouterr().err
    )
