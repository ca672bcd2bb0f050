"""`station protect [--game G] [--decks N] [--index FILE] [FILE|-]`: the game-protection checks over
exported journals or replay files, one JSON line per alert.

The events go through the rules core exactly as `station replay` runs them (the same
table options; a stream that says its table is played at it, `stream_table`), and the
protector sees each event with its verdict, as the live station
does after each commit. So surveillance can check past shoes, and a test rig can check
the detectors (`SHOE_SEQUENCE`, `WEAK_SHUFFLE`; see docs/protection.md). The last shoe of the
input is scored when the input ends. Lines of `station journal export` carry their
journal row (`journal`: seq, ts): alerts then give journal seqs, and the shoes are named
as the live station names them. With `--index`, the shoes are checked against, and
added to, a protection index file (the live station's `[protection] index`): old
journals seed it, and a file given twice is added once.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from station.commands.options import (
    EXIT_OK,
    EXIT_USAGE,
    add_game_options,
    add_table_options,
    resolve_table_options,
    table_from_args,
)

EXIT_ALERTS = 1  # an alert was reported (0: none; 2: usage)


def probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value < 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "protect",
        help="check shoes for repeated or pre-arranged orders and weak shuffles",
        description="Run replay-format events (an export of the journal, a replay file) "
        "through the rules core and the game-protection checks; print one JSON line per "
        "alert (SHOE_SEQUENCE, WEAK_SHUFFLE) with its code, figures and advice. A stream "
        "that says its table in its first line (an export, `station simulate`) is played "
        "at that table without --game and --config; a --game or --config of another game "
        "is refused. Exit status: 1 if an alert was reported, 0 if none, 2 on bad arguments.",
    )
    add_table_options(p)
    add_game_options(p)
    p.add_argument(
        "--index",
        metavar="FILE",
        default=None,
        help="check against, and add the shoes to, this protection index file (the "
        "station's [protection] index) (default: none, only the shoes of the input)",
    )
    p.add_argument(
        "--table-name",
        default="file",
        metavar="NAME",
        help="how alerts and the index name this input's shoes (default: file)",
    )
    p.add_argument(
        "--false-alarm",
        type=probability,
        default=None,
        metavar="P",
        help="the chance a fairly shuffled shoe raises SHOE_SEQUENCE, which sets the run "
        "length k (default: 1e-6)",
    )
    p.add_argument(
        "--weak-below",
        type=probability,
        default=None,
        metavar="P",
        help="a shoe whose weak-shuffle probability (the chance a fair shuffle keeps as much "
        "of the previous shoe's order) is below P is a WEAK_SHUFFLE (default: 1e-5)",
    )
    p.add_argument(
        "file",
        nargs="?",
        default="-",
        metavar="FILE|-",
        help="events as JSON Lines, one per line; - is standard input (default -)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import orjson

    from station.commands.stream_table import named_game, open_source, stream_table
    from station.core.protection import (
        DEFAULT_THRESHOLD,
        FALSE_ALARM_BUDGET,
        History,
        MemoryHistory,
        Protector,
    )
    from station.core.table import Table
    from station.live.replay import verdict_lines

    named_by = named_game(args)
    if named_by and not resolve_table_options(args, "protect"):
        return EXIT_USAGE
    source = open_source(args.file, "protect")
    if source is None:
        return EXIT_USAGE
    chunks = stream_table(args, source, "protect", named_by)
    if chunks is None or (not named_by and not resolve_table_options(args, "protect")):
        if source is not sys.stdin.buffer:
            source.close()
        return EXIT_USAGE
    table = table_from_args(args)
    history: History
    if args.index is not None:
        from station.shared.protection_index import ProtectionIndexError, SqliteHistory

        try:
            history = SqliteHistory(args.index)
        except ProtectionIndexError as exc:
            print(f"station protect: --index: {exc}", file=sys.stderr)
            return EXIT_USAGE
    else:
        history = MemoryHistory()
    protector = Protector(
        history,
        table.decks,
        table=args.table_name,
        budget=args.false_alarm or FALSE_ALARM_BUDGET,
        weak_threshold=args.weak_below or DEFAULT_THRESHOLD,
    )
    out = sys.stdout.buffer
    reported: list[str] = []  # the codes of the alerts printed

    def emit(alerts: list[Any]) -> None:
        reported.extend(alert.code for alert in alerts)
        for alert in alerts:
            out.write(orjson.dumps(alert.as_dict()) + b"\n")
        if alerts:
            out.flush()

    def extend(_table: Table, event: Any, row: dict[str, Any]) -> None:
        if isinstance(event, dict):
            # A line of `station journal export` says its journal row: the alerts and the
            # index then name the shoes as the live station does.
            origin = event.get("journal")
            if isinstance(origin, dict) and isinstance(origin.get("seq"), int):
                emit(protector.row(event, row, origin["seq"], str(origin.get("ts") or "")))
            else:
                emit(protector.row(event, row, row["seq"]))

    try:
        for _ in verdict_lines(table, chunks, extend):
            pass  # the verdicts are what `station replay` prints; here only alerts are
        emit(protector.finish(None))
    except BrokenPipeError:
        pass  # the reader went away (e.g. `| head`): nothing more to say
    finally:
        if source is not sys.stdin.buffer:
            source.close()
        close = getattr(history, "close", None)
        if close is not None:
            close()
    # A script gates on it as on `journal verify`: 1 when an alert (WEAK_SHUFFLE,
    # SHOE_SEQUENCE) was reported, 0 when the shoes gave none.
    return EXIT_ALERTS if reported else EXIT_OK
