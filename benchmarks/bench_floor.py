"""The floor: 300 tables publishing their journals to one broker, the floor service archiving.

A real nats-server (JetStream, `sync_interval: always`, its store on disk), 300 tables,
each a real `Journal` and a real `Publisher` (75 tables to a worker process, each table
with its own connection), committing rows at ~1 row/s and then ~4 rows/s each, and the
real floor service (`FloorService`: its durable pull consumer, the archive on disk, acks
after the commit) in a process of its own. Two latencies:

- commit -> floor archive (the figure the floor sees): a row's `ts` (taken as the station
  commits it) to the end of the archive transaction that took it (`after_commit`, before
  the acks: the row is durable in the archive then);
- commit -> stream: the same `ts` to the row's arrival at an ordered JetStream consumer
  here (a message reaches it only once stored).

Broker and floor service CPU and memory come from /proc. Then the broker is SIGKILLed,
every table commits 100 rows (30,000 waiting in the journals), the broker is started
again, and the drain is the time until the stream, then the archive, holds them all.
Before all that, the broker alone: this disk's fsync rate and a tight publish loop on a
fresh broker (what one stream stores a second with every write synced). The station's
own latency with its publisher on is `bench_floor_station`.

The journals are on /dev/shm when there is one: 300 tables' fsyncs on one disk would
measure this machine's disk, not the floor (each station has its own disk). The broker's
store and the archive are on the disk, as on a floor. `BENCH_FLOOR_BATCH=N` runs the floor
service with `[broker] batch = N` (default: the config's default) to compare batch sizes;
`BENCH_FLOOR_ACK_WAIT=S` likewise sets `ack_wait`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nats
from nats.aio.msg import Msg
from nats.js.api import StreamConfig

from devkit.broker import ADMIN_USER, Broker, free_port, render_config
from station.core.table import Table
from station.floor.archive import Committed
from station.floor.arrival import lag_seconds
from station.floor.config import ArchiveConfig, BrokerConfig, FloorServiceConfig
from station.floor.service import FloorService
from station.live.journal import Journal
from station.live.publisher.publisher import Publisher
from station.live.publisher.settings import FloorConfig
from station.shared.messages import STREAM, JournalMessage, stream_config, wildcard
from station.shared.rows import Pending, Row

ROOT = Path(__file__).resolve().parents[1]
TABLES = 300
WORKERS = 4
PHASE_SECONDS = 20.0
#: Rows a second per table: a realistic pace, then a stress pace.
RATES = (1, 4)
WARMUP_SECONDS = 3.0
BACKLOG_PER_TABLE = 100
#: The longest wait for the archive to catch up or drain (`make bench` stays bounded).
DRAIN_LIMIT = 120.0
#: The broker alone: (streams, writes in flight) of each tight publish loop.
PROBES = ((1, 1), (1, 300), (4, 300))
SITE = "bench"
TS = "%Y-%m-%dT%H:%M:%S.%fZ"
VERDICT = {"ok": True, "error": None, "role": "player", "round": 12, "result": None}


def _row(i: int) -> Pending:
    """A row the size of a dealt card's (event and verdict)."""
    event = {"type": "card", "card": "KH", "n": i}
    return Pending("reader", "shoe", event, {**VERDICT, "voided_round": None})


# -- a worker: 75 tables in one process ----------------------------------------------------


