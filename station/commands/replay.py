"""`station replay [--game G] [--decks N] [--burn B] [--ungated] [--cut-policy P]
[--odds [--paytable P]] [FILE|-]`.

With `--odds`, each row that completes or voids a round (while the shoe goes on) gains
`odds`: the live edge of every bet for the next round from the cards left in the shoe,
and `advantage`, the bets open in that round whose edge is negative (`station.core.odds`).
A `--paytable` without `--odds` changes nothing but is still checked: a bad one is a
usage error (exit 2), as every bad option value is, rather than silently ignored.

A stream that says its table (the first line's `journal.table`, which `station journal
export` and `station simulate` write) is played at that table when neither `--game` nor
`--config` names a game, and refused (exit 2) when they name another
(`station.commands.stream_table`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from station.commands.odds import add_paytable_option
from station.commands.options import (
    EXIT_OK,
    EXIT_USAGE,
    add_game_options,
    add_table_options,
    resolve_table_options,
    table_from_args,
)

if TYPE_CHECKING:
    from station.core.odds import Analyzer
    from station.core.table import Table
    from station.live.replay import Extension


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help="decide on every event of a JSON Lines file",
        description="Run replay-format events through the rules core and "
        "print one verdict per event (JSON Lines). A stream from `station journal export` "
        "says its table (game, decks, burn, cut policy, gating) in its first line: without "
        "--game and --config it is played at that table; a --game or --config of another "
        "game is refused.",
    )
    add_table_options(p)
    add_game_options(p)
    p.add_argument(
        "--odds",
        action="store_true",
        help="after each completed or voided round, add the house edge of every bet for "
        "the next round and the player-favourable ones (default: off)",
    )
    add_paytable_option(p, "; the bets of --odds (without --odds it is only checked)")
    p.add_argument(
        "file",
        nargs="?",
        default="-",
        metavar="FILE|-",
        help="events as JSON Lines, one per line; - is standard input (default -)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from station.commands.stream_table import named_game, open_source, stream_table
    from station.live.replay import replay

    given = args.paytable is not None  # without --odds: checked, then unused
    # A game named by --game or --config: the options are checked before anything is read
    # and the stream must be of that game; else the stream may say its own.
    named_by = named_game(args)
    made = _table(args, given) if named_by else None
    if named_by and made is None:
        return EXIT_USAGE
    source = open_source(args.file, "replay")
    if source is None:
        return EXIT_USAGE
    try:
        chunks = stream_table(args, source, "replay", named_by)
        if chunks is None:
            return EXIT_USAGE
        if made is None:
            made = _table(args, given)
        if made is None:
            return EXIT_USAGE
        table, extension = made
        replay(table, chunks, sys.stdout.buffer, extension)
    except BrokenPipeError:
        pass  # the reader went away (e.g. `| head`): nothing more to say
    finally:
        if source is not sys.stdin.buffer:
            source.close()
    return EXIT_OK


def _table(args: argparse.Namespace, given: bool) -> tuple[Table, Extension | None] | None:
    """The table the options set up, and the --odds extension; None after saying what is
    wrong with them."""
    if not resolve_table_options(args, "replay"):
        return None
    table = table_from_args(args)
    if args.odds and table.game.name != "punto_banco":
        print(
            f"station replay: --odds works out punto banco's bets only, not {table.game.title}'s",
            file=sys.stderr,
        )
        return None
    extension = None
    if args.odds or given:
        from station.core.paytables import PaytableError
        from station.core.paytables import load as load_paytable

        try:  # --paytable, else the [table] paytable of --config (`resolve_table_options`)
            paytable = load_paytable(args.paytable)
        except PaytableError as exc:
            print(f"station replay: --paytable: {exc}", file=sys.stderr)
            return None
        if paytable.game != table.game.name:
            print(
                f"station replay: --paytable: paytable {paytable.name} is for "
                f"{paytable.game}, but the table plays {table.game.name} (--game)",
                file=sys.stderr,
            )
            return None
        if args.odds:
            from station.core.odds import Analyzer, seed_bets

            extension = live_edge_extension(Analyzer(seed_bets(paytable)))
    return table, extension


def live_edge_extension(analyzer: Analyzer) -> Extension:
    """Adds `odds` to the rows that complete or void a round: the next round's live edge,
    or null when the shoe is finished (no next round) or too few cards are left."""
    from station.core.odds import CompositionError

    def extend(table: Table, event: dict[str, Any], row: dict[str, Any]) -> None:
        if row.get("result") is None and row.get("voided_round") is None:
            return
        if not table.in_play:
            row["odds"] = None
            return
        try:
            row["odds"] = analyzer.live_edge(table.remaining(), table.rounds_opened + 1)
        except CompositionError:
            row["odds"] = None

    return extend
