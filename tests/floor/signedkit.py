"""Signed journals for the floor's tests: a station's journal written with its key (every
row signed by the station's own `Journal`), rows forged as a holder of the table's broker
login would (the hash recomputed by the station's own code, no key), and the station's
processes with a key and a floor: `station run` and `station floor`, each a real process."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx
import orjson

from station.core.table import Table
from station.live.journal import Journal
from station.shared.keychain import Endorsement
from station.shared.messages import JournalMessage
from station.shared.rows import Pending, Row, row_hash
from station.shared.signing import SigningKey
from tests.conftest import spawn_station
from tests.floor.floorkit import shoe_events
from tests.floor.kit import SITE, FloorBroker
from tests.netkit import free_port
from tests.service.kit import make_tokens


def signed_journal(
    path: Path,
    table_id: str,
    key: SigningKey | None,
    events: list[dict[str, Any]],
    endorsements: tuple[Endorsement, ...] = (),
) -> Journal:
    """A station's journal of `events` decided by the core, signed with `key` (open: the
    caller closes it). A journal already there goes on (with `endorsements`, a new key)."""
    table = Table(decks=1)
    journal = Journal(path)
    journal.start(table_id, table, key, endorsements)
    journal.replay_into(table)
    for event in events:
        verdict = dict(table.decide(event).verdict)
        journal.append([Pending("api", "test", event, verdict)])
    return journal


def events(count: int, seed: int = 3) -> list[dict[str, Any]]:
    """The first `count` events of a simulated one-deck shoe."""
    return shoe_events(seed=seed, decks=1)[:count]


class Linked(Protocol):
    """A row as far as the next one links to it."""

    @property
    def seq(self) -> int: ...

    @property
    def hash(self) -> str: ...


def forged(table_id: str, after: Linked, **event: Any) -> bytes:
    """A row that follows `after` as its station's would, its hash recomputed with the
    station's own code: what a holder of the table's broker login can make (no key)."""
    seq, prev = after.seq + 1, after.hash
    body = {"type": "notice", "message": "all is well", **event}
    text = orjson.dumps(body, option=orjson.OPT_SORT_KEYS).decode()
    ts = "2026-12-01T00:00:00.000000Z"
    digest = row_hash(seq, ts, "station", "station", "notice", text, None, prev)
    row = Row(seq, ts, "station", "station", "notice", body, None, prev, digest)
    return JournalMessage.of(table_id, row).encode()


@dataclass
class FloorProcess:
    """A `station floor` process: its URL, its tokens, its log."""

    url: str
    tokens: dict[str, str]
    log: Path
    process: subprocess.Popen[Any]

    def headers(self, role: str = "viewer") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    def get(self, path: str) -> Any:
        answer = httpx.get(f"{self.url}{path}", headers=self.headers(), timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def table(self, table_id: str) -> dict[str, Any]:
        found: dict[str, Any] = next(
            t for t in self.get("/api/floor/tables")["tables"] if t["id"] == table_id
        )
        return found

    def alerts(self, kind: str) -> list[dict[str, Any]]:
        return [a for a in self.get("/api/floor/alerts")["alerts"] if a["kind"] == kind]

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(
            f"{self.url}{path}", json=body, headers=self.headers("supervisor"), timeout=10
        )


@contextlib.contextmanager
def floor_process(
    tmp: Path,
    broker: FloorBroker,
    tables: dict[str, str],
    offline_after: float = 3.0,
    floor_lines: str = "",
) -> Iterator[FloorProcess]:
    """`station floor` on `broker` (its admin user), a free port, a token per role, one
    `[[table]]` per entry of `tables` (id -> public key, "" for none), `floor_lines` more
    lines of `[floor]`; ready when the block begins, stopped (SIGTERM) after it (again in
    the same `tmp`: the same archive)."""
    tmp.mkdir(parents=True, exist_ok=True)
    tokens, entries = make_tokens()
    listed = ", ".join(
        f'{{name = "{e.name}", role = "{e.role}", sha256 = "{e.sha256}"}}' for e in entries
    )
    port = free_port()
    table_lines = "".join(
        f'[[table]]\nid = "{t}"\npublic_key = "{key}"\n' for t, key in tables.items()
    )
    config = tmp / "floor.toml"
    config.write_text(f"""
[broker]
url = "{broker.url}"
site = "{SITE}"
user = "floor"
password = "env:FLOOR_ADMIN_PASSWORD"
ack_wait = 1.0
[archive]
path = "floor.db"
[floor]
offline_after = {offline_after}
{floor_lines}
[protection]
enabled = false
[api]
bind = "127.0.0.1:{port}"
token_file = "tokens.toml"
tokens = [{listed}]
{table_lines}
""")
    log = tmp / "floor.log"
    with open(log, "w") as sink:
        process = spawn_station(
            "floor", "--config", str(config), "--log-level", "info",
            stdout=subprocess.DEVNULL, stderr=sink,
            env={"FLOOR_ADMIN_PASSWORD": broker.admin_password},
        )  # fmt: skip
    running = FloorProcess(f"http://127.0.0.1:{port}", tokens, log, process)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log.read_text()
            with contextlib.suppress(httpx.TransportError):
                health = httpx.get(f"{running.url}/api/health", timeout=2).json()
                if health["status"] == "ok" and health["broker_up"]:
                    break
            assert time.monotonic() < deadline, "the floor service did not start"
            time.sleep(0.05)
        yield running
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def floor_section(broker: FloorBroker, table: str) -> str:
    """A station's `[floor]` on `broker` as `table` (its password from $FLOOR_PASSWORD)."""
    user = broker.user(table)
    return f"""
[floor]
url = "{broker.url}"
site = "{user.site}"
user = "{user.user}"
password = "env:FLOOR_PASSWORD"
heartbeat_interval = 1.0
timeout = 1.0
"""


def wait_until(check: Any, what: str, timeout: float = 30.0) -> Any:
    """`check()` until it is truthy (returned), or fail saying what was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.1)