def worker(first: int, count: int, url: str, password: str, folder: str) -> None:
    """Tables first..first+count-1: their journals, and their publishers on one event loop
    in a thread. Commands on stdin: `rate R` (rows a second per table; 0 stops),
    `burst N` (N rows per table at once), `quit`; each answered `ok` on stdout."""
    logging.getLogger("station.live.floor").setLevel(logging.ERROR)  # 300 tables' lines
    os.environ["BENCH_FLOOR_PASSWORD"] = password
    config = FloorConfig(url=url, site=SITE, user=ADMIN_USER, password="env:BENCH_FLOOR_PASSWORD")
    journals: list[Journal] = []
    publishers: list[Publisher] = []
    for i in range(first, first + count):
        table = f"t{i:03d}"
        journal = Journal(Path(folder) / f"{table}.db")
        journal.start(table, Table())
        journals.append(journal)
        publishers.append(Publisher(config, table, journal.path))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    tasks = [asyncio.run_coroutine_threadsafe(p.run(), loop) for p in publishers]
    rate = 0.0
    lock = threading.Lock()
    stop = threading.Event()

    def write() -> None:
        n = 0
        start = time.monotonic()
        due = [start + k / count for k in range(count)]  # spread over the first second
        while not stop.is_set():
            with lock:
                r = rate
            if r <= 0:
                time.sleep(0.01)
                now = time.monotonic()
                due = [now + k / count / 1 for k in range(count)]
                continue
            k = min(range(count), key=due.__getitem__)
            wait = due[k] - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            with lock:  # `rate 0` answered: not one row more
                if rate <= 0:
                    continue
                journals[k].append([_row(n)])
            publishers[k].committed()
            n += 1
            due[k] += 1 / r

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    for line in sys.stdin:
        command, _, arg = line.strip().partition(" ")
        if command == "rate":
            with lock:
                rate = float(arg)
        elif command == "burst":
            with lock:
                for journal in journals:
                    journal.append([_row(i) for i in range(int(arg))])
                for p in publishers:
                    p.committed()
        elif command == "stats":  # rows committed, rows the stream holds, batches refused
            committed = sum(j.last_seq for j in journals)
            published = sum(p.published for p in publishers)
            refused = sum(not p._batches for p in publishers)
            cpu_ms = round(time.process_time() * 1000)
            print(f"ok {committed} {published} {refused} {cpu_ms}", flush=True)
            continue
        elif command == "quit":
            break
        print("ok", flush=True)
    stop.set()
    for task in tasks:
        loop.call_soon_threadsafe(task.cancel)
    time.sleep(0.5)
    print("ok", flush=True)


# -- the floor service: in a process of its own ------------------------------------------


def floor_service(url: str, password: str, archive: str) -> None:
    """The real `FloorService` (durable pull consumer, archive on disk, acks after the
    commit) on its own event loop. Commands on stdin: `record` (start timing afresh),
    `report` (answered `ok` archived-rows timed-rows lag-p50 lag-p99 lag-max (us) CPU-ms
    commits commit-p50 commit-p99 (us) RSS-KiB ms-in-take), `quit`."""
    logging.getLogger("station.floor").setLevel(logging.CRITICAL)  # the outage, on purpose
    os.environ["BENCH_FLOOR_PASSWORD"] = password
    config = FloorServiceConfig(
        broker=BrokerConfig(
            url=url,
            site=SITE,
            user=ADMIN_USER,
            password="env:BENCH_FLOOR_PASSWORD",
            batch=int(os.environ.get("BENCH_FLOOR_BATCH", BrokerConfig().batch)),
            ack_wait=float(os.environ.get("BENCH_FLOOR_ACK_WAIT", BrokerConfig().ack_wait)),
        ),
        archive=ArchiveConfig(path=Path(archive)),
    )
    lags: list[float] = []
    commits: list[float] = []
    archived = 0
    recording = False

    def after_commit(done: Committed) -> None:
        """Runs after the archive's commit (the rows durable), before the acks."""
        nonlocal archived
        archived += len(done.accepted)
        if recording:
            now = datetime.now(UTC)
            lags.extend(lag_seconds(row, now) for row in done.accepted)
            commits.append(done.seconds)

    service = FloorService(config, after_commit=after_commit)
    busy: list[float] = []  # seconds in `_take` (archive commit and acks), the rest fetching
    take = service._take

    async def timed_take(nc: Any, msgs: list[Any]) -> None:
        started = time.perf_counter()
        await take(nc, msgs)
        busy.append(time.perf_counter() - started)

    service.__dict__["_take"] = timed_take
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    asyncio.run_coroutine_threadsafe(service.start(), loop).result(30)
    print("ok", flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "record":
            lags.clear()
            commits.clear()
            busy.clear()
            recording = True
        elif command == "report":
            lag, took = list(lags), list(commits)

            def us(values: list[float], q: float) -> int:
                return round(_ms(values, q) * 1000) if values else 0

            cpu_ms = round(time.process_time() * 1000)
            rss = round(rss_mib(os.getpid()) * 1024)
            figures = [archived, len(lag), us(lag, 0.5), us(lag, 0.99), us(lag, 1.0), cpu_ms]
            figures += [len(took), us(took, 0.5), us(took, 0.99), rss, round(sum(busy) * 1000)]
            print("ok " + " ".join(map(str, figures)), flush=True)
            continue
        elif command == "quit":
            break
        print("ok", flush=True)
    asyncio.run_coroutine_threadsafe(service.stop(), loop).result(10)
    print("ok", flush=True)


# -- the floor side --------------------------------------------------------------------------


class Consumer:
    """An ordered JetStream consumer on every table's rows: commit -> stream latencies."""

    def __init__(self, url: str, password: str) -> None:
        self.url, self.password = url, password
        self.latencies: list[float] = []
        self.received = 0
        self.recording = False
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self._loop.run_until_complete(self._subscribe())
        self._ready.set()
        self._loop.run_forever()

    async def _subscribe(self) -> None:
        nc = await nats.connect(
            self.url,
            user=ADMIN_USER,
            password=self.password,
            max_reconnect_attempts=-1,
            error_cb=_quiet,
        )
        self.nc = nc

        async def on_row(msg: Msg) -> None:
            now = time.time()
            self.received += 1
            if self.recording:
                row = JournalMessage.decode(msg.data)
                ts = datetime.strptime(row.ts, TS).replace(tzinfo=UTC).timestamp()
                self.latencies.append(now - ts)

        await nc.jetstream().subscribe(wildcard("journal", SITE), cb=on_row, ordered_consumer=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)

    def stop(self) -> None:
        fut = asyncio.run_coroutine_threadsafe(self.nc.close(), self._loop)
        fut.result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)


