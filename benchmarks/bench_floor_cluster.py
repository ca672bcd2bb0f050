"""The floor on a clustered broker: commit -> floor archive on a 3-node JetStream cluster
(the stream FLOOR at 3 replicas) next to one broker, then the cluster's stream leader
SIGKILLed while the tables deal.

`bench_floor`'s floor, run twice in a row: its worker processes (300 tables, each a real
`Journal` on /dev/shm and a real `Publisher`, committing 1 row/s: a table's pace) and its
floor service process (the real `FloorService`, the archive on the disk, acks after the
commit), first on one nats-server, then on three (devkit's `cluster`: each its own store
on the disk, `sync_interval: always`, routes between them on 127.0.0.1) given to every
client as the list of their URLs. Commit -> floor archive is `bench_floor`'s: a row's
`ts` (taken as the station commits it) to the end of the archive transaction that took
it. Then, on the cluster, the node leading the stream is SIGKILLed: how long the other
two take to elect a leader, the longest a row waited meanwhile (commit -> archive), when
the archive has every row the tables committed (none lost: the archive's count is the
journals'), and the broker's CPU.

All the nodes share this machine's 2 cores and one disk: on a floor each has a machine
(its own disk and CPU, a network hop between them). The figures say what replication
costs in work and round trips, not what three machines would take.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import subprocess
import tempfile
import time
from pathlib import Path

import nats

from benchmarks.bench_floor import (
    TABLES,
    WARMUP_SECONDS,
    WORKERS,
    cpu_seconds,
    report,
    rss_mib,
    send,
    spawn,
    stats,
    wait_until,
)
from devkit.broker import ADMIN_USER, Broker, Cluster, cluster, free_port, render_config
from station.shared.messages import STREAM, stream_config

#: Rows a second per table: a table's pace (bench_floor also runs a stress pace).
RATE = 1
PHASE_SECONDS = 20.0
#: The tables deal on this long after the new leader is elected, before they stop.
AFTER_ELECTION = 5.0
#: The longest wait for a leader, for the archive to catch up (`make bench` stays bounded).
LIMIT = 120.0
NODES = 3


async def _stream(servers: list[str], password: str, replicas: int | None) -> int:
    """Make the stream (`replicas` given), or count the rows it holds (None)."""
    nc = await nats.connect(servers, user=ADMIN_USER, password=password, connect_timeout=2)
    try:
        js = nc.jetstream(timeout=5)
        if replicas is not None:
            await js.add_stream(stream_config(replicas=replicas))
            return 0
        return int((await js.stream_info(STREAM)).state.messages)
    finally:
        await nc.close()


def held(brokers: list[Broker], password: str) -> int:
    """Rows the stream holds, asked of the running nodes."""
    return asyncio.run(_stream([b.url for b in brokers if b.running], password, None))


def lags(service: subprocess.Popen[str]) -> tuple[int, float, float, float]:
    """Rows timed since `record`, and their commit -> archive p50, p99, max (ms)."""
    fig = report(service)
    return fig[1], fig[2] / 1000, fig[3] / 1000, fig[4] / 1000


def floor_on(
    brokers: list[Broker], password: str, journals: Path, archive: Path, nodes: Cluster | None
) -> None:
    """300 tables at `RATE` row/s on `brokers` (given to every client as one URL list),
    their journals in `journals`, the floor service archiving to `archive`: one line of
    figures; then, given the cluster (`nodes`), its stream leader killed mid-stream:
    another."""
    url = ",".join(b.url for b in brokers)
    service = spawn("service", url, password, str(archive))
    assert service.stdout is not None
    assert service.stdout.readline().split() == ["ok"], "the floor service did not start"
    per = TABLES // WORKERS
    workers = [
        spawn("worker", str(w * per), str(per), url, password, str(journals))
        for w in range(WORKERS)
    ]
    what = f"{len(brokers)} nodes, 3 replicas" if len(brokers) > 1 else "one broker"
    try:
        wait_until(lambda: held(brokers, password) >= TABLES, 60)  # the created rows
        send(workers, f"rate {RATE}")
        time.sleep(WARMUP_SECONDS)
        send([service], "record")
        pids = [b.process.pid for b in brokers if b.process is not None]
        cpu0, t0 = sum(cpu_seconds(p) for p in pids), time.monotonic()
        archived0 = report(service)[0]
        time.sleep(PHASE_SECONDS)
        elapsed = time.monotonic() - t0
        cpu = (sum(cpu_seconds(p) for p in pids) - cpu0) / elapsed
        rss = sum(rss_mib(p) for p in pids)
        archived = report(service)[0] - archived0
        timed, p50, p99, worst = lags(service)
        print(
            f"{what}: {TABLES} tables x {RATE} row/s, {archived / elapsed:.0f} rows/s archived; "
            f"commit -> floor archive ({timed} rows) p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
            f"max {worst:.1f} ms; brokers' CPU {cpu:.0%} of a core, RSS {rss:.0f} MiB",
            flush=True,
        )
        if nodes is not None:
            send([service], "record")
            leader = nodes.leader(STREAM)
            leader.kill()
            killed = time.monotonic()
            elected = nodes.leader(STREAM, timeout=LIMIT)
            election = time.monotonic() - killed
            time.sleep(AFTER_ELECTION)
            send(workers, "rate 0")
            committed = stats(workers)[0]
            caught_up = wait_until(lambda: report(service)[0] >= committed, LIMIT)
            archived_all = report(service)[0]
            in_stream = held(nodes.live(), password)
            timed, p50, p99, worst = lags(service)
            print(
                f"{what}, the stream's leader ({leader.name}) SIGKILLed while the tables "
                f"deal: {elected.name} leads {election:.1f} s later; meanwhile and "
                f"{AFTER_ELECTION:.0f} s after, commit -> floor archive ({timed} rows) p50 "
                f"{p50:.1f} ms, p99 {p99:.1f} ms, max {worst:.1f} ms; the archive had every "
                f"row {caught_up:.1f} s after the tables stopped: {archived_all:,} archived, "
                f"{in_stream:,} in the stream, {committed:,} committed "
                f"({committed - archived_all} lost)",
                flush=True,
            )
    finally:
        for w in [*workers, service]:
            if w.poll() is None:
                with contextlib.suppress(AssertionError, BrokenPipeError):
                    send([w], "quit")
                w.wait(10)


def main() -> None:
    print(f"(load average at start: {os.getloadavg()[0]:.2f})")
    password = secrets.token_hex(8)
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        (tmp / "one").mkdir()
        port = free_port()
        config = tmp / "one" / "nats.conf"
        config.write_text(render_config(port, tmp / "one" / "store", [], password))
        broker = Broker(config, port, log=tmp / "one" / "nats.log")
        broker.start()
        try:
            asyncio.run(_stream([broker.url], password, 1))
            with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as journals:
                floor_on([broker], password, Path(journals), tmp / "one" / "floor.db", None)
        finally:
            broker.stop()
        nodes = cluster(tmp / "cluster", [], password, size=NODES)
        nodes.start()
        try:
            asyncio.run(_stream(nodes.servers, password, NODES))
            with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as journals:
                floor_on(nodes.nodes, password, Path(journals), tmp / "cluster" / "floor.db", nodes)
        finally:
            nodes.stop()


if __name__ == "__main__":
    main()
