"""Issue 32, attack 10, at the floor service (a real `station floor`): ten wrong tokens
from an address never lock a supervisor's valid token out of the floor view's decisions;
the wrong ones stay throttled."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from station.api.auth import THROTTLED
from tests.floor.kit import FloorBroker
from tests.floor.signedkit import floor_process

pytestmark = [pytest.mark.floor, pytest.mark.server]


def test_wrong_tokens_never_lock_a_supervisor_out_of_the_floor(
    floor: FloorBroker, tmp_path: Path
) -> None:
    with floor_process(tmp_path / "floor", floor, {"table-1": ""}) as service:
        whoami = f"{service.url}/api/whoami"
        wrong = [
            httpx.get(whoami, headers={"Authorization": f"Bearer guess-{n}"}).status_code
            for n in range(12)
        ]
        assert wrong == [401] * 10 + [429] * 2
        answer = httpx.get(whoami, headers=service.headers("supervisor"))
        assert answer.status_code == 200, answer.text
        assert answer.json()["role"] == "supervisor"
        again = httpx.get(whoami, headers={"Authorization": "Bearer guess-13"})
        assert again.status_code == 429 and again.json()["detail"] == THROTTLED
        assert httpx.get(f"{service.url}/api/floor/tables", headers=service.headers()).is_success
