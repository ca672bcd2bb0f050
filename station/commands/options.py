"""Argument types and option groups shared by several subcommands."""

from __future__ import annotations

import argparse

from station.commands.common import load_config
from station.core.games import BURNS, CUT_POLICIES, GAME_NAMES, GAMES
from station.core.paytables import GAME_PAYTABLES
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
    """--config, --game, --decks, --ungated, --burn, --cut-policy: how the table is set up.

    A flag given on the command line wins; otherwise the `[table]` section of --config;
    otherwise the game's defaults (punto banco: 8 decks, burn reveal, one_more; the cercle
    games: 6 decks, no burn, stop). Call `resolve_table_options` before using them.
    """
    parser.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help="take the [table] settings (game, decks, gated, burn, cut_policy, paytable) "
        "from the station's TOML config (default: none, the defaults below)",
    )
    parser.add_argument(
        "--game",
        choices=GAME_NAMES,
        default=None,
        help="the game dealt; decks, burn, cut policy and paytable not given are its own "
        "(default: [table] game of --config, else punto_banco)",
    )
    parser.add_argument(
        "--decks",
        type=positive_int,
        default=None,
        metavar="N",
        help="52-card decks in the shoe (default: [table] decks of --config, else the "
        "game's: 8 punto banco, 6 chemin de fer and baccarat banque)",
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
        "--burn",
        choices=BURNS,
        default=None,
        help="reveal (the shoe's first card says how many to burn) or none (default: "
        "[table] burn of --config, else the game's: reveal punto banco, none the others)",
    )
    parser.add_argument(
        "--cut-policy",
        choices=CUT_POLICIES,
        default=None,
        help="when the cut card comes out mid-round: one_more (one more round after it), "
        "last_round (that round is the last) or stop (that round, if any, is the last) "
        "(default: [table] cut_policy of --config, else the game's: one_more punto banco, "
        "stop the others)",
    )


def resolve_table_options(args: argparse.Namespace, prog: str) -> bool:
    """Fill the table options not given on the command line from --config, then from the
    game's defaults. False (after saying why on stderr) when the config cannot be used.
    A command with `--paytable` gets `[table] paytable` the same way. A `--game` other than
    the config's takes that game's defaults, not the config's settings for its own game
    (except gated, which every game has alike)."""
    game = args.game or "punto_banco"
    gated = True
    if args.config is not None:
        config = load_config(args, prog)
        if config is None:
            return False
        gated = config.table.gated
        if args.game is None or args.game == config.table.game:
            game = config.table.game
            defaults = {
                "decks": config.table.decks,
                "burn": config.table.burn,
                "cut_policy": config.table.cut_policy,
                "paytable": config.table.paytable,
            }
        else:
            defaults = _game_defaults(args.game)
    else:
        defaults = _game_defaults(game)
    args.game = game
    if getattr(args, "paytable", "") is None:
        args.paytable = defaults["paytable"]
    for key in ("decks", "burn", "cut_policy"):
        if getattr(args, key) is None:
            setattr(args, key, defaults[key])
    if args.ungated is None:
        args.ungated = not gated
    return True


def _game_defaults(name: str) -> dict[str, object]:
    game = GAMES[name]
    return {
        "decks": game.decks,
        "burn": game.burn,
        "cut_policy": game.cut_policy,
        "paytable": GAME_PAYTABLES[name],
    }


def table_from_args(args: argparse.Namespace) -> Table:
    return Table(
        game=args.game,
        decks=args.decks,
        gated=not args.ungated,
        cut_policy=args.cut_policy,
        burn=args.burn,
    )
