"""`station simulate`: a seeded virtual shoe and dealer, written as replay JSON Lines.

`station simulate --faults all=0.05 | station replay` is the file-based
hardware-in-the-loop rig: each event carries `expect`, the error the station must give.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from station.commands.options import (
    EXIT_OK,
    EXIT_USAGE,
    add_table_options,
    positive_int,
    resolve_table_options,
)

BATCH = 4096  # events per write: one syscall per batch keeps 100k-event streams fast


def _cut_depth(text: str) -> int | float:
    from drivers.sim.shoe import parse_cut_depth

    try:
        return parse_cut_depth(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
        "--faults",
        default=None,
        metavar="SPEC",
        help="faults to inject: NAME=RATE[,NAME=RATE...] or all=RATE, rates in 0..1 per "
        "chance; names: extra_third, missing_third, short_burn, over_burn, early_card "
        "(these five gated only), unreadable, foreign, while_suspended, disconnect "
        "(default: none)",
    )
    p.add_argument(
        "--rounds",
        type=positive_int,
        default=None,
        help="at most N rounds per shoe; the supervisor then ends the shoe (end_shoe) "
        "(default: no limit, deal to the cut card)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import orjson

    from drivers.sim.dealer import FaultSpecError, parse_faults, simulate
    from drivers.sim.shoe import DEFAULT_CUT_DEPTH

    if not resolve_table_options(args, "simulate"):
        return EXIT_USAGE
    gated = not args.ungated
    try:
        faults = parse_faults(args.faults, gated) if args.faults is not None else {}
        events = simulate(
            args.seed,
            decks=args.decks,
            shoes=args.shoes,
            cut_depth=DEFAULT_CUT_DEPTH if args.cut_depth is None else args.cut_depth,
            faults=faults,
            gated=gated,
            cut_policy=args.cut_policy,
            rounds=args.rounds,
        )
    except FaultSpecError as exc:
        print(f"station simulate: --faults: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        print(f"station simulate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    out = sys.stdout.buffer
    dumps = orjson.dumps
    batch: list[bytes] = []
    try:
        for event in events:
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
