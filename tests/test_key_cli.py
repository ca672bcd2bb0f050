"""`station key init|show|rotate`: the key pair made once (0600, never overwritten), its
public key printed again, a rotation endorsed by the old key that then is gone; and the
commands that connect to nothing (`key`, `token`, `journal verify`) work in a shell where
the broker's password and the webhooks' secret variables are not set."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from station.core.table import Table
from station.live.config import ConfigError, load
from station.live.journal import Journal
from station.live.journal.keys import read_endorsements
from station.shared.signing import PublicKey, SigningKey
from tests.conftest import run_station


def config_file(tmp_path: Path, extra: str = "") -> Path:
    config = tmp_path / "station.toml"
    config.write_text(
        f'[journal]\npath = "var/journal.db"\nsigning_key = "keys/station.pem"\n{extra}'
    )
    (tmp_path / "keys").mkdir(exist_ok=True)
    return config


def test_init_makes_a_private_key_once_and_show_prints_its_public_key(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    made = run_station("key", "init", "--config", str(config))
    assert made.returncode == 0, made.stderr
    key_file = tmp_path / "keys" / "station.pem"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    public = PublicKey.from_text(made.stdout.decode())
    assert public == SigningKey.load(key_file).public
    assert public.fingerprint.encode() in made.stderr
    assert b"PRIVATE" not in made.stdout + made.stderr  # the secret is never printed
    shown = run_station("key", "show", "--config", str(config))
    assert shown.returncode == 0 and shown.stdout == made.stdout
    before = key_file.read_bytes()
    again = run_station("key", "init", "--config", str(config))
    assert again.returncode == 2 and b"never overwritten" in again.stderr
    assert key_file.read_bytes() == before


def test_a_config_without_a_key_says_where_to_name_it(tmp_path: Path) -> None:
    config = tmp_path / "station.toml"
    config.write_text('[journal]\npath = "j.db"\n')
    for action in ("init", "show", "rotate"):
        done = run_station("key", action, "--config", str(config))
        assert done.returncode == 2
        assert b"[journal] signing_key is not set" in done.stderr
    missing = config_file(tmp_path)
    done = run_station("key", "show", "--config", str(missing))
    assert done.returncode == 2 and b"station key init" in done.stderr


def test_rotate_has_the_old_key_endorse_the_new_and_destroys_the_old(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    key_file = tmp_path / "keys" / "station.pem"
    first = PublicKey.from_text(run_station("key", "init", "--config", str(config)).stdout.decode())
    rotated = run_station("key", "rotate", "--config", str(config))
    assert rotated.returncode == 0, rotated.stderr
    second = PublicKey.from_text(rotated.stdout.decode())
    assert second != first and SigningKey.load(key_file).public == second  # the old key is gone
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert not (tmp_path / "keys" / "station.pem.new").exists()
    third = PublicKey.from_text(
        run_station("key", "rotate", "--config", str(config)).stdout.decode()
    )
    (one, two) = read_endorsements(tmp_path / "keys" / "station.pem.rotations")
    assert (one.old, one.new, two.old, two.new) == (first, second, second, third)
    assert one.valid and two.valid
    assert not first.verify_endorsement(third, one.signature)  # it endorses its new key only


def test_an_interrupted_rotation_is_refused_until_cleared(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    run_station("key", "init", "--config", str(config))
    left = tmp_path / "keys" / "station.pem.new"
    SigningKey.generate().save(left)
    done = run_station("key", "rotate", "--config", str(config))
    assert done.returncode == 2 and b"a rotation was interrupted" in done.stderr


UNSET = """
[floor]
url = "nats://127.0.0.1:4222"
user = "table-1"
password = "env:STATION_TEST_BROKER_PASSWORD"
[[signals.webhook]]
url = "http://127.0.0.1:9/hook"
secret = "env:STATION_TEST_WEBHOOK_SECRET"
"""


def test_commands_that_connect_to_nothing_need_no_broker_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STATION_TEST_BROKER_PASSWORD", raising=False)
    monkeypatch.delenv("STATION_TEST_WEBHOOK_SECRET", raising=False)
    config = config_file(tmp_path, UNSET)
    with pytest.raises(ConfigError, match="STATION_TEST_BROKER_PASSWORD is not set"):
        load(config)  # what connects still needs it: `station run` stops at once
    assert run_station("key", "init", "--config", str(config)).returncode == 0
    assert run_station("key", "show", "--config", str(config)).returncode == 0
    monkeypatch.chdir(tmp_path)  # the default token file, var/tokens.toml, is the cwd's
    (tmp_path / "var").mkdir(exist_ok=True)  # the state folder the service makes
    added = run_station(
        "token", "add", "--role", "viewer", "--name", "pit", "--config", str(config)
    )
    assert added.returncode == 0, added.stderr
    listed = run_station("token", "list", "--config", str(config))
    assert listed.returncode == 0 and b"pit\tviewer" in listed.stdout
    assert run_station("token", "revoke", "pit", "--config", str(config)).returncode == 0
    offline = load(config, secrets=False)
    with Journal(offline.journal.path) as journal:
        journal.start("table-1", Table())
    verified = run_station("journal", "verify", "--config", str(config))
    assert verified.returncode == 0, verified.stderr
    with pytest.raises(RuntimeError, match="without its secrets"):
        offline.floor.connect_options()  # such a config never connects by mistake
