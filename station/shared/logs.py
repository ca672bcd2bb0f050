"""The process log of `station run`: lines for a person, or JSON lines for a collector.

Why a module of its own: the station's own lines (`station.table`, one per noteworthy
journal row), uvicorn's error and access lines and every library's go through the one
handler configured here, so they share one format and one set of filters (the token
hiding of `station run`).

Under systemd (stderr is the journal's stream, `JOURNAL_STREAM`) a line carries no
timestamp, journald adds its own, and starts with the level as a syslog prefix (`<4>`
for a warning), which journald strips and keeps as the entry's priority: so
`journalctl -u baccarat-station -p warning` shows the warnings and worse. Elsewhere a
text line starts with its local time.

A text line is one line, whatever a client put in it: the message's control characters
(a line break in an event's key, a floor decision's reason, a URL's `%0A`) are written
escaped (`\\n`), and a traceback's lines are indented, so nothing a client sends can pass
for a line of its own (`escaped`). JSON lines are safe by construction.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, TextIO

import orjson

__all__ = ["JsonFormatter", "SyslogPrefix", "TextFormatter", "configure", "under_journald"]

#: The attributes every `LogRecord` has: the others came with `extra=` (the fields).
_STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}
#: uvicorn adds a coloured copy of its message: not a field anyone wants twice.
_SKIPPED = frozenset({"color_message"})
#: uvicorn's access lines: their arguments, as JSON fields.
_ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")
#: What may end a line, or hide what follows, in a terminal or a log viewer.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(text: str) -> str:
    """`text` with its control characters written as escapes (`\\n`, `\\x1b`): one line."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match[0]
    code = ord(char)
    return _ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields of a record (what its `extra=` gave), in their order."""
    fields = {k: v for k, v in vars(record).items() if k not in _STANDARD and k not in _SKIPPED}
    if (
        record.name == "uvicorn.access"
        and isinstance(record.args, tuple)
        and len(record.args) == len(_ACCESS_FIELDS)
    ):
        fields.update(zip(_ACCESS_FIELDS, record.args, strict=True))
    return fields


def syslog_priority(levelno: int) -> int:
    """The syslog priority of a Python level (journald's `-p`): 3 err .. 7 debug."""
    if levelno >= logging.CRITICAL:
        return 2
    if levelno >= logging.ERROR:
        return 3
    if levelno >= logging.WARNING:
        return 4
    if levelno >= logging.INFO:
        return 6
    return 7


class SyslogPrefix(logging.Formatter):
    """Wraps a formatter: each line starts with `<N>`, the record's syslog priority (the
    prefix systemd's `SyslogLevelPrefix=`, on by default, reads and strips)."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"<{syslog_priority(record.levelno)}>"
        text = self.inner.format(record)
        return prefix + text.replace("\n", "\n" + prefix)  # a traceback: each line too


class TextFormatter(logging.Formatter):
    """`2026-12-01 02:03:04.123 WARNING station.table: message` (no time under journald);
    the message escaped, a traceback's lines indented (see the module's docstring)."""

    def __init__(self, timestamps: bool = True) -> None:
        fmt = "%(levelname)s %(name)s: %(message)s"
        fmt = f"%(asctime)s.%(msecs)03d {fmt}" if timestamps else fmt
        super().__init__(fmt, "%Y-%m-%d %H:%M:%S")

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escaped(record.message)
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:
        lines = super().formatException(ei).split("\n")
        return "\n".join("  " + escaped(line) for line in lines)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: `ts` (UTC), `level`, `logger`, `message`, the record's
    fields (`table`, `seq`, `code`, `actor`, ...) and `exception` with its traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in fields_of(record).items():
            line.setdefault(key, value)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return orjson.dumps(line, default=str).decode()


def under_journald(stream: TextIO) -> bool:
    """True if `stream` is the journal's (systemd's `JOURNAL_STREAM` names its device and
    inode: a shell redirect under a unit is then told apart from the journal itself)."""
    value = os.environ.get("JOURNAL_STREAM", "")
    device, sep, inode = value.partition(":")
    if not sep or not device.isdigit() or not inode.isdigit():
        return False
    try:
        st = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (int(device), int(inode))


def configure(
    fmt: str = "text",
    level: str = "info",
    filters: Iterable[logging.Filter] = (),
    stream: TextIO | None = None,
) -> logging.Handler:
    """Send every log record of the process (uvicorn's too) to `stream` (stderr) in
    `fmt` ("text" or "json"), from `level` up, through `filters`. Returns the handler."""
    stream = sys.stderr if stream is None else stream
    journald = under_journald(stream)
    formatter: logging.Formatter = (
        JsonFormatter() if fmt == "json" else TextFormatter(timestamps=not journald)
    )
    if journald:
        formatter = SyslogPrefix(formatter)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    for f in filters:
        handler.addFilter(f)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)  # to the root's handler, whatever uvicorn set
        logger.handlers.clear()
        logger.setLevel(logging.NOTSET)  # the root's level (uvicorn.Config may set it again)
        logger.propagate = True
    return handler
