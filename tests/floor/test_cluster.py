"""A clustered floor broker: three nats-servers on 127.0.0.1, one JetStream cluster, the
stream FLOOR on all three (`[broker] replicas = 3`). The stream's leader SIGKILLed while
two stations publish: they go on after the election, and the floor archives every row
once, in order. And the shipped config/nats-cluster.conf, run as shipped (only its
ports, store and routes moved), forms such a cluster."""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nats.js.api import StreamInfo

from devkit.broker import Broker, Cluster, StationUser, cluster, free_ports
from scripts.floor_demo import brokers as demo_brokers
from scripts.floor_demo import floor_config as demo_floor_config
from station.floor.archive import Archive
from station.floor.config import load
from station.live.journal import Journal
from station.live.journal.reading import read_rows
from station.live.publisher.publisher import Publisher
from station.live.publisher.settings import FloorConfig
from station.shared.messages import STREAM, stream_config
from tests.floor.floorkit import floor_config, serve_floor
from tests.floor.kit import (
    SITE,
    FloorBroker,
    Running,
    admin,
    append_rows,
    assert_exactly_once,
    new_journal,
    wait_for,
    wait_published,
)
from tests.floor.test_broker_isolation import attack_5

pytestmark = [pytest.mark.floor, pytest.mark.server]

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "config" / "nats-cluster.conf"
TABLES = ("table-1", "table-2")
#: Rows the stations commit (each) before the leader is killed, and after the election.
BEFORE, AFTER = 100, 100
#: How long an election may take here (nats-server's own timeouts are a few seconds).
ELECTION = 30.0


@pytest.fixture
def brokers(tmp_path: Path) -> Iterator[tuple[Cluster, dict[str, StationUser]]]:
    """A 3-node cluster (devkit's), one user per table; stopped at the end."""
    users = {t: StationUser(SITE, t, t, secrets.token_hex(8)) for t in TABLES}
    nodes = cluster(tmp_path / "cluster", list(users.values()), secrets.token_hex(8))
    nodes.start()
    try:
        yield nodes, users
    finally:
        nodes.stop()


def on(nodes: Cluster, node: Broker, users: dict[str, StationUser]) -> FloorBroker:
    """The tests' kit pointed at one running node (the admin connection's)."""
    return FloorBroker(node, nodes.admin_password, users)


def station(nodes: Cluster, user: StationUser, journal: Path) -> Publisher:
    """A station's publisher given every node's URL, as `[floor] url` names a cluster."""
    var = f"CLUSTER_TEST_PASSWORD_{user.table.upper().replace('-', '_')}"
    os.environ[var] = user.password
    config = FloorConfig(
        url=nodes.url,
        site=user.site,
        user=user.user,
        password=f"env:{var}",
        timeout=1.0,
        heartbeat_interval=1.0,
    )
    return Publisher(config, user.table, journal)


class Dealing:
    """A thread committing a row to `journal` every few milliseconds until stopped,
    telling `publisher` of each commit as the station's writer does."""

    def __init__(self, journal: Journal, publisher: Publisher) -> None:
        self.journal, self.publisher = journal, publisher
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self._stop.is_set():
            append_rows(self.journal, 1, start=i)
            self.publisher.committed()
            i += 1
            time.sleep(0.01)

    def __enter__(self) -> Dealing:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.thread.join(10)


