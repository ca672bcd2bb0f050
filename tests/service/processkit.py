"""A real `station run` process for the tests of what only a process shows: its open-files
limit, its memory, its log as written (to a file), its sockets as the kernel holds them."""

from __future__ import annotations

import contextlib
import resource
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import spawn_run
from tests.netkit import free_port
from tests.service.kit import make_tokens


@dataclass
class StationProcess:
    url: str
    port: int
    proc: subprocess.Popen[Any]
    log: Path
    tokens: dict[str, str]

    def headers(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://") + "/api/live"

    def rss(self) -> int:
        """The process's resident memory now, in bytes (/proc)."""
        return _status_kib(self.proc.pid, "VmRSS") * 1024

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def _status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise KeyError(key)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    return repr(value)


def raise_own_open_files(at_least: int = 4096) -> None:
    """This process may open `at_least` files (sockets) if its hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = at_least if hard == resource.RLIM_INFINITY else min(at_least, hard)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


@contextlib.contextmanager
def station_process(
    tmp_path: Path,
    nofile: int | None = None,
    log_level: str = "warning",
    **api: Any,
) -> Iterator[StationProcess]:
    """`station run` on a free port, its journal and log in `tmp_path`, a token per role
    (rig tokens allowed), `api` as further `[api]` keys, under an open-files limit of
    `nofile` (soft and hard) if given. Ready once `/api/health` answers."""
    tokens, entries = make_tokens()
    port = free_port()
    listed = ", ".join(
        f'{{name = "{e.name}", role = "{e.role}", sha256 = "{e.sha256}"}}' for e in entries
    )
    keys = "\n".join(f"{key} = {toml_value(value)}" for key, value in api.items())
    config = tmp_path / "station.toml"
    config.write_text(f"""
[journal]
path = "{tmp_path / "journal.db"}"
[api]
bind = "127.0.0.1:{port}"
allow_rig = true
token_file = "{tmp_path / "tokens.toml"}"
tokens = [{listed}]
{keys}
""")
    log = tmp_path / "station.log"

    def limited() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    with open(log, "w") as sink:
        proc = spawn_run(
            config, log_level, stdout=subprocess.DEVNULL, stderr=sink, preexec_fn=limited
        )
    running = StationProcess(f"http://127.0.0.1:{port}", port, proc, log, tokens)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, running.log_text()
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{running.url}/api/ready", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, "the station did not get ready"
            time.sleep(0.05)
        yield running
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
