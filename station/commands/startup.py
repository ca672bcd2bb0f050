"""The start-up `station run` and `station floor` share: `--bind` over `[api] bind`, the
check that the address is free (before announcing it), the logs, the lines for the
operator, the token store with its demo tokens, and serving under systemd's notify
protocol. One place, so the two services start, fail and speak the same way.

The heavy imports (uvicorn, the token store, the logs) wait until a command runs, as in
the commands themselves: `station --help` stays quick.
"""

from __future__ import annotations

import errno
import logging
import re
import socket
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

if TYPE_CHECKING:
    import asyncio

    import uvicorn

    from station.shared.config import LogConfig, TokenEntry
    from station.shared.sdnotify import Notifier
    from station.shared.tokens import TokenStore

IN_USE = "the address is in use (another station?)"
DEMO_ROLES = ("viewer", "dealer", "supervisor")
TOKEN_IN_QUERY = re.compile(r"([?&]token=)[^&\s\"]*")


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


class ServiceApi(Protocol):
    """The `[api]` keys both services have (`ApiConfig`, `FloorApiConfig`)."""

    @property
    def bind(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def tokens(self) -> tuple[TokenEntry, ...]: ...
    @property
    def token_file(self) -> Path: ...
    @property
    def demo_tokens(self) -> bool: ...
    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> Self: ...


class ServiceConfig(Protocol):
    """A service's config file (`StationConfig`, `FloorServiceConfig`)."""

    @property
    def api(self) -> ServiceApi: ...
    @property
    def log(self) -> LogConfig: ...
    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> Self: ...


Config = TypeVar("Config", bound=ServiceConfig)


@dataclass
class Startup:
    """One service command's start: `prog` names it in errors (`station PROG: ...`)."""

    prog: str
    log: logging.Logger
    json_log: bool = False
    level: str = "info"
    _keep_alive: list[asyncio.Task[None]] = field(default_factory=list)  # systemd's watchdog

    def error(self, text: str) -> None:
        print(f"station {self.prog}: {text}", file=sys.stderr)

    def say(self, text: str, **fields: Any) -> None:
        """A line for the operator at start: printed (text), or a log record (json)."""
        if self.json_log:
            self.log.info(text.strip(), extra=fields)
        else:
            print(text)

    def with_bind(self, config: Config, bind: str | None) -> Config | None:
        """`config` with `--bind` (if given) over `[api] bind`; None after saying what is
        wrong with it."""
        from station.live.config import ConfigError
        from station.shared.config import parse_bind

        if bind is None:
            return config
        try:
            api = config.api.model_copy(update={"bind": parse_bind(bind)})
        except ConfigError as exc:
            self.error(f"--bind: {exc}")
            return None
        return config.model_copy(update={"api": api})

    def can_listen(self, api: ServiceApi, bind: str | None) -> bool:
        """Whether the service can listen on `[api] bind` (False after saying why not and
        what to change: `--bind` if given). Checked before the address is announced: it
        could be someone else's."""
        problem = listen_problem(api.host, api.port)
        if problem is None:
            return True
        fix = "--bind" if bind is not None else "[api] bind"
        if problem == IN_USE:
            fix += " or stop the other process"
        self.error(f"cannot listen on {api.bind}: {problem} — change {fix}")
        return False

    def configure_logs(self, config: ServiceConfig, log_level: str | None) -> None:
        """Every log record of the process in `[log] format`, from `--log-level` (else
        `[log] level`) up, tokens in URLs hidden; `say` follows the format."""
        from station.shared.logs import configure

        self.level = log_level or config.log.level
        configure(config.log.format, self.level, filters=[HideTokens()])
        self.json_log = config.log.format == "json"

    def token_store(self, api: ServiceApi) -> TokenStore:
        """The tokens of `[api]` and its token file (ConfigError if the file is not valid,
        or cannot be read: the message says what to chown). None at all is said loudly:
        nobody could log in (the running service takes a token added later at once)."""
        from station.shared.tokens import TokenStore

        tokens = TokenStore(api.tokens, api.token_file)
        if tokens.count == 0 and not api.demo_tokens:
            where = "missing" if not api.token_file.exists() else "empty"
            self.log.warning(
                "no API tokens ([api] tokens is empty, the token file %s is %s): nobody can "
                "log in until one is added with `station token add --role ROLE --name NAME "
                "--config FILE` (the running service takes it at once)",
                api.token_file,
                where,
            )
        return tokens

    def demo_tokens(self, tokens: TokenStore, roles: Iterable[str], service: str) -> None:
        """A token per role, kept in memory and shown to the operator (`[api] demo_tokens`)."""
        self.say(f"demo tokens (valid until {service} stops; send 'Authorization: Bearer TOKEN'):")
        for role in roles:
            token = tokens.add_memory(f"demo-{role}", role)
            self.say(f"  {role:<10} {token}", role=role, token=token)

    def server(self, app: Any, api: ServiceApi, **options: Any) -> uvicorn.Server:
        """uvicorn for `app` on `[api] bind`, its loggers through the handler of
        `configure_logs`, the app's lifespan on."""
        import uvicorn

        from station.commands.server import StationServer

        sys.stdout.flush()  # the operator's lines before uvicorn's
        config = uvicorn.Config(
            app,
            host=api.host,
            port=api.port,
            log_level=self.level,
            log_config=None,
            lifespan="on",
            **options,
        )
        return StationServer(config)

    def stop(self, server: uvicorn.Server, notifier: Notifier, message: str) -> None:
        """A fatal error: systemd's status says it, and the server stops."""
        notifier.status(message)
        server.should_exit = True

    def ready(self, notifier: Notifier, status: str) -> None:
        """Tell systemd (Type=notify) and keep its watchdog fed from the event loop."""
        import asyncio

        notifier.ready(status)
        self._keep_alive.append(asyncio.get_running_loop().create_task(notifier.keep_alive()))

    def serve(self, server: uvicorn.Server, notifier: Notifier) -> None:
        """Run `server` until it stops, then tell systemd."""
        import asyncio

        try:
            asyncio.run(server.serve())
        finally:
            notifier.stopping()
            notifier.close()
        if getattr(server, "interrupted", False):
            # Stopped by SIGINT, which was ignored when the process started (else uvicorn's
            # raising it again has ended `asyncio.run` with KeyboardInterrupt already).
            raise KeyboardInterrupt


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
