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
            {"msg": "a\nb", "levelno": level, "levelname": logging.getLevelName(level)}
        )
        text = formatter.format(record)
        assert [x[:3] for x in text.splitlines()] == [prefix, prefix], text


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
