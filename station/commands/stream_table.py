"""The table a replay-format stream says it was dealt at, for `station replay` and
`station protect`.

A stream written by the station says its table in its first line (`journal.table`: game,
decks, burn, cut policy, gating): `station journal export` copies it from the journal's
first row, `station simulate` writes the table it dealt. Read without `--game` or
`--config`, the stream is played at that table; with a `--game` or `--config` of another
game it is refused (exit 2): a baccarat banque stream read as punto banco gets nonsense
verdicts, or no alert at all, silently.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import BinaryIO


def open_source(path: str, command: str) -> BinaryIO | None:
    """The stream to read: standard input for "-", else the file (None after saying why
    it cannot be read)."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as exc:
        print(f"station {command}: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return None


def named_game(args: argparse.Namespace) -> str | None:
    """What names the game on the command line (`--game`, or `--config`'s [table] game),
    None when nothing does: then the stream may say its own. Asked before the options are
    resolved (which fill `args.game` in any case)."""
    if args.game is not None:
        return "--game"
    return "[table] game of --config" if args.config is not None else None


def stream_table(
    args: argparse.Namespace, source: BinaryIO, command: str, named_by: str | None
) -> Iterator[bytes] | None:
    """Every chunk of `source` (none consumed), after taking the stream's recorded table
    into the options `args` leaves open; None after saying why the stream cannot be played
    with these options (it names no table it could be, or another game than the one named).
    `named_by` (`named_game`): the game is the options' (resolved already, in `args.game`)
    and the stream's must be the same."""
    from station.live.replay import NotATable, first_line, recorded_table, source_chunks

    first, chunks = first_line(source_chunks(source))
    try:
        recorded = recorded_table(first)
    except NotATable as exc:
        print(f"station {command}: the stream's first line names no table: {exc}", file=sys.stderr)
        return None
    if recorded is None:
        return chunks
    if named_by is not None:
        game = args.game
        if game != recorded["game"]:
            print(
                f"station {command}: the stream is the record of a {recorded['game']} table "
                f"(its first line's journal.table says so), but {named_by} says {game}: the "
                f"verdicts would be {game}'s; give --game {recorded['game']}, or neither "
                "--game nor --config to play the stream's own table",
                file=sys.stderr,
            )
            return None
        return chunks
    args.game = recorded["game"]
    for option in ("decks", "burn", "cut_policy"):
        if getattr(args, option) is None and recorded.get(option) is not None:
            setattr(args, option, recorded[option])
    if args.ungated is None and "gated" in recorded:
        args.ungated = not recorded["gated"]
    return chunks
