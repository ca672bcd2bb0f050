"""The process log's formats (`station.shared.logs`): text, JSON lines, journald's prefix,
and the token hiding of `station run` in each."""

from __future__ import annotations

import io
import logging
import os
import sys
from collections.abc import Iterator

import orjson
import pytest

from station.commands.startup import HideTokens
from station.shared.logs import (
    JsonFormatter,
    SyslogPrefix,
    TextFormatter,
    configure,
    under_journald,
)

LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access")


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    """A stream `configure` writes to; the loggers it changes are put back afterwards."""
    saved = [
        (lg, list(lg.handlers), lg.level, lg.propagate) for lg in map(logging.getLogger, LOGGERS)
    ]
    try:
        yield io.StringIO()
    finally:
        for lg, handlers, level, propagate in saved:
            lg.handlers[:] = handlers
            lg.setLevel(level)
            lg.propagate = propagate


def access(token: str) -> None:
    """A line as uvicorn's access logger writes it, with a token in the query string."""
    logging.getLogger("uvicorn.access").info(
        '%s - "%s %s HTTP/%s" %d',
        "127.0.0.1:5000",
        "GET",
        f"/api/state?token={token}",
        "1.1",
        200,
        extra={"color_message": "coloured"},
    )


def test_json_lines_carry_the_fields_and_hide_tokens(stream: io.StringIO) -> None:
    configure("json", "info", filters=[HideTokens()], stream=stream)
    logging.getLogger("station.table").warning(
        "t row %d: SUSPENDED", 7, extra={"table": "t", "seq": 7, "code": "UNREADABLE_CARD"}
    )
    logging.getLogger("station.table").debug("not at info")
    access("s3cret")
    first, second = (orjson.loads(line) for line in stream.getvalue().splitlines())
    assert first["level"] == "warning" and first["logger"] == "station.table"
    assert first["message"] == "t row 7: SUSPENDED"
    assert (first["table"], first["seq"], first["code"]) == ("t", 7, "UNREADABLE_CARD")
    assert second["path"] == "/api/state?token=<hidden>" and second["status"] == 200
    assert "<hidden>" in second["message"] and "color_message" not in second
    assert "s3cret" not in stream.getvalue()


def test_text_lines_hide_tokens_too(stream: io.StringIO) -> None:
    configure("text", "warning", filters=[HideTokens()], stream=stream)
    access("s3cret")  # info: below the level
    configure("text", "info", filters=[HideTokens()], stream=stream)
    access("s3cret")
    (line,) = stream.getvalue().splitlines()
    expected = 'INFO uvicorn.access: 127.0.0.1:5000 - "GET /api/state?token=<hidden> HTTP/1.1" 200'
    assert line.endswith(expected)
    assert "s3cret" not in line


def test_an_exception_is_one_json_line() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.makeLogRecord({"msg": "crashed", "levelno": 40, "levelname": "ERROR"})
        record.exc_info = sys.exc_info()
    (line,) = JsonFormatter().format(record).splitlines()
    assert "ValueError: boom" in orjson.loads(line)["exception"]


def test_syslog_prefix_marks_every_line_with_its_priority() -> None:
    formatter = SyslogPrefix(TextFormatter(timestamps=False))
    for level, prefix in ((10, "<7>"), (20, "<6>"), (30, "<4>"), (40, "<3>"), (50, "<2>")):
        record = logging.makeLogRecord(
            {"msg": "a", "levelno": level, "levelname": logging.getLevelName(level)}
        )
        try:
            raise ValueError("b")
        except ValueError:  # a traceback: a record of several lines
            record.exc_info = sys.exc_info()
        lines = formatter.format(record).splitlines()
        assert len(lines) > 2 and [x[:3] for x in lines] == [prefix] * len(lines), lines


def test_journald_is_recognised_by_its_stream_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOURNAL_STREAM", "1:2")
    assert not under_journald(io.StringIO())  # no file descriptor: not the journal
    with open(__file__) as f:
        assert not under_journald(f)
        st = os.fstat(f.fileno())
        monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
        assert under_journald(f)
        monkeypatch.setenv("JOURNAL_STREAM", "garbage")
        assert not under_journald(f)


def test_a_text_line_is_one_line_whatever_a_client_put_in_it() -> None:
    """Control characters of the message (its arguments: a client's key, a reason) are
    written escaped; a traceback's lines are indented: no line passes for a log line."""
    forged = "WARNING station.table: t row 9: RESUMED by pit-boss-alice"
    record = logging.makeLogRecord(
        {
            "name": "station.table",
            "msg": "t row 3: close_bets REFUSED %s=1",
            "args": (f"x\n{forged}\r\x1b[2J\u2028",),
            "levelno": 20,
            "levelname": "INFO",
        }
    )
    (line,) = TextFormatter(timestamps=False).format(record).splitlines()
    assert line == (
        f"INFO station.table: t row 3: close_bets REFUSED x\\n{forged}\\r\\x1b[2J\\u2028=1"
    )
    try:
        raise ValueError(f"bad key\n{forged}")
    except ValueError:
        record = logging.makeLogRecord(
            {"name": "station.api", "msg": "crashed", "levelno": 40, "levelname": "ERROR"}
        )
        record.exc_info = sys.exc_info()
    first, *rest = TextFormatter(timestamps=False).format(record).splitlines()
    assert first == "ERROR station.api: crashed" and rest
    assert all(line.startswith("  ") for line in rest)  # indented: none passes for a line


def test_json_lines_keep_a_clients_text_as_it_was() -> None:
    record = logging.makeLogRecord({"msg": "reason %s", "args": ("a\nb",), "levelno": 30})
    (line,) = JsonFormatter().format(record).splitlines()
    assert orjson.loads(line)["message"] == "reason a\nb"
