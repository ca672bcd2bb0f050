"""Argument types and option groups shared by several subcommands."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from station.commands.common import load_config
from station.core.games import BURNS, CUT_POLICIES, GAME_NAMES, game_defaults

if TYPE_CHECKING:
    from station.core.table import Table

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


def fraction(text: str) -> float:
    """A number from 0 to 1 (a confidence threshold)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {text}")
    return value


def add_table_options(parser: argparse.ArgumentParser) -> None:
    """--config, --decks, --ungated, --cut-policy: how the table is set up.

    A flag given on the command line wins; otherwise the `[table]` section of --config;
    otherwise the spec's defaults (8 decks, gated, one_more). Call `resolve_table_options`
    before using them.
    """
    parser.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help="take the [table] settings (game, decks, gated, burn, cut_policy, paytable) "
        "from the station's TOML config (default: none, the defaults below)",
    )
    parser.add_argument(
        "--decks",
        type=positive_int,
        default=None,
        metavar="N",
        help="52-card decks in the shoe (default: [table] decks of --config, else the "
        "game's: 8 for punto banco, 6 for the cercle games)",
    )
    parser.add_argument(
        "--ungated",
        action="store_const",
        const=True,
        default=None,
        help="cards may be dealt without close_bets (gating off) (default: [table] gated "
        "of --config, else gated)",
    )
    parser.add_argument(
        "--cut-policy",
        choices=CUT_POLICIES,
        default=None,
        help="when the cut card comes out mid-round: one_more (one more round after it), "
        "last_round (that round is the last) or stop (the round in progress is the last; "
        "between rounds the shoe ends at once) (default: [table] cut_policy of --config, "
        "else the game's: one_more for punto banco, stop for the cercle games)",
    )


def add_game_options(parser: argparse.ArgumentParser) -> None:
    """--game and --burn (after `add_table_options`): the game the table plays and its
    burn; --decks, --cut-policy and --burn default to the game's (shared/spec/games.md)."""
    parser.add_argument(
        "--game",
        choices=GAME_NAMES,
        default=None,
        help="the game the table plays (default: [table] game of --config, else "
        "punto_banco); it sets the defaults of --decks, --burn and --cut-policy (and of "
        "--paytable, where the command has one)",
    )
    parser.add_argument(
        "--burn",
        choices=BURNS,
        default=None,
        help="reveal (the first card says how many to burn) or none (rounds start at once) "
        "(default: [table] burn of --config, else the game's: reveal for punto banco, none "
        "for the cercle games)",
    )


def resolve_table_options(args: argparse.Namespace, prog: str) -> bool:
    """Fill the table options not given on the command line from --config, then from the
    game's defaults (punto banco for a command without `--game`). False (after saying why
    on stderr) when the config cannot be used. A command with `--paytable` gets `[table]
    paytable` the same way. A `--game` other than the config's takes that game's defaults
    (decks, burn, cut policy, paytable), not the config's settings for its own game;
    gated, which every game has alike, still comes from the config."""
    chosen = getattr(args, "game", None)
    game, gated = chosen or "punto_banco", True
    if args.config is not None:
        config = load_config(args, prog)
        if config is None:
            return False
        gated = config.table.gated
        if chosen is None or chosen == config.table.game:
            game = config.table.game
            defaults: dict[str, int | str] = {
                "decks": config.table.decks,
                "burn": config.table.burn,
                "cut_policy": config.table.cut_policy,
                "paytable": config.table.paytable,
            }
        else:
            defaults = game_defaults(chosen)
    else:
        defaults = game_defaults(game)
    if hasattr(args, "game"):
        args.game = game
        if args.burn is None:
            args.burn = defaults["burn"]
    if getattr(args, "paytable", "") is None:
        args.paytable = defaults["paytable"]
    if args.decks is None:
        args.decks = defaults["decks"]
    if args.cut_policy is None:
        args.cut_policy = defaults["cut_policy"]
    if args.ungated is None:
        args.ungated = not gated
    return True


def table_from_args(args: argparse.Namespace) -> Table:
    """The table the options set up (a command without `--game` plays punto banco)."""
    from station.core.table import Table

    return Table(
        game=getattr(args, "game", None) or "punto_banco",
        decks=args.decks,
        gated=not args.ungated,
        cut_policy=args.cut_policy,
        burn=getattr(args, "burn", None),
    )
