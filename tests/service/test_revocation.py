"""A revoked token loses its open WebSocket within a second, as it loses HTTP at once."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from station.shared.config import TokenEntry
from station.shared.tokens import new_token, token_hash, write_token_file
from tests.service.kit import make_config, serve

pytestmark = pytest.mark.server


def test_revoking_a_token_closes_its_websocket(tmp_path: Path) -> None:
    config, tokens = make_config(tmp_path)
    watcher = new_token()
    token_file = config.api.token_file
    entry = TokenEntry(name="surveillance", role="viewer", sha256=token_hash(watcher))
    write_token_file(token_file, [entry])
    with (
        serve(config, tokens) as live,
        connect(f"{live.ws_url}?token={tokens['viewer']}") as kept,
        connect(f"{live.ws_url}?token={watcher}") as doomed,
    ):
        assert doomed.recv(timeout=5)  # hello
        assert kept.recv(timeout=5)
        write_token_file(token_file, [])  # `station token revoke surveillance`
        revoked_at = time.monotonic()
        headers = {"Authorization": f"Bearer {watcher}"}
        assert httpx.get(f"{live.url}/api/state", headers=headers).status_code == 401
        try:
            while True:
                doomed.recv(timeout=3)
        except ConnectionClosed as closed:
            assert closed.rcvd is not None
            assert (closed.rcvd.code, closed.rcvd.reason) == (1008, "the token was revoked")
        assert time.monotonic() - revoked_at < 1.5
        live.post({"type": "shoe"}, "dealer")  # the other socket still gets rows
        assert b'"row"' in kept.recv(timeout=5).encode()
