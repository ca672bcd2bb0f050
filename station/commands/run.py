"""`station run --config FILE`: the live station service (reader, journal, API)."""

from __future__ import annotations

import argparse
import errno
import logging
import re
import socket
import sys
from typing import Any

from station.commands.common import add_config_option, load_config
from station.commands.options import EXIT_USAGE

EXIT_FAILED = 1  # the station could not start (or stopped on a fatal error); 2 is usage
IN_USE = "the address is in use (another station?)"

DEMO_ROLES = ("viewer", "dealer", "supervisor")
TOKEN_IN_QUERY = re.compile(r"([?&]token=)[^&\s\"]*")
log = logging.getLogger("station.run")


class HideTokens(logging.Filter):
    """uvicorn logs each request's path with its query string, where a browser's WebSocket
    sends its token (`/api/live?token=`): the logs say `token=<hidden>` instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                TOKEN_IN_QUERY.sub(r"\1<hidden>", a) if isinstance(a, str) else a
                for a in record.args
            )
        return True


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="run the live station service",
        description="Start the station: replay the journal, journal a restart, "
        "read cards and serve the HTTP/WebSocket API.",
    )
    add_config_option(p)
    p.add_argument(
        "--bind",
        metavar="HOST:PORT",
        default=None,
        help="listen here instead of [api] bind (default: [api] bind, else 127.0.0.1:8000)",
    )
    p.add_argument(
        "--log-level",
        default=None,
        choices=("debug", "info", "warning", "error"),
        help="the least severe messages logged: debug, info, warning or error "
        "(default: [log] level of the config, else info)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    import uvicorn

    from drivers import create_reader
    from station.api import create_app
    from station.api.server import uvicorn_options
    from station.live.config import ConfigError, parse_bind
    from station.live.logs import configure
    from station.live.sdnotify import Notifier
    from station.live.service import Station
    from station.live.tokens import TokenStore

    config = load_config(args, "run")
    if config is None:
        return EXIT_USAGE
    api = config.api
    if args.bind is not None:
        try:
            api = api.model_copy(update={"bind": parse_bind(args.bind)})
        except ConfigError as exc:
            print(f"station run: --bind: {exc}", file=sys.stderr)
            return EXIT_USAGE
        config = config.model_copy(update={"api": api})
    problem = listen_problem(api.host, api.port)
    if problem is not None:  # before announcing an address that is someone else's
        fix = "--bind" if args.bind is not None else "[api] bind"
        if problem == IN_USE:
            fix += " or stop the other process"
        print(
            f"station run: cannot listen on {api.bind}: {problem} — change {fix}", file=sys.stderr
        )
        return EXIT_FAILED
    level = args.log_level or config.log.level
    configure(config.log.format, level, filters=[HideTokens()])
    json_log = config.log.format == "json"

    def say(text: str, **fields: Any) -> None:
        """A line for the operator at start: printed (text), or a log record (json)."""
        if json_log:
            log.info(text.strip(), extra=fields)
        else:
            print(text)

    try:
        tokens = TokenStore(api.tokens, api.token_file)
        reader = create_reader(config.reader) if config.reader is not None else None
    except (ConfigError, KeyError) as exc:
        print(f"station run: {exc}", file=sys.stderr)
        return EXIT_USAGE
    station = Station(config, reader)
    app = create_app(station, tokens)
    say(
        f"station: table {config.table.id}, journal {config.journal.path}, reader "
        f"{reader.name if reader else 'none'}, dashboard http://{api.bind}/ (API docs /api/docs)",
        table=config.table.id,
        journal=str(config.journal.path),
        reader=reader.name if reader else None,
        bind=api.bind,
    )
    if api.demo_tokens:
        roles = (*DEMO_ROLES, "rig") if api.allow_rig else DEMO_ROLES
        say("demo tokens (valid until the station stops; send 'Authorization: Bearer TOKEN'):")
        for role in roles:
            token = tokens.add_memory(f"demo-{role}", role)
            say(f"  {role:<10} {token}", role=role, token=token)
    if api.public_read:
        say("public_read is on: GET /api/state, /api/journal and WS /api/live need no token")
    sys.stdout.flush()
    server = uvicorn.Server(  # its loggers write through the handler of `configure`
        uvicorn.Config(
            app,
            host=api.host,
            port=api.port,
            log_level=level,
            log_config=None,
            lifespan="on",
            **uvicorn_options(api.trusted_proxies),
        )
    )

    notifier = Notifier()
    keep_alive: list[asyncio.Task[None]] = []

    def fatal(message: str) -> None:
        notifier.status(message)
        server.should_exit = True

    def ready() -> None:
        """Tell systemd (Type=notify) and keep its watchdog fed from the event loop."""
        notifier.ready(f"table {config.table.id}: ready, journal at row {station.snapshot.seq}")
        keep_alive.append(asyncio.get_running_loop().create_task(notifier.keep_alive()))

    station.on_fatal = fatal
    station.on_ready = ready
    station.on_status = notifier.status  # the journal unavailable (disk full...) and back
    try:
        asyncio.run(server.serve())
    finally:
        notifier.stopping()
        notifier.close()
    if station.fatal:
        if json_log:
            log.critical("station run: %s", station.fatal, extra={"table": config.table.id})
        else:
            print(f"station run: {station.fatal}", file=sys.stderr)
        return EXIT_FAILED
    return 0


def listen_problem(host: str, port: int) -> str | None:
    """Why the API could not listen on host:port, in words; None if it can. Binds (as
    uvicorn will, address reuse on) every address the host names, then lets go."""
    try:
        addresses = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        return f"the host is unknown ({exc.strerror})"
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    return IN_USE
                if exc.errno == errno.EACCES:
                    return "permission denied (ports below 1024 need privileges)"
                if exc.errno == errno.EADDRNOTAVAIL:
                    return "the address is not one of this machine's"
                return exc.strerror or str(exc)
    return None
