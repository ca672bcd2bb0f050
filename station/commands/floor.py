"""`station floor --config FILE`: the floor service (every table's journal from the
broker into the floor archive, and the floor view)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from station.commands.options import EXIT_USAGE

EXIT_FAILED = 1
DEMO_ROLES = ("viewer", "dealer", "supervisor")
log = logging.getLogger("station.floor")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "floor",
        help="run the floor service (archive every table, serve the floor view)",
        description="Consume every table's journal rows from the broker (NATS JetStream) "
        "into the floor archive, checking each table's hash chain, and serve the floor "
        "view and GET /api/floor/tables.",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        type=Path,
        default=None,
        help="the floor's TOML config (default: built-in defaults; see config/floor.example.toml)",
    )
    p.add_argument(
        "--bind",
        metavar="HOST:PORT",
        default=None,
        help="listen here instead of [api] bind (default: [api] bind, else 127.0.0.1:8100)",
    )
    p.add_argument(
        "--log-level",
        default=None,
        choices=("debug", "info", "warning", "error"),
        help="the least severe messages logged (default: [log] level of the config, else info)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    import uvicorn

    from station.api.floor import create_floor_app
    from station.commands.run import HideTokens, listen_problem
    from station.live.config import parse_bind
    from station.live.floor_service.config import ConfigError, load
    from station.live.floor_service.service import FloorService
    from station.live.logs import configure
    from station.live.sdnotify import Notifier
    from station.live.tokens import TokenStore

    try:
        config = load(args.config)
    except ConfigError as exc:
        print(f"station floor: {exc}", file=sys.stderr)
        return EXIT_USAGE
    api = config.api
    if args.bind is not None:
        try:
            api = api.model_copy(update={"bind": parse_bind(args.bind)})
        except ConfigError as exc:
            print(f"station floor: --bind: {exc}", file=sys.stderr)
            return EXIT_USAGE
        config = config.model_copy(update={"api": api})
    problem = listen_problem(api.host, api.port)
    if problem is not None:
        fix = "--bind" if args.bind is not None else "[api] bind"
        print(
            f"station floor: cannot listen on {api.bind}: {problem} — change {fix}", file=sys.stderr
        )
        return EXIT_FAILED
    level = args.log_level or config.log.level
    configure(config.log.format, level, filters=[HideTokens()])
    json_log = config.log.format == "json"

    def say(text: str, **fields: Any) -> None:
        if json_log:
            log.info(text.strip(), extra=fields)
        else:
            print(text)

    try:
        tokens = TokenStore(api.tokens, api.token_file)
    except ConfigError as exc:
        print(f"station floor: {exc}", file=sys.stderr)
        return EXIT_USAGE
    service = FloorService(config)
    app = create_floor_app(service, tokens)
    broker = config.broker
    say(
        f"floor: site {broker.site}, broker {', '.join(broker.servers)}, archive "
        f"{config.archive.path}, floor view http://{api.bind}/",
        site=broker.site,
        archive=str(config.archive.path),
        bind=api.bind,
    )
    if api.demo_tokens:
        say("demo tokens (valid until the floor service stops; 'Authorization: Bearer TOKEN'):")
        for role in DEMO_ROLES:
            token = tokens.add_memory(f"demo-{role}", role)
            say(f"  {role:<10} {token}", role=role, token=token)
    sys.stdout.flush()
    server = uvicorn.Server(
        uvicorn.Config(
            app, host=api.host, port=api.port, log_level=level, log_config=None, lifespan="on"
        )
    )
    notifier = Notifier()
    keep_alive: list[asyncio.Task[None]] = []

    def fatal(message: str) -> None:
        notifier.status(message)
        server.should_exit = True

    def ready() -> None:
        notifier.ready(f"floor {broker.site}: archive open, {len(service.board.views)} tables")
        keep_alive.append(asyncio.get_running_loop().create_task(notifier.keep_alive()))

    service.on_fatal = fatal
    service.on_ready = ready
    try:
        asyncio.run(server.serve())
    finally:
        notifier.stopping()
        notifier.close()
    if service.fatal:
        print(f"station floor: {service.fatal}", file=sys.stderr)
        return EXIT_FAILED
    return 0