async def _quiet(exc: Exception) -> None:
    """Connection errors while the broker is down on purpose are expected."""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _stream_messages(url: str, password: str) -> int:
    nc = await nats.connect(
        url, user=ADMIN_USER, password=password, connect_timeout=2, error_cb=_quiet
    )
    try:
        info = await nc.jetstream().stream_info(STREAM)
        return int(info.state.messages)
    finally:
        await nc.close()


def stream_messages(broker: Broker, password: str) -> int:
    return asyncio.run(_stream_messages(broker.url, password))


def wait_until(condition: Callable[[], bool], timeout: float) -> float:
    """Seconds until `condition()` (polled every 50 ms); raises after `timeout`."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"not done after {timeout} s")
        time.sleep(0.05)
    return time.monotonic() - start


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(int(len(ordered) * q) - 1, 0)] * 1000


def send(workers: list[subprocess.Popen[str]], command: str) -> list[list[int]]:
    """Send `command` to every worker; their answers' numbers."""
    for w in workers:
        assert w.stdin is not None
        w.stdin.write(command + "\n")
        w.stdin.flush()
    answers = []
    for w in workers:
        assert w.stdout is not None
        words = w.stdout.readline().split()
        assert words[:1] == ["ok"], f"a worker failed at {command!r}"
        answers.append([int(x) for x in words[1:]])
    return answers


def stats(workers: list[subprocess.Popen[str]]) -> tuple[int, int, int, float]:
    """Rows committed, rows published, tables that fell back to one row at a time, and
    the workers' CPU seconds (journals and publishers)."""
    answers = send(workers, "stats")
    committed, published, one_by_one, cpu_ms = (sum(a[i] for a in answers) for i in range(4))
    return committed, published, one_by_one, cpu_ms / 1000


def fsync_rate(folder: Path, seconds: float = 2.0) -> float:
    """Appends of a row's size, each fsynced, a second: what `sync_interval: always` pays."""
    probe = folder / "fsync.probe"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    n, start = 0, time.monotonic()
    try:
        while time.monotonic() - start < seconds:
            os.write(fd, b"x" * 400)
            os.fsync(fd)
            n += 1
    finally:
        os.close(fd)
        probe.unlink()
    return n / (time.monotonic() - start)


async def _publish_loop(url: str, password: str, pid: int) -> list[str]:
    """One row per write, as fast as acknowledged, `inflight` writes at once, over 1 or 4
    streams: what the broker stores a second with every write synced."""
    nc = await nats.connect(url, user=ADMIN_USER, password=password)
    js = nc.jetstream(timeout=10)
    found = []
    try:
        for s in range(4):
            await js.add_stream(StreamConfig(name=f"PROBE{s}", subjects=[f"probe{s}.>"]))
        body = JournalMessage.of("t000", _probe_row()).encode()
        for streams, inflight in PROBES:
            done = 0
            stop = time.monotonic() + 3.0

            async def publish(i: int, streams: int = streams, stop: float = stop) -> None:
                nonlocal done
                while time.monotonic() < stop:
                    await js.publish(f"probe{i % streams}.t{i}", body)
                    done += 1

            cpu0, start = cpu_seconds(pid), time.monotonic()
            await asyncio.gather(*(publish(i) for i in range(inflight)))
            elapsed = time.monotonic() - start
            found.append(
                f"{streams} stream{'s' if streams > 1 else ''}, {inflight} in flight: "
                f"{done / elapsed:,.0f} rows/s (broker {(cpu_seconds(pid) - cpu0) / elapsed:.0%} "
                "of a core)"
            )
    finally:
        await nc.close()
    return found


