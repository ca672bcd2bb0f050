"""`station simulate`: a seeded virtual shoe and dealer, written as replay JSON Lines.

`station simulate --faults all=0.05 | station replay` is the file-based
hardware-in-the-loop rig: each event carries `expect`, the error the station must give.
`--game chemin_de_fer|baccarat_banque` deals a cercle game (its decks, burn and cut
policy unless given), recording each option's decision as a `decision` event. The first
line says the table dealt (`journal.table`, as an export's first line does), so `station
replay` and `station protect` play the stream at its own table without `--game`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from station.commands.options import (
    EXIT_OK,
    EXIT_USAGE,
    add_game_options,
    add_table_options,
    positive_int,
    resolve_table_options,
)

BATCH = 4096  # events per write: one syscall per batch keeps 100k-event streams fast
#: `--gather`: `drivers.sim.shuffles.GATHERINGS` (spelled here: the simulator loads lazily).
GATHER_ORDERS = ("dealt", "reversed", "banker-first", "player-first", "scrambled")


def _cut_depth(text: str) -> int | float:
    from drivers.sim.shoe import parse_cut_depth

    try:
        return parse_cut_depth(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _shuffle_model(text: str) -> str:
    from drivers.sim.shuffles import parse_model

    try:
        parse_model(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _option_draw(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"must be a chance from 0 to 1, got {text}")
    return value


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "simulate",
        help="deal simulated shoes (optionally with faults) as replay events",
        description="Shuffle virtual shoes from a seed and deal them by the rules, writing "
        "the events as JSON Lines for `station replay`. Same arguments, same output. "
        "Each event says who acted (`actor`); an injected fault is named on the event "
        "that commits it (`fault`), with the error the station must give (`expect`).",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the shuffles and faults (default 0)"
    )
    add_table_options(p)
    add_game_options(p)
    p.add_argument(
        "--option-draw",
        type=_option_draw,
        default=0.5,
        metavar="P",
        help="the chance that a hand with an option (chemin de fer, baccarat banque) draws; "
        "seeded (default 0.5)",
    )
    p.add_argument(
        "--shoes", type=positive_int, default=1, metavar="N", help="shoes to deal (default 1)"
    )
    p.add_argument(
        "--cut-depth",
        type=_cut_depth,
        default=None,
        metavar="CARDS_OR_FRACTION",
        help="cards behind the cut card (e.g. 16), or that fraction of the shoe (e.g. 0.25); "
        "at least 16 cards (default 16)",
    )
    p.add_argument(
        "--shuffle",
        type=_shuffle_model,
        default=None,
        metavar="MODEL",
        help="shuffle each shoe after the first from the previous shoe's discards by MODEL: "
        "uniform, none, riffle:N (1-16 riffles), strip[:N], box[:N], stack[:N] (the stack "
        "shuffle of a shoe in piles, N passes), or steps joined by + (e.g. "
        "stack:2+strip+riffle:1); a weak shuffle for `station protect` to catch (default: "
        "every shoe new decks shuffled fairly)",
    )
    p.add_argument(
        "--gather",
        choices=GATHER_ORDERS,
        default="dealt",
        help="with --shuffle: how each round's cards reach the discard rack: dealt (in dealt "
        "order), reversed (each round reversed), banker-first, player-first (hand by hand), "
        "scrambled (each round in a random order) (default: dealt)",
    )
    p.add_argument(
        "--faults",
        default=None,
        metavar="SPEC",
        help="faults to inject: NAME=RATE[,NAME=RATE...] or all=RATE, rates in 0..1 per "
        "chance; names: extra_third, missing_third, short_burn, over_burn, early_card "
        "(these five gated only; short_burn and over_burn need a burn), unreadable, "
        "foreign, while_suspended, disconnect, decision_missing, refused_decision (these "
        "two in the games with options) (default: none)",
    )
    p.add_argument(
        "--rounds",
        type=positive_int,
        default=None,
        metavar="N",
        help="at most N rounds per shoe; the supervisor then ends the shoe (end_shoe) "
        "(default: no limit, deal to the cut card)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import orjson

    from drivers.sim.faults import FaultSpecError, parse_faults
    from drivers.sim.shoe import DEFAULT_CUT_DEPTH
    from drivers.sim.shuffles import simulate_shuffled
    from drivers.sim.stream import simulate

    if not resolve_table_options(args, "simulate"):  # the game's defaults for the rest
        return EXIT_USAGE
    game = args.game or "punto_banco"
    gated = not args.ungated
    try:
        faults = (
            parse_faults(args.faults, gated, game, args.burn) if args.faults is not None else {}
        )
        options = {
            "decks": args.decks,
            "shoes": args.shoes,
            "cut_depth": DEFAULT_CUT_DEPTH if args.cut_depth is None else args.cut_depth,
            "faults": faults,
            "gated": gated,
            "cut_policy": args.cut_policy,
            "rounds": args.rounds,
            "game": game,
            "burn": args.burn,
            "option_draw": args.option_draw,
        }
        if args.shuffle is None:
            events = simulate(args.seed, **options)
        else:  # each next shoe from the last one's discards, gathered and shuffled
            events = simulate_shuffled(args.seed, args.shuffle, args.gather, **options)
    except FaultSpecError as exc:
        print(f"station simulate: --faults: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        print(f"station simulate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    # The first line says the table dealt, as an export's does (`journal.table`): `station
    # replay` and `station protect` then play the stream at it without being told.
    table = {
        "game": game,
        "decks": args.decks,
        "gated": gated,
        "cut_policy": args.cut_policy,
        "burn": args.burn,
    }
    out = sys.stdout.buffer
    dumps = orjson.dumps
    batch: list[bytes] = []
    try:
        for n, event in enumerate(events):
            if n == 0:
                event = {**event, "journal": {"table": table}}
            batch.append(dumps(event))
            if len(batch) >= BATCH:
                batch.append(b"")
                out.write(b"\n".join(batch))
                batch.clear()
        batch.append(b"")
        out.write(b"\n".join(batch))
        out.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, and keep Python from
        # complaining when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK
