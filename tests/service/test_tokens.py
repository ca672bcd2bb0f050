"""Tokens: stored as hashes only, managed by `station token`, seen at once by the service."""

from __future__ import annotations

from pathlib import Path

import pytest

from station.cli import main
from station.shared.config import TokenEntry
from station.shared.tokens import TokenStore, allows, read_token_file, token_hash
from tests.conftest import run_station


def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "station.toml"
    path.write_text(f'[api]\ntoken_file = "{tmp_path / "tokens.toml"}"\n')
    return path


def test_roles_are_ranked() -> None:
    assert allows("supervisor", "dealer") and allows("dealer", "viewer")
    assert not allows("viewer", "dealer") and not allows("dealer", "supervisor")
    assert allows("rig", "supervisor") and allows("rig", "rig")
    assert not allows("supervisor", "rig")


def test_add_list_revoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = config_file(tmp_path)
    assert (
        main(["token", "add", "--role", "dealer", "--name", "game-server", "--config", str(config)])
        == 0
    )
    token = capsys.readouterr().out.strip()
    assert len(token) >= 40
    text = (tmp_path / "tokens.toml").read_text()
    assert token not in text and token_hash(token) in text
    store = TokenStore(token_file=tmp_path / "tokens.toml")
    who = store.identify(token)
    assert who is not None and (who.name, who.role) == ("game-server", "dealer")
    assert (
        main(["token", "add", "--role", "viewer", "--name", "game-server", "--config", str(config)])
        == 2
    )
    assert "taken" in capsys.readouterr().err
    assert main(["token", "list", "--config", str(config)]) == 0
    assert "game-server\tdealer" in capsys.readouterr().out
    assert main(["token", "revoke", "game-server", "--config", str(config)]) == 0
    assert store.identify(token) is None  # the running store sees the file change
    assert main(["token", "revoke", "game-server", "--config", str(config)]) == 2
    assert read_token_file(tmp_path / "tokens.toml") == []


def test_unknown_and_memory_tokens(tmp_path: Path) -> None:
    entry = TokenEntry(name="cfg", role="supervisor", sha256=token_hash("s3cret-token"))
    store = TokenStore((entry,))
    assert store.identify("wrong") is None
    who = store.identify("s3cret-token")
    assert who is not None and who.role == "supervisor"
    demo = store.add_memory("demo-viewer", "viewer")
    demo_who = store.identify(demo)
    assert demo_who is not None and demo_who.name == "demo-viewer"


def test_list_says_where_there_are_no_tokens(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    empty = run_station("token", "list", "--config", str(config))
    assert (empty.returncode, empty.stdout) == (0, b"")
    assert empty.stderr.decode() == (
        f"station token list: no tokens in {tmp_path / 'tokens.toml'} "
        "(add one with `station token add`)\n"
    )
    run_station("token", "add", "--role", "viewer", "--name", "wall", "--config", str(config))
    listed = run_station("token", "list", "--config", str(config))
    assert (listed.returncode, listed.stderr) == (0, b"")
    assert listed.stdout.decode() == f"wall\tviewer\t({tmp_path / 'tokens.toml'})\n"
