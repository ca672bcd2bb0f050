"""`station replay`: the table's core over a stream of JSON Lines events.

Input is read with `os.read`, so a pipe is answered as soon as a line arrives (a rig can
talk to it interactively) while a file is processed in 256 KiB chunks (fast). Output
is written once per chunk.

A BAD_INPUT row also has `reason`, saying in words what is wrong with the line; it is
worked out only for such rows, so valid events pay nothing for it.

A stream can say which table it is the record of, as a journal does in its first row:
`station journal export` writes the journal's table settings (game, decks, burn, cut
policy, gating) into its first line's `journal.table` (`journal` is a key no event may
carry). `recorded_table` reads them, so `station replay` plays the stream's game rather
than giving a baccarat banque stream punto banco's verdicts.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any, BinaryIO

import orjson

from station.core.events import not_json_reason
from station.core.games import BURNS, CUT_POLICIES, GAME_NAMES, settings_of
from station.core.table import Table
from station.core.verdicts import BAD_INPUT
from station.core.words import EXPLANATIONS

CHUNK = 256 * 1024

#: A stream repeats its lines: a shoe's 416 cards are 52 codes read by one reader, a
#: round's `close_bets` is the same line every round. A line seen before is looked up
#: rather than decoded again (a dict lookup against orjson's parse: the stream of
#: `benchmarks/bench_replay.py` decodes 1 line in 300). Bounded: the first lines of at
#: most this many bytes are kept, at most this many.
DECODED_LINES = 4096
DECODED_LINE_BYTES = 160

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
    # Lines already decoded, and their events (which nothing downstream changes: the
    # table and the extensions only read them).
    decoded: dict[bytes, Any] = {}
    missing = object()
    pending = b""
    seq = 0
    for chunk in _ending_with_newline(chunks):
        lines = (pending + chunk if pending else chunk).split(b"\n")
        pending = lines.pop()
        out: list[bytes] = []
        for line in lines:
            seq += 1
            event = decoded.get(line, missing)
            if event is missing:
                try:
                    event = loads(line)
                except decode_error as exc:
                    if not line.strip():
                        continue  # a blank line: skipped, but it keeps its line number
                    row: dict[str, Any] = table.apply(None)  # type: ignore[assignment]
                    row["seq"] = seq
                    row["reason"] = not_json_reason(exc, seq)
                    if extension is not None:
                        extension(table, None, row)
                    out.append(dumps(row))
                    continue
                if len(decoded) < DECODED_LINES and len(line) <= DECODED_LINE_BYTES:
                    decoded[line] = event
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


def source_chunks(source: BinaryIO) -> Iterator[bytes]:
    """The bytes of `source` as they come: from its file descriptor (a pipe answered line
    by line), else by `read` (an in-memory stream, e.g. in tests)."""
    try:
        return read_chunks(source.fileno())
    except (AttributeError, OSError, ValueError):
        return iter(lambda: source.read(CHUNK), b"")


def first_line(chunks: Iterator[bytes]) -> tuple[bytes, Iterator[bytes]]:
    """The stream's first non-blank line (b"" if it has none), and every chunk of it again,
    those read to find the line included: nothing is consumed."""
    read: list[bytes] = []
    seen = b""
    for chunk in chunks:
        read.append(chunk)
        seen += chunk
        lines = seen.split(b"\n")
        for line in lines[:-1]:
            if line.strip():
                return line, itertools.chain(read, chunks)
        seen = lines[-1]
    return seen if seen.strip() else b"", iter(read)


def saying_table(line: bytes, settings: Mapping[str, Any]) -> bytes:
    """An export line (`{...event, "journal": {...}, "verdict": ...}` and its newline) that
    also says the table the stream is the record of (`journal.table`): what an export's
    first line carries, and `recorded_table` reads."""
    row = orjson.loads(line)
    row["journal"] = {**row["journal"], "table": dict(settings)}
    return orjson.dumps(row) + b"\n"


class NotATable(ValueError):
    """A stream's `journal.table` that no table could be dealt by (the message says why)."""


def recorded_table(line: bytes) -> dict[str, Any] | None:
    """The table settings a stream's first line says it was recorded at (`journal.table`:
    game, decks, burn, cut_policy, gated), or None when it says none. NotATable when they
    are not settings a table can be dealt by."""
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    journal = event.get("journal") if isinstance(event, dict) else None
    table = journal.get("table") if isinstance(journal, dict) else None
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise NotATable(f"its journal.table is not an object: {table!r}")
    # Read as the journal reads its first row (one made before the cercle games says no
    # game: punto banco's).
    settings = settings_of(table)
    allowed = {"game": GAME_NAMES, "burn": BURNS, "cut_policy": CUT_POLICIES}
    for key, values in allowed.items():
        if settings.get(key) not in values:
            known = ", ".join(values)
            raise NotATable(f"its journal.table {key} {settings.get(key)!r} is none of {known}")
    decks = settings.get("decks")
    if decks is not None and (not isinstance(decks, int) or isinstance(decks, bool) or decks < 1):
        raise NotATable(f"its journal.table decks {decks!r} is not a number of decks")
    if not isinstance(settings.get("gated", True), bool):
        raise NotATable(f"its journal.table gated {settings['gated']!r} is not true or false")
    return settings


def replay(
    table: Table,
    source: BinaryIO | Iterator[bytes],
    sink: BinaryIO,
    extension: Extension | None = None,
) -> None:
    """Run every event of `source` (a stream, or its chunks: `source_chunks`) through
    `table`, writing one verdict line per event."""
    chunks = source if isinstance(source, Iterator) else source_chunks(source)
    for out in verdict_lines(table, chunks, extension):
        sink.write(out)
        sink.flush()
