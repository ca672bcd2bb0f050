"""A real `station run` process, for the tests of what only a process shows: its stop on
SIGTERM (as systemd stops it), its log as written to a file, its open-files limit, its
memory, its sockets as the kernel holds them; and the `station` commands (`key`,
`journal`, ...) run as processes of their own beside it.

A test writes the config in its folder (`write_config`: a token per role, a free port),
then runs the station from it (`running`), as often as it likes: each run keeps its own
log, `station-N.log` beside the config.
"""

from __future__ import annotations

import contextlib
import resource
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from station.live.config import load
from tests.conftest import spawn_run, spawn_station
from tests.netkit import free_port
from tests.service.kit import make_tokens

#: The table of every config `write_config` writes.
TABLE = "t-proc"
#: The burn after a shoe: 2H says two more cards are burned.
BURN = [{"type": "card", "card": c} for c in ("2H", "KS", "QD")]
SUITS = "SHDC"
#: Seconds a request, a start, a stop or a command may take before the test fails.
PATIENCE = 30


def natural_round(n: int) -> list[dict[str, Any]]:
    """Round `n` of a shoe: bets closed, then the player's natural 9 (9 and a ten-card)
    against the banker's 7, four cards, the suits turning so that a whole shoe of these
    rounds deals no card more often than eight decks hold it."""
    s = SUITS[n % 4]
    t = SUITS[(n // 4) % 4]
    cards = (f"9{s}", f"2{t}", f"K{s}", f"5{t}")
    return [{"type": "close_bets"}] + [{"type": "card", "card": c} for c in cards]


@dataclass
class StationProcess:
    """A `station run` process, ready, and what it takes to speak to it."""

    url: str
    port: int
    proc: subprocess.Popen[Any]
    log: Path  # its stderr: the log records
    out: Path  # its stdout: the lines it prints for the operator at start
    tokens: dict[str, str]

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://") + "/api/live"

    def post(self, event: dict[str, Any], role: str = "rig") -> dict[str, Any]:
        """`event` posted as `role`; its verdict (the answer must be a 200)."""
        answer = httpx.post(
            f"{self.url}/api/events", json=event, headers=self.headers(role), timeout=PATIENCE
        )
        assert answer.status_code == 200, answer.text
        verdict: dict[str, Any] = answer.json()
        return verdict

    def get(self, path: str, role: str = "viewer") -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers=self.headers(role), timeout=PATIENCE)

    def rows(self) -> list[dict[str, Any]]:
        """Every row of its journal, page after page."""
        found: list[dict[str, Any]] = []
        while True:
            after = found[-1]["seq"] if found else 0
            answer = self.get(f"/api/journal?after={after}&limit=1000")
            assert answer.status_code == 200, answer.text
            page: list[dict[str, Any]] = answer.json()["events"]
            if not page:
                return found
            found.extend(page)

    def rss(self) -> int:
        """The process's resident memory now, in bytes (/proc)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise KeyError("VmRSS")

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    return repr(value)


def write_config(
    folder: Path, journal: str = "", extra: str = "", **api: Any
) -> tuple[Path, dict[str, str]]:
    """`folder/station.toml`, table `TABLE`, its journal in `var/` beside it, the API on a
    free port with a token per role (rig tokens allowed): `journal` more lines of
    `[journal]`, `api` more keys of `[api]`, `extra` more sections. The config and the
    tokens by role."""
    tokens, entries = make_tokens()
    listed = ", ".join(
        f'{{name = "{e.name}", role = "{e.role}", sha256 = "{e.sha256}"}}' for e in entries
    )
    keys = "\n".join(f"{key} = {_toml(value)}" for key, value in api.items())
    config = folder / "station.toml"
    config.write_text(f"""
[table]
id = "{TABLE}"
[journal]
path = "var/journal.db"
{journal}
[api]
bind = "127.0.0.1:{free_port()}"
allow_rig = true
tokens = [{listed}]
{keys}
{extra}
""")
    return config, tokens


def raise_own_open_files(at_least: int = 4096) -> None:
    """This process may open `at_least` files (sockets) if its hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = at_least if hard == resource.RLIM_INFINITY else min(at_least, hard)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _open_files_limit(nofile: int | None) -> Callable[[], None] | None:
    """What the child runs before `station`: its open-files limit set (soft and hard)."""
    if nofile is None:
        return None

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    return limited


@contextlib.contextmanager
def running(
    config: Path,
    tokens: dict[str, str],
    log_level: str = "warning",
    nofile: int | None = None,
) -> Iterator[StationProcess]:
    """`station run --config CONFIG` until the block ends, ready (`/api/ready` answers)
    when it begins, under an open-files limit of `nofile` if given. Its log goes to
    `station-N.log` beside the config, what it prints to `station-N.out`. At the end it
    is stopped with SIGTERM, as systemd stops it, and must exit within `PATIENCE`."""
    api = load(config, secrets=False).api
    n = len(list(config.parent.glob("station-*.log")))
    log, out = config.with_name(f"station-{n}.log"), config.with_name(f"station-{n}.out")
    with log.open("w") as err_sink, out.open("w") as out_sink:
        proc = spawn_run(
            config,
            log_level,
            stdout=out_sink,
            stderr=err_sink,
            preexec_fn=_open_files_limit(nofile),
        )
    station = StationProcess(f"http://{api.bind}", api.port, proc, log, out, tokens)
    try:
        deadline = time.monotonic() + PATIENCE
        while True:
            assert proc.poll() is None, station.log_text()
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{station.url}/api/ready", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, "the station did not get ready"
            time.sleep(0.05)
        yield station
    finally:
        proc.terminate()
        try:
            proc.wait(PATIENCE)
        except subprocess.TimeoutExpired as late:
            proc.kill()
            proc.wait(5)
            raise AssertionError("the station did not stop on SIGTERM") from late


def station(*args: str) -> subprocess.CompletedProcess[str]:
    """`station ARGS` as a process of its own; its output as text."""
    with spawn_station(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        try:
            out, err = p.communicate(timeout=4 * PATIENCE)
        except subprocess.TimeoutExpired:
            p.kill()
            raise
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)
