"""`station run --config FILE`: the live station service (reader, journal, API)."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from station.commands.common import add_config_option, load_config
from station.commands.options import EXIT_USAGE
from station.commands.startup import DEMO_ROLES, Startup

EXIT_FAILED = 1  # the station could not start (or stopped on a fatal error); 2 is usage
log = logging.getLogger("station.run")


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
    from drivers import create_reader
    from station.api import create_app
    from station.api.server import uvicorn_options
    from station.live.config import ConfigError
    from station.live.service import Station
    from station.shared.sdnotify import Notifier

    start = Startup("run", log)
    config = load_config(args, "run")
    if config is None:
        return EXIT_USAGE
    config = start.with_bind(config, args.bind)
    if config is None:
        return EXIT_USAGE
    api = config.api
    if not start.can_listen(api, args.bind):
        return EXIT_FAILED
    start.configure_logs(config, args.log_level)
    pinned = config.table.pinned_notice()
    if pinned is not None:  # a config switched to another game may keep the first's values
        log.info(pinned, extra={"table": config.table.id})
    try:
        tokens = start.token_store(api)
        reader = create_reader(config.reader) if config.reader is not None else None
    except (ConfigError, KeyError) as exc:
        start.error(str(exc))
        return EXIT_USAGE
    station = Station(config, reader)
    app = create_app(station, tokens)
    start.say(
        f"station: table {config.table.id}, journal {config.journal.path}, reader "
        f"{reader.name if reader else 'none'}, dashboard http://{api.bind}/ (API docs /api/docs)",
        table=config.table.id,
        journal=str(config.journal.path),
        reader=reader.name if reader else None,
        bind=api.bind,
    )
    if api.demo_tokens:
        roles = (*DEMO_ROLES, "rig") if api.allow_rig else DEMO_ROLES
        start.demo_tokens(tokens, roles, "the station")
        screen = tokens.add_memory("demo-display", "display")
        start.say(f"the table's display: http://{api.bind}/display#token={screen}", role="display")
    if api.public_read:
        start.say("public_read is on: GET /api/state, /api/journal and WS /api/live need no token")
    server = start.server(app, api, **uvicorn_options(api, api.trusted_proxies))
    notifier = Notifier()
    station.on_fatal = lambda message: start.stop(server, notifier, message)
    started: list[bool] = []  # systemd told READY=1 (once: then only the status changes)

    def serving(status: str) -> None:
        if started:
            notifier.status(status)
        else:
            started.append(True)
            start.ready(notifier, status)

    # Waiting for a journal it cannot open (disk full, read-only) is started too: the
    # station serves and says why, and a restart would not help.
    station.on_waiting = serving
    station.on_ready = lambda: serving(
        f"table {config.table.id}: ready, journal at row {station.snapshot.seq}"
    )
    station.on_status = notifier.status  # the journal unavailable (disk full...) and back
    start.serve(server, notifier)
    if station.fatal:
        if start.json_log:
            log.critical("station run: %s", station.fatal, extra={"table": config.table.id})
        else:
            start.error(station.fatal)
        return EXIT_FAILED
    return 0