def _probe_row() -> Row:
    """A journal row the size of a dealt card's."""
    verdict = {**VERDICT, "voided_round": None}
    event = {"type": "card", "card": "KH", "n": 1}
    return Row(
        1,
        "2026-12-01T00:00:00.000000Z",
        "reader",
        "shoe",
        "card",
        event,
        verdict,
        "0" * 64,
        "1" * 64,
    )


def broker_alone(tmp: Path) -> None:
    """This disk's fsync rate, and a fresh broker on it under a tight publish loop."""
    password = secrets.token_hex(8)
    port = free_port()
    folder = tmp / "alone"
    folder.mkdir()
    config = folder / "nats.conf"
    config.write_text(render_config(port, folder / "store", [], password))
    broker = Broker(config, port, log=folder / "nats.log")
    broker.start()
    try:
        pid = broker.process.pid if broker.process else 0
        found = asyncio.run(_publish_loop(broker.url, password, pid))
    finally:
        broker.stop()
    print(
        f"broker alone (sync_interval always): this disk {fsync_rate(folder):,.0f} fsyncs/s; "
        + "; ".join(found),
        flush=True,
    )


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_floor", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def report(service: subprocess.Popen[str]) -> list[int]:
    """The floor service's figures (see `floor_service`)."""
    return send([service], "report")[0]


