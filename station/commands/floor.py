"""`station floor --config FILE`: the floor service (every table's journal from the
broker into the floor archive, and the floor view)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from station.commands.options import EXIT_USAGE
from station.commands.startup import DEMO_ROLES, Startup

EXIT_FAILED = 1
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
        help="the floor's TOML config (default: built-in defaults; see "
        "`station config example --floor`)",
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
    from station.api.floor import create_floor_app
    from station.api.server import uvicorn_options
    from station.floor.config import ConfigError, load
    from station.floor.service import FloorService
    from station.shared.sdnotify import Notifier

    start = Startup("floor", log)
    try:
        loaded = load(args.config)
    except ConfigError as exc:
        start.error(str(exc))
        return EXIT_USAGE
    config = start.with_bind(loaded, args.bind)
    if config is None:
        return EXIT_USAGE
    api = config.api
    if not start.can_listen(api, args.bind):
        return EXIT_FAILED
    start.configure_logs(config, args.log_level)
    try:
        tokens = start.token_store(api)
    except ConfigError as exc:
        start.error(str(exc))
        return EXIT_USAGE
    service = FloorService(config)
    app = create_floor_app(service, tokens)
    broker = config.broker
    start.say(
        f"floor: site {broker.site}, broker {', '.join(broker.servers)}, archive "
        f"{config.archive.path}, floor view http://{api.bind}/",
        site=broker.site,
        archive=str(config.archive.path),
        bind=api.bind,
    )
    if api.demo_tokens:
        start.demo_tokens(tokens, DEMO_ROLES, "the floor service")
    server = start.server(app, api, **uvicorn_options(api))
    notifier = Notifier()
    service.on_fatal = lambda message: start.stop(server, notifier, message)
    service.on_ready = lambda: start.ready(
        notifier, f"floor {broker.site}: archive open, {len(service.board.views)} tables"
    )
    start.serve(server, notifier)
    if service.fatal:
        start.error(service.fatal)
        return EXIT_FAILED
    return 0