@pytest.mark.slow
def test_the_stream_leader_killed_mid_stream_loses_no_row(
    tmp_path: Path,
    brokers: tuple[Cluster, dict[str, StationUser]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nodes, users = brokers
    config, tokens = floor_config(
        tmp_path, on(nodes, nodes.nodes[0], users), monkeypatch, tables=TABLES
    )
    config = config.model_copy(
        update={"broker": config.broker.model_copy(update={"url": nodes.url, "replicas": 3})}
    )
    journals = {t: new_journal(tmp_path / f"{t}.db", t) for t in TABLES}
    publishers = {t: station(nodes, users[t], journals[t].path) for t in TABLES}
    with serve_floor(config, tokens) as running:
        wait_for(lambda: running.tables()["broker_up"], what="the floor service on the cluster")
        leader = nodes.leader(STREAM)  # the stream the floor service made, led by one node
        info = asyncio.run(stream_info(on(nodes, leader, users)))
        assert info.config.num_replicas == 3
        assert info.cluster is not None and len(info.cluster.replicas or []) == 2
        with Running(publishers["table-1"]), Running(publishers["table-2"]):
            with (
                Dealing(journals["table-1"], publishers["table-1"]),
                Dealing(journals["table-2"], publishers["table-2"]),
            ):
                wait_for(
                    lambda: all(p.published >= BEFORE for p in publishers.values()),
                    what=f"{BEFORE} rows of each table in the stream",
                )
                leader = nodes.leader(STREAM)
                leader.kill()  # mid-stream: rows being committed, sent, archived
                killed_at = {t: j.last_seq for t, j in journals.items()}
                elected = nodes.leader(STREAM, timeout=ELECTION)
                assert elected.name != leader.name
                wait_for(
                    lambda: all(p.published >= killed_at[t] + AFTER for t, p in publishers.items()),
                    timeout=ELECTION,
                    what=f"{AFTER} rows of each table published after the leader's death",
                )
            # The stations stopped dealing: every row they committed reaches the archive.
            last = {t: j.last_seq for t, j in journals.items()}
            for t in TABLES:
                wait_published(on(nodes, elected, users), t, last[t], timeout=ELECTION)
            wait_for(
                lambda: all(running.table(t)["archived_seq"] == last[t] for t in TABLES),
                timeout=ELECTION,
                what="every row in the archive",
            )
        lines = {t: running.table(t) for t in TABLES}
    for t in TABLES:
        assert lines[t]["held"] == 0 and lines[t]["alerts"] == [], lines[t]
        journal_rows = read_rows(journals[t].path, 0, 1_000_000)
        assert len(journal_rows) == last[t] >= killed_at[t] + AFTER
        with Archive(config.archive.path) as archive:
            archived = list(archive.rows(t))
            assert archive.verify(t) == []
        # Not one row lost, none twice, none out of order: the journal, row for row.
        assert [(r.seq, r.hash) for r in archived] == [(r.seq, r.hash) for r in journal_rows]
        assert_exactly_once(on(nodes, elected, users), t, journals[t].path)


async def stream_info(floor: FloorBroker) -> StreamInfo:
    async with admin(floor) as nc:
        return await nc.jetstream().stream_info(STREAM)


PASSWORDS = {"FLOOR_PASSWORD": "floor-secret", "TABLE_1_PASSWORD": "one", "TABLE_2_PASSWORD": "two"}


def shipped_cluster(folder: Path) -> Cluster:
    """config/nats-cluster.conf as shipped for three nodes on 127.0.0.1: only its ports,
    its store and its routes' addresses moved (each node named by FLOOR_NODE)."""
    text = SHIPPED.read_text()
    ports = free_ports(9)
    routes = ports[3:6]
    nodes = []
    for n in range(3):
        port, route, http = ports[n], routes[n], ports[6 + n]
        home = folder / f"floor-{n + 1}"
        home.mkdir(parents=True)
        mine, count = text, 0
        for pattern, value in (
            (r"(?m)^listen: .*$", f"listen: 127.0.0.1:{port}"),
            (r"(?m)^http: .*$", f"http: 127.0.0.1:{http}"),
            (r"(?m)^(\s*)store_dir: .*$", rf"\1store_dir: {home}/store"),
            (r"(?m)^(\s+)listen: 0\.0\.0\.0:6222$", rf"\1listen: 127.0.0.1:{route}"),
        ):
            mine, found = re.subn(pattern, value, mine)
            count += found
        for k, peer in enumerate(routes, 1):
            mine, found = re.subn(
                rf"nats-route://floor-{k}\.casino\.example:6222",
                f"nats-route://127.0.0.1:{peer}",
                mine,
            )
            count += found
        assert count == 7, "the shipped file's listen, http, store_dir, cluster listen, routes"
        config = home / "nats-cluster.conf"
        config.write_text(mine)
        name = f"floor-{n + 1}"
        nodes.append(
            Broker(
                config,
                port,
                log=home / "nats.log",
                env={**PASSWORDS, "FLOOR_NODE": name},
                name=name,
                http_port=http,
            )
        )
    return Cluster(nodes, PASSWORDS["FLOOR_PASSWORD"])


def test_the_shipped_cluster_config_keeps_each_row_on_three_nodes(tmp_path: Path) -> None:
    nodes = shipped_cluster(tmp_path)
    nodes.start()
    users = {
        "table-1": StationUser("site-1", "table-1", "table-1", "one"),
        "table-2": StationUser("site-1", "table-2", "table-2", "two"),
    }
    try:
        floor = on(nodes, nodes.nodes[1], users)
        asyncio.run(make_stream(floor))
        leader = nodes.leader(STREAM)
        journal = new_journal(tmp_path / "journal.db", "table-2")
        append_rows(journal, 12)
        with Running(station(nodes, users["table-2"], journal.path)):
            wait_published(floor, "table-2", journal.last_seq)
        info = asyncio.run(stream_info(floor))
    finally:
        nodes.stop()
    assert info.cluster is not None and info.cluster.replicas is not None
    assert {leader.name, *(p.name for p in info.cluster.replicas)} == {
        "floor-1",
        "floor-2",
        "floor-3",
    }
    assert info.state.messages == journal.last_seq


def test_the_shipped_cluster_keeps_a_reply_out_of_another_table_s_subject(
    tmp_path: Path,
) -> None:
    """Issue 32's attack 5 on the shipped cluster, table 1's login on a node that does not
    lead the stream: its replies aimed at table 2's subjects store and deliver nothing."""
    nodes = shipped_cluster(tmp_path)
    nodes.start()
    users = {
        "table-1": StationUser("site-1", "table-1", "table-1", "one"),
        "table-2": StationUser("site-1", "table-2", "table-2", "two"),
    }
    try:
        asyncio.run(make_stream(on(nodes, nodes.nodes[0], users)))
        leader = nodes.leader(STREAM)
        follower = next(node for node in nodes.nodes if node is not leader)
        stored, heard, errors = attack_5(on(nodes, follower, users))
    finally:
        nodes.stop()
    assert (stored, heard) == (0, [])
    assert any('publish to "floor.site-1.table-2.journal"' in e for e in errors), errors


async def make_stream(floor: FloorBroker) -> None:
    async with admin(floor) as nc:
        await nc.jetstream().add_stream(stream_config(replicas=3))


def test_the_shipped_cluster_blocks_are_the_single_broker_s() -> None:
    """Its users, permissions, accounts and their imports and limits are
    config/nats-server.conf's, word for word."""
    single = (ROOT / "config" / "nats-server.conf").read_text()
    clustered = SHIPPED.read_text()

    def users(text: str) -> list[str]:
        block = text[text.index("TABLE_1_PERMISSIONS = {") :]
        return [line.strip() for line in block.splitlines() if line.strip() and "#" not in line]

    assert users(clustered) == users(single)
    assert re.search(r"(?m)^\s*sync_interval: always$", clustered)


def test_the_demo_runs_on_a_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`make floor-demo CLUSTER=3`: three nodes on the broker port and the two after it,
    each routed to all, and a floor service that makes the stream on all three."""
    users = [StationUser("demo", "demo-1", "demo-1", "x")]
    nodes = demo_brokers(tmp_path, 4300, 3, users, "secret")
    assert isinstance(nodes, Cluster)
    assert [n.port for n in nodes.nodes] == [4300, 4301, 4302]
    routes = [
        re.findall(r"nats-route://127\.0\.0\.1:(\d+)", n.config.read_text()) for n in nodes.nodes
    ]
    assert routes[0] == routes[1] == routes[2] and len(set(routes[0])) == 3
    monkeypatch.setenv("FLOOR_PASSWORD", "secret")
    path = tmp_path / "floor.toml"
    path.write_text(demo_floor_config(8100, nodes.url, {"demo-1": 8101}, replicas=3))
    floor = load(path)
    assert floor.broker.replicas == 3 and floor.broker.servers == nodes.servers
    assert isinstance(demo_brokers(tmp_path / "one", 4300, 1, users, "secret"), Broker)