def floor_phases(broker: Broker, password: str, journals: Path, archive: Path) -> int:
    """The two rates and the drain; returns the rows the stream holds at the end."""
    consumer = Consumer(broker.url, password)
    consumer.start()
    service = spawn("service", broker.url, password, str(archive))
    assert service.stdout is not None
    assert service.stdout.readline().split() == ["ok"], "the floor service did not start"
    per = TABLES // WORKERS
    workers = [
        spawn("worker", str(w * per), str(per), broker.url, password, str(journals))
        for w in range(WORKERS)
    ]
    try:
        wait_until(lambda: stream_messages(broker, password) >= TABLES, 60)  # created rows
        pid = broker.process.pid if broker.process else 0
        for rate in RATES:
            send(workers, f"rate {rate}")
            time.sleep(WARMUP_SECONDS)
            consumer.latencies.clear()
            consumer.recording = True
            send([service], "record")
            committed0, _, _, worker_cpu0 = stats(workers)
            archived0, service_cpu0 = report(service)[0], cpu_seconds(service.pid)
            cpu0, t0, rss, behind = cpu_seconds(pid), time.monotonic(), 0.0, 0
            while time.monotonic() - t0 < PHASE_SECONDS:
                time.sleep(0.5)
                rss = max(rss, rss_mib(pid))
                committed, published, _, _ = stats(workers)
                behind = max(behind, committed - published)
            elapsed = time.monotonic() - t0
            cpu = (cpu_seconds(pid) - cpu0) / elapsed
            service_cpu = (cpu_seconds(service.pid) - service_cpu0) / elapsed
            consumer.recording = False
            lat = consumer.latencies
            committed, published, one_by_one, worker_cpu = stats(workers)
            fig = report(service)
            archived, timed, p50, p99, worst, commits, c50, c99, service_kib = (
                fig[0],
                fig[1],
                fig[2] / 1000,
                fig[3] / 1000,
                fig[4] / 1000,
                fig[6],
                fig[7] / 1000,
                fig[8] / 1000,
                fig[9],
            )
            taking = fig[10] / 1000 / elapsed
            rows = committed - committed0
            print(
                f"{TABLES} tables x {rate} row/s: {rows / elapsed:.0f} rows/s committed, "
                f"{(archived - archived0) / elapsed:.0f} rows/s archived; commit -> floor "
                f"archive ({timed} rows) p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {worst:.1f} ms; "
                f"commit -> stream ({len(lat)} rows) p50 {_ms(lat, 0.5):.1f} ms, p99 "
                f"{_ms(lat, 0.99):.1f} ms; at most {behind} rows waiting in the journals; "
                f"broker CPU {cpu:.0%} of a core, RSS {rss:.0f} MiB; floor service CPU "
                f"{service_cpu:.0%} of a core, RSS {service_kib / 1024:.0f} MiB, {commits} "
                f"archive commits ({(archived - archived0) / max(commits, 1):.0f} rows each, "
                f"p50 {c50:.1f} ms, p99 {c99:.1f} ms; committing and acking {taking:.0%} of the "
                f"time, the rest fetching); stations' CPU "
                f"{(worker_cpu - worker_cpu0) / max(rows, 1) * 1e6:.0f} us a row (journal "
                "and publisher)"
                + (f"; {one_by_one} tables fell back to one row at a time" if one_by_one else ""),
                flush=True,
            )
        send(workers, "rate 0")
        committed = stats(workers)[0]
        caught_up = wait_until(lambda: report(service)[0] >= committed, DRAIN_LIMIT)
        print(f"(the archive caught up {caught_up:.1f} s after the tables stopped)", flush=True)
        held = stream_messages(broker, password)
        broker.kill()
        send(workers, f"burst {BACKLOG_PER_TABLE}")  # 30,000 rows wait in the journals
        backlog = TABLES * BACKLOG_PER_TABLE
        worker_cpu0 = stats(workers)[3]
        service_cpu0 = cpu_seconds(service.pid)
        send([service], "record")
        started = time.monotonic()
        broker.start()
        back = time.monotonic()
        pid = broker.process.pid if broker.process else 0
        in_stream = wait_until(
            lambda: stream_messages(broker, password) >= held + backlog, DRAIN_LIMIT
        )
        in_archive = in_stream + wait_until(
            lambda: report(service)[0] >= committed + backlog, DRAIN_LIMIT
        )
        worker_cpu, broker_cpu = stats(workers)[3], cpu_seconds(pid)
        fig = report(service)
        print(
            f"backlog of {backlog:,} rows after a broker outage: in the stream {in_stream:.1f} s "
            f"after the broker is back ({backlog / in_stream:,.0f} rows/s), in the floor "
            f"archive {in_archive:.1f} s ({backlog / in_archive:,.0f} rows/s; broker start "
            f"{back - started:.2f} s not counted; {fig[6]} archive commits, "
            f"{fig[10] / 1000:.1f} s of them committing and acking); CPU meanwhile: stations "
            f"{worker_cpu - worker_cpu0:.1f} s, broker {broker_cpu:.1f} s, floor service "
            f"{cpu_seconds(service.pid) - service_cpu0:.1f} s",
            flush=True,
        )
        total = stream_messages(broker, password)
    finally:
        for w in [*workers, service]:
            if w.poll() is None:
                with contextlib.suppress(AssertionError, BrokenPipeError):
                    send([w], "quit")
                w.wait(10)
        consumer.stop()
    return total


def main() -> None:
    load = os.getloadavg()[0]
    print(f"(load average at start: {load:.2f})")
    shm = Path("/dev/shm")
    with (
        tempfile.TemporaryDirectory() as tmp_dir,
        tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as journals,
    ):
        tmp = Path(tmp_dir)
        broker_alone(tmp)
        password = secrets.token_hex(8)
        with floor_broker(tmp, password) as broker:
            floor_phases(broker, password, Path(journals), tmp / "floor.db")


@contextlib.contextmanager
def floor_broker(tmp: Path, password: str) -> Iterator[Broker]:
    """A nats-server of its own, its store in `tmp` (on the disk: as on a floor), with
    the admin login and the floor's stream; stopped at the end."""
    port = free_port()
    config = tmp / "nats.conf"
    config.write_text(render_config(port, tmp / "store", [], password))
    broker = Broker(config, port, log=tmp / "nats.log")
    broker.start()
    try:
        asyncio.run(_create_stream(broker.url, password))
        yield broker
    finally:
        broker.stop()


async def _create_stream(url: str, password: str) -> None:
    nc = await nats.connect(url, user=ADMIN_USER, password=password)
    try:
        await nc.jetstream().add_stream(stream_config())
    finally:
        await nc.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        first, count, url, password, folder = sys.argv[2:7]
        worker(int(first), int(count), url, password, folder)
    elif sys.argv[1:2] == ["service"]:
        floor_service(*sys.argv[2:5])
    else:
        main()
