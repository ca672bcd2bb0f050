"""Tokens: stored as hashes only, managed by `station token`, seen at once by the service."""

from __future__ import annotations

import logging
import os
import shutil
import stat
from pathlib import Path

import pytest

from station.cli import main
from station.shared.config import TokenEntry
from station.shared.tokens import TokenStore, allows, read_token_file, token_hash
from tests.conftest import run_station
from tests.userkit import SERVICE_UID, as_root, in_child_as, read_as_service, state_folder


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


# -- the token file's owner: `sudo station token add` must not take it from the service --


@as_root
def test_root_token_add_keeps_the_service_users_file(tmp_path: Path) -> None:
    """`sudo station token add` (a process of its own, as root) on the service's token
    file keeps its owner, group and mode: the service's user still reads it, and a
    second add as well as a revoke keep them too."""
    folder = state_folder()
    try:
        tokens = folder / "tokens.toml"
        config = tmp_path / "station.toml"
        config.write_text(f'[api]\ntoken_file = "{tokens}"\n')
        first = run_station(
            "token", "add", "--role", "viewer", "--name", "a", "--config", str(config)
        )
        assert first.returncode == 0, first.stderr
        st = tokens.stat()  # a new file in the service's folder is the folder owner's
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (SERVICE_UID, SERVICE_UID, 0o600)
        os.chmod(tokens, 0o640)  # an operator's choice, kept as well
        for args in (("add", "--role", "dealer", "--name", "b"), ("revoke", "a")):
            done = run_station("token", *args, "--config", str(config))
            assert done.returncode == 0, done.stderr
            st = tokens.stat()
            assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (
                SERVICE_UID,
                SERVICE_UID,
                0o640,
            )
        seen = read_as_service(tokens)
        assert seen.returncode == 0 and b'name = "b"' in seen.stdout and b'"a"' not in seen.stdout
        assert [p.name for p in folder.iterdir()] == ["tokens.toml"]  # no temp file left
    finally:
        shutil.rmtree(folder)


@as_root
def test_a_user_who_cannot_keep_the_owner_is_refused(tmp_path: Path) -> None:
    """Another user than the file's (not root), who may write in its folder: refused with
    what to run, the file untouched, no traceback."""
    folder = state_folder()
    try:
        os.chmod(folder, 0o777)
        tokens = folder / "tokens.toml"
        tokens.write_text("")
        os.chmod(tokens, 0o666)  # readable, but root's
        config = folder / "station.toml"
        config.write_text(f'[api]\ntoken_file = "{tokens}"\n')
        os.chmod(config, 0o644)
        before = tokens.read_bytes()
        status, err = in_child_as(
            SERVICE_UID,
            ["token", "add", "--role", "viewer", "--name", "x", "--config", str(config)],
        )
        assert status == 2
        assert "token file" in err and "root's" in err and "sudo -u root" in err, err
        assert "Traceback" not in err
        assert tokens.read_bytes() == before and tokens.stat().st_uid == 0
        assert sorted(p.name for p in folder.iterdir()) == ["station.toml", "tokens.toml"]
    finally:
        shutil.rmtree(folder)


@as_root
def test_a_station_that_cannot_read_its_token_file_says_what_to_chown(tmp_path: Path) -> None:
    """The token file re-owned by root (0600): the service's user is told at start which
    file and what to chown (exit 2, no traceback)."""
    folder = state_folder()
    try:
        tokens = folder / "tokens.toml"
        tokens.write_text("")
        os.chmod(tokens, 0o600)
        status, err = in_child_as(
            SERVICE_UID, ["token", "list", "--config", str(config_in(folder, tokens))]
        )
        assert status == 2, err
        assert f"sudo chown nobody {tokens}" in err and "Traceback" not in err, err
    finally:
        shutil.rmtree(folder)


def config_in(folder: Path, tokens: Path) -> Path:
    config = folder / "station.toml"
    config.write_text(f'[api]\ntoken_file = "{tokens}"\n')
    os.chmod(config, 0o644)
    return config


def test_a_running_store_says_when_its_file_cannot_be_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A running service whose token file becomes unreadable keeps the last list it read
    and says so once in its log; read again, it says that too and takes the new tokens."""
    config = config_file(tmp_path)
    assert main(["token", "add", "--role", "viewer", "--name", "a", "--config", str(config)]) == 0
    tokens = tmp_path / "tokens.toml"
    store = TokenStore(token_file=tokens)
    good = tokens.read_bytes()
    tokens.write_text("[[token]\nbroken")  # a half-edited file
    with caplog.at_level(logging.INFO, logger="station.tokens"):
        for _ in range(3):
            assert store.identify("x") is None
        said = [r.getMessage() for r in caplog.records]
        assert len(said) == 1 and f"token file {tokens}" in said[0]
        assert "not seen" in said[0]
        tokens.write_bytes(
            good
            + b'\n[[token]]\nname = "b"\nrole = "dealer"\nsha256 = "'
            + token_hash("new-one").encode()
            + b'"\n'
        )
        who = store.identify("new-one")
        assert who is not None and who.name == "b"
        assert "read again" in caplog.records[-1].getMessage()


def test_token_add_without_the_folder_says_what_to_run(tmp_path: Path) -> None:
    """The state folder is not there yet (the unit never started): a clear message naming
    the folder and the commands that make it, exit 2, no traceback; with --owner (root),
    the folder is made for that user."""
    tokens = tmp_path / "missing" / "tokens.toml"
    config = tmp_path / "station.toml"
    config.write_text(f'[api]\ntoken_file = "{tokens}"\n')
    done = run_station("token", "add", "--role", "viewer", "--name", "a", "--config", str(config))
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err, err
    assert f"{tokens.parent} does not exist" in err and "--owner" in err
    assert "install -d -o baccarat -g baccarat -m 0750" in err
    assert not tokens.parent.exists()
    if os.geteuid() != 0:
        return
    made = run_station(
        "token",
        "add",
        "--role",
        "viewer",
        "--name",
        "a",
        "--owner",
        "nobody",
        "--config",
        str(config),
    )
    assert made.returncode == 0, made.stderr
    for path, mode in ((tokens.parent, 0o750), (tokens, 0o600)):
        st = path.stat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (SERVICE_UID, mode)


@pytest.mark.parametrize("service", ["floor", "run"])
def test_a_service_with_no_token_says_nobody_can_log_in(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, service: str
) -> None:
    """A floor (or station) with no `[api] tokens` and no token file yet (a floor-only
    machine) starts, but says loudly that nobody can log in and what to run; with a
    token, it says nothing."""
    from station.commands.startup import Startup
    from station.floor.config import FloorApiConfig
    from station.live.api_config import ApiConfig

    tokens = tmp_path / "tokens.toml"
    api = (FloorApiConfig if service == "floor" else ApiConfig)(token_file=tokens)
    start = Startup(service, logging.getLogger(f"station.{service}"))
    with caplog.at_level(logging.WARNING):
        start.token_store(api)
    (said,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "nobody can log in" in said.getMessage() and "station token add" in said.getMessage()
    assert f"{tokens} is missing" in said.getMessage()
    caplog.clear()
    config = config_file(tmp_path)
    assert main(["token", "add", "--role", "viewer", "--name", "a", "--config", str(config)]) == 0
    with caplog.at_level(logging.WARNING):
        start.token_store(api)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
