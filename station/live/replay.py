"""`station replay`: the table's core over a stream of JSON Lines events.

Input is read with `os.read`, so a pipe is answered as soon as a line arrives (a rig can
talk to it interactively) while a file is processed in 256 KiB chunks (fast). Output
is written once per chunk.

A BAD_INPUT row also has `reason`, saying in words what is wrong with the line; it is
worked out only for such rows, so valid events pay nothing for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import orjson

from station.core.events import not_json_reason
from station.core.table import BAD_INPUT, EXPLANATIONS, Table

CHUNK = 256 * 1024

#: Called after each verdict with the event and its verdict, to add keys to the output.
Extension = Callable[[Table, Any, dict[str, Any]], None]


def verdict_lines(
    table: Table, chunks: Iterator[bytes], extension: Extension | None = None
) -> Iterator[bytes]:
    """For each chunk of input bytes, the output bytes for the complete lines it ends.

    `seq` is the 1-based physical line number, blank lines included (they are skipped,
    not renumbered), so an output row points at its input line.
    """
    loads, dumps, decode_error = orjson.loads, orjson.dumps, orjson.JSONDecodeError
    apply, bad_input_reason = table.apply, table.bad_input_reason
    bad = BAD_INPUT
    pending = b""
    seq = 0
    for chunk in _ending_with_newline(chunks):
        lines = (pending + chunk if pending else chunk).split(b"\n")
        pending = lines.pop()
        out: list[bytes] = []
        for line in lines:
            seq += 1
            try:
                event = loads(line)
            except decode_error as exc:
                if not line.strip():
                    continue  # a blank line: skipped, but it keeps its line number
                row: dict[str, Any] = table.apply(None)  # type: ignore[assignment]
                row["seq"] = seq
                row["reason"] = not_json_reason(exc)
                event = None
            else:
                row = apply(event)  # type: ignore[assignment]
                row["seq"] = seq
                # The one extra step for a valid event: the table's verdicts carry the constant.
                if row["error"] is bad:
                    row["reason"] = bad_input_reason(event) or EXPLANATIONS[bad]
            if extension is not None:
                extension(table, event, row)
            out.append(dumps(row))
        if out:
            out.append(b"")
            yield b"\n".join(out)


def _ending_with_newline(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The chunks, plus a newline if the input's last line has none (so it is not lost)."""
    last = b"\n"
    for chunk in chunks:
        if chunk:
            last = chunk
            yield chunk
    if not last.endswith(b"\n"):
        yield b"\n"


def read_chunks(fd: int, size: int = CHUNK) -> Iterator[bytes]:
    """Bytes from a file descriptor as they become available, until end of file."""
    while True:
        chunk = os.read(fd, size)
        if not chunk:
            return
        yield chunk


def replay(
    table: Table, source: BinaryIO, sink: BinaryIO, extension: Extension | None = None
) -> None:
    """Run every event of `source` through `table`, writing one verdict line per event."""
    try:
        fd = source.fileno()
        chunks: Iterator[bytes] = read_chunks(fd)
    except (AttributeError, OSError, ValueError):  # an in-memory stream, e.g. in tests
        chunks = iter(lambda: source.read(CHUNK), b"")
    for out in verdict_lines(table, chunks, extension):
        sink.write(out)
        sink.flush()
