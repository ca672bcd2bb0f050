"""Argument types and option groups shared by several subcommands."""

from __future__ import annotations

import argparse

from station.table import CUT_POLICIES, Table

EXIT_OK = 0
EXIT_USAGE = 2  # bad arguments or an unreadable file (argparse exits with 2 too)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_table_options(parser: argparse.ArgumentParser) -> None:
    """--decks, --ungated, --cut-policy: how the table is set up (spec: `station replay`)."""
    parser.add_argument(
        "--decks", type=positive_int, default=8, help="52-card decks in the shoe (default 8)"
    )
    parser.add_argument(
        "--ungated", action="store_true", help="cards may be dealt without close_bets (gating off)"
    )
    parser.add_argument(
        "--cut-policy",
        choices=CUT_POLICIES,
        default="one_more",
        help="what the cut card does mid-round (default one_more)",
    )


def table_from_args(args: argparse.Namespace) -> Table:
    return Table(decks=args.decks, gated=not args.ungated, cut_policy=args.cut_policy)
